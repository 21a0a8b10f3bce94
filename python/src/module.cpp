//===- module.cpp - tcc._tcc: the C API of libtcc_runtime for Python -------===//
//
// A thin nanobind layer over tcc.h: artifacts, sessions, the trainer and the
// evaluator, with tensors passed as buffers (NumPy arrays, anything with
// DLPack or the buffer protocol) whose memory is read or written in place,
// never copied on the way. python/tcc/__init__.py builds the Pythonic API (dicts of arrays,
// keyword options) on top. A failing call raises tcc.Error carrying the
// runtime's message and its status name; long calls (run, train) release
// the GIL.
//
//===----------------------------------------------------------------------===//

#include <tcc/tcc.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

/// tcc.Error, created at import (a RuntimeError with a `status` attribute).
PyObject *errorType = nullptr;

/// A failed call, raised in Python as tcc.Error(message) with .status.
struct Failure {
  tcc_status status;
  std::string message;
};

void check(tcc_status status) {
  if (status != TCC_OK)
    throw Failure{status, tcc_last_error()};
}

/// Input buffers: read-only, C-contiguous, on the CPU, of any dtype.
using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
/// Output buffers: writable, C-contiguous, on the CPU.
using OutArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

size_t byteSize(const InArray &a) { return a.size() * a.itemsize(); }

class Artifact {
public:
  explicit Artifact(const std::string &path) { check(tcc_artifact_load(path.c_str(), &handle_)); }
  ~Artifact() { tcc_artifact_destroy(handle_); }
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;
  tcc_artifact_t get() const { return handle_; }

  nb::dict info() const {
    tcc_artifact_info i;
    check(tcc_artifact_get_info(handle_, &i));
    nb::dict d;
    d["path"] = i.path;
    d["abi_version"] = i.abi_version;
    d["fingerprint"] = i.fingerprint;
    d["producer"] = i.producer;
    d["target"] = i.target;
    d["arena_size"] = i.arena_size;
    d["state_size"] = i.state_size;
    const char *device = nullptr;
    check(tcc_artifact_get_device(handle_, &device));
    d["device"] = device;
    return d;
  }

  /// (name, role, dtype code, shape, size in bytes) of every tensor.
  std::vector<std::tuple<std::string, int, int, std::vector<int64_t>, size_t>> tensors() const {
    int32_t count = 0;
    check(tcc_artifact_num_tensors(handle_, &count));
    std::vector<std::tuple<std::string, int, int, std::vector<int64_t>, size_t>> out;
    for (int32_t i = 0; i < count; ++i) {
      tcc_tensor_info t;
      check(tcc_artifact_tensor_info(handle_, i, &t));
      out.emplace_back(t.name, int(t.role), int(t.dtype),
                       std::vector<int64_t>(t.shape, t.shape + t.rank), t.size_bytes);
    }
    return out;
  }

  /// entry name -> the indices of its tensors.
  std::map<std::string, std::vector<int32_t>> entries() const {
    int32_t count = 0;
    check(tcc_artifact_num_entries(handle_, &count));
    std::map<std::string, std::vector<int32_t>> out;
    for (int32_t i = 0; i < count; ++i) {
      tcc_entry_info e;
      check(tcc_artifact_entry_info(handle_, i, &e));
      out[e.name] = std::vector<int32_t>(e.tensor_indices, e.tensor_indices + e.num_tensors);
    }
    return out;
  }

  std::optional<std::string> metadata(const std::string &key) const {
    const char *value = nullptr;
    tcc_status s = tcc_artifact_get_metadata(handle_, key.c_str(), &value);
    if (s == TCC_ERROR_NOT_FOUND)
      return std::nullopt;
    check(s);
    return std::string(value);
  }

private:
  tcc_artifact_t handle_ = nullptr;
};

class Session {
public:
  Session(const Artifact &artifact, int threads, bool poison, bool skipDefaultParams) {
    tcc_session_options o;
    tcc_session_options_init(&o);
    o.num_threads = threads;
    o.poison_arena = poison;
    o.skip_default_params = skipDefaultParams;
    check(tcc_session_create(artifact.get(), &o, &handle_));
  }
  ~Session() { tcc_session_destroy(handle_); }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  tcc_session_t get() const { return handle_; }

  void setInput(const std::string &name, int dtype, const std::vector<int64_t> &shape,
                const InArray &data) {
    check(tcc_session_set_input(handle_, name.c_str(), tcc_dtype(dtype), int32_t(shape.size()),
                                shape.data(), data.data(), byteSize(data)));
  }
  void setParam(const std::string &name, int dtype, const std::vector<int64_t> &shape,
                const InArray &data) {
    check(tcc_session_set_param(handle_, name.c_str(), tcc_dtype(dtype), int32_t(shape.size()),
                                shape.data(), data.data(), byteSize(data)));
  }
  void run(const std::string &entry) {
    tcc_status s;
    {
      nb::gil_scoped_release released;
      s = tcc_session_run(handle_, entry.c_str());
    }
    check(s);
  }
  void copyOutput(const std::string &name, OutArray out) {
    check(tcc_session_copy_output(handle_, name.c_str(), out.data(), out.size() * out.itemsize()));
  }
  std::vector<int64_t> outputShape(const std::string &name) {
    std::vector<int64_t> shape(16);
    int32_t rank = 0;
    check(tcc_session_get_output_shape(handle_, name.c_str(), int32_t(shape.size()), shape.data(),
                                       &rank));
    shape.resize(size_t(rank));
    return shape;
  }
  void getParam(const std::string &name, OutArray out) {
    check(tcc_session_get_param(handle_, name.c_str(), out.data(), out.size() * out.itemsize()));
  }
  void saveCheckpoint(const std::string &path, const std::map<std::string, std::string> &meta) {
    std::vector<const char *> keys, values;
    for (const auto &[k, v] : meta) {
      keys.push_back(k.c_str());
      values.push_back(v.c_str());
    }
    check(tcc_session_save_checkpoint(handle_, path.c_str(), int32_t(keys.size()), keys.data(),
                                      values.data()));
  }

private:
  tcc_session_t handle_ = nullptr;
};

std::optional<std::string> checkpointMetadata(const std::string &path, const std::string &key) {
  std::vector<char> buffer(1 << 16);
  tcc_status s = tcc_checkpoint_get_metadata(path.c_str(), key.c_str(), buffer.data(), buffer.size());
  if (s == TCC_ERROR_NOT_FOUND)
    return std::nullopt;
  check(s);
  return std::string(buffer.data());
}

/// The job this process belongs to (tcc_communicator_create): a world of
/// one unless launched by mpirun / srun with several processes.
class Communicator {
public:
  explicit Communicator(double timeoutSeconds) {
    tcc_communicator_options o;
    tcc_communicator_options_init(&o);
    o.timeout_seconds = timeoutSeconds;
    check(tcc_communicator_create(&o, &handle_));
    check(tcc_communicator_get_info(handle_, &rank_, &size_, &localRank_));
  }
  ~Communicator() { tcc_communicator_destroy(handle_); }
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;
  tcc_communicator_t get() const { return handle_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int localRank() const { return localRank_; }
  std::vector<double> sum(std::vector<double> values) {
    nb::gil_scoped_release released;
    check(tcc_communicator_sum(handle_, values.data(), int64_t(values.size())));
    return values;
  }

private:
  tcc_communicator_t handle_ = nullptr;
  int32_t rank_ = 0, size_ = 1, localRank_ = 0;
};

/// (name, dtype code, array) triples as tcc_trainer_arrays, with what they
/// point to kept alive: the arrays (Python references), names and shapes.
class ArrayList {
public:
  void take(nb::handle list) {
    for (nb::handle item : list) {
      auto [name, dtype, array] = nb::cast<std::tuple<std::string, int, InArray>>(item);
      names_.push_back(std::make_unique<std::string>(name));
      shapes_.push_back(std::make_unique<std::vector<int64_t>>());
      for (size_t d = 0; d < array.ndim(); ++d)
        shapes_.back()->push_back(int64_t(array.shape(d)));
      keep_.push_back(array);
      arrays_.push_back({names_.back()->c_str(), tcc_dtype(dtype),
                         int32_t(shapes_.back()->size()), shapes_.back()->data(), array.data(),
                         byteSize(array)});
    }
  }
  /// Drops the arrays (the GIL held: they are Python references).
  void clear() {
    arrays_.clear();
    keep_.clear();
    shapes_.clear();
    names_.clear();
  }
  const tcc_trainer_array *data() const { return arrays_.data(); }
  int32_t size() const { return int32_t(arrays_.size()); }

private:
  std::vector<std::unique_ptr<std::string>> names_;
  std::vector<std::unique_ptr<std::vector<int64_t>>> shapes_;
  std::vector<InArray> keep_;
  std::vector<tcc_trainer_array> arrays_;
};

/// A training run. Keeps what the C trainer borrows alive: the artifact
/// (a Python reference), the data arrays and their names and shapes, and
/// the batch a data source gave last.
class Trainer {
public:
  Trainer(nb::object artifact, nb::dict options, nb::list data, nb::list val,
          nb::object log, nb::object onStep, nb::object communicator, nb::object source)
      : artifact_(artifact), log_(log), onStep_(onStep), communicator_(communicator),
        source_(source) {
    tcc_trainer_options o;
    tcc_trainer_options_init(&o);
    strings_.reserve(16);
    auto text = [&](const char *key) -> const char * {
      if (!options.contains(key) || options[key].is_none())
        return nullptr;
      strings_.push_back(nb::cast<std::string>(options[key]));
      return strings_.back().c_str();
    };
    auto integer = [&](const char *key, int64_t fallback) {
      return options.contains(key) ? nb::cast<int64_t>(options[key]) : fallback;
    };
    auto real = [&](const char *key, double fallback) {
      return options.contains(key) ? nb::cast<double>(options[key]) : fallback;
    };
    o.data_dir = text("data_dir");
    o.val_dir = text("val_dir");
    o.metrics = text("metrics");
    o.save = text("save");
    o.lr_schedule = text("lr_schedule");
    o.checkpoint_dir = text("checkpoint_dir");
    o.resume = text("resume");
    o.tensorboard = text("tensorboard");
    o.trace = text("trace");
    o.on_nonfinite = text("on_nonfinite");
    o.steps = integer("steps", 0);
    o.epochs = integer("epochs", 0);
    o.lr = real("lr", 0);
    o.shuffle = int32_t(integer("shuffle", 1));
    o.seed = uint64_t(integer("seed", 0));
    o.log_every = integer("log_every", 1);
    o.warmup = integer("warmup", 0);
    o.step_size = integer("step_size", 0);
    o.cycle_steps = integer("cycle_steps", 0);
    o.plateau_patience = integer("plateau_patience", 10);
    o.min_lr = real("min_lr", 0);
    o.gamma = real("gamma", 0.1);
    o.save_every = integer("save_every", 0);
    o.overwrite = int32_t(integer("overwrite", 0));
    o.eval_every = integer("eval_every", 0);
    o.patience = integer("patience", 0);
    o.min_delta = real("min_delta", 0);
    // The hyperparameters: NaN keeps the artifact's compile-time values.
    o.weight_decay = real("weight_decay", NAN);
    o.momentum = real("momentum", NAN);
    o.beta1 = real("beta1", NAN);
    o.beta2 = real("beta2", NAN);
    o.eps = real("eps", NAN);
    o.grad_clip = real("grad_clip", NAN);
    o.workers = int32_t(integer("workers", 0));
    o.random_crop = int32_t(integer("random_crop", 0));
    o.flip = int32_t(integer("flip", 0));
    o.normalize = text("normalize");
    o.augment_input = text("augment_input");
    o.image_shape = text("image_shape");
    o.handle_signals = 0; // Python's own SIGINT handling stays in charge
    if (!communicator_.is_none())
      o.communicator = nb::cast<Communicator &>(communicator_).get();
    data_.take(data);
    val_.take(val);
    o.data = data_.data();
    o.num_data = data_.size();
    o.val = val_.data();
    o.num_val = val_.size();
    if (!source_.is_none()) {
      // An iterator of batches, each a list of (name, dtype code, array).
      o.next_batch = [](void *user, int64_t, const tcc_trainer_array **out,
                        int32_t *count) -> int {
        nb::gil_scoped_acquire gil;
        auto *self = static_cast<Trainer *>(user);
        try {
          self->batch_.clear();
          PyObject *item = PyIter_Next(self->source_.ptr());
          if (!item) {
            if (PyErr_Occurred())
              throw nb::python_error();
            return 0; // the iterator is exhausted
          }
          self->batch_.take(nb::steal(item));
          *out = self->batch_.data();
          *count = self->batch_.size();
          return 1;
        } catch (nb::python_error &e) {
          // Stop the run; run() raises the iterator's exception.
          self->callbackError_ = std::make_unique<nb::python_error>(std::move(e));
          return -1;
        } catch (const std::exception &e) {
          self->sourceError_ = e.what();
          return -1;
        }
      };
      o.next_batch_user = this;
    }
    // No log: the progress lines go nowhere (not to the process's stdout).
    o.log = [](void *, const char *) {};
    if (!log_.is_none()) {
      o.log = [](void *user, const char *line) {
        nb::gil_scoped_acquire gil;
        try {
          static_cast<Trainer *>(user)->log_(line);
        } catch (nb::python_error &e) {
          e.discard_as_unraisable("tcc.train log callback");
        }
      };
      o.log_user = this;
    }
    if (!onStep_.is_none()) {
      o.on_step = [](void *user, const tcc_trainer_step_info *info) -> int {
        nb::gil_scoped_acquire gil;
        auto *self = static_cast<Trainer *>(user);
        try {
          nb::dict d;
          d["step"] = info->step;
          d["loss"] = info->loss;
          d["lr"] = info->lr;
          if (!std::isnan(info->grad_norm))
            d["grad_norm"] = info->grad_norm;
          if (!std::isnan(info->val_loss))
            d["val_loss"] = info->val_loss;
          if (!std::isnan(info->val_accuracy))
            d["val_accuracy"] = info->val_accuracy;
          return nb::cast<bool>(self->onStep_(d)) ? 1 : 0;
        } catch (nb::python_error &e) {
          // Stop at this step; run() raises the callback's exception.
          self->callbackError_ = std::make_unique<nb::python_error>(std::move(e));
          return 1;
        }
      };
      o.on_step_user = this;
    }
    check(tcc_trainer_create(nb::cast<Artifact &>(artifact).get(), &o, &handle_));
  }
  ~Trainer() { tcc_trainer_destroy(handle_); }
  /// Destroys the C trainer now (its checkpoint folder's lock with it),
  /// whoever still holds this object: a traceback keeps it alive.
  void close() {
    tcc_trainer_destroy(handle_);
    handle_ = nullptr;
  }
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;

  void run(Session &session) {
    tcc_status s;
    {
      nb::gil_scoped_release released;
      s = tcc_trainer_run(handle_, session.get());
    }
    batch_.clear();
    if (callbackError_) {
      // Moved out, not copied: the error's traceback holds the frame that
      // holds this trainer, a cycle the garbage collector cannot see.
      std::unique_ptr<nb::python_error> error = std::move(callbackError_);
      throw std::move(*error);
    }
    if (!sourceError_.empty())
      throw nb::type_error(("tcc.train: a batch of the data: " + sourceError_).c_str());
    check(s);
  }
  void requestStop() { tcc_trainer_request_stop(handle_); }
  int64_t stepsDone() const {
    int64_t steps = 0;
    check(tcc_trainer_steps_done(handle_, &steps));
    return steps;
  }

private:
  nb::object artifact_, log_, onStep_, communicator_, source_;
  std::vector<std::string> strings_; // reserved: pointers into it stay valid
  ArrayList data_, val_, batch_;
  std::unique_ptr<nb::python_error> callbackError_;
  std::string sourceError_;
  tcc_trainer_t handle_ = nullptr;
};

/// An evaluator (tcc_evaluator_create): the data set opened and checked
/// once, evaluations of any session of the artifact.
class Evaluator {
public:
  Evaluator(nb::object artifact, std::optional<std::string> dataDir, nb::list data,
            std::optional<std::string> normalize, std::optional<std::string> augmentInput,
            std::optional<std::string> imageShape)
      : artifact_(artifact) {
    data_.take(data);
    tcc_evaluator_options o;
    tcc_evaluator_options_init(&o);
    o.data_dir = dataDir ? dataDir->c_str() : nullptr;
    o.data = data_.data();
    o.num_data = data_.size();
    o.normalize = normalize ? normalize->c_str() : nullptr;
    o.augment_input = augmentInput ? augmentInput->c_str() : nullptr;
    o.image_shape = imageShape ? imageShape->c_str() : nullptr;
    check(tcc_evaluator_create(nb::cast<Artifact &>(artifact).get(), &o, &handle_));
  }
  ~Evaluator() { tcc_evaluator_destroy(handle_); }
  Evaluator(const Evaluator &) = delete;
  Evaluator &operator=(const Evaluator &) = delete;
  /// Closes the files now, whoever still holds this object.
  void close() {
    tcc_evaluator_destroy(handle_);
    handle_ = nullptr;
  }

  /// samples, skipped, and loss / accuracy, correct, counted where measured.
  nb::dict run(Session &session) {
    tcc_evaluation e;
    tcc_status s;
    {
      nb::gil_scoped_release released;
      s = tcc_evaluator_run(handle_, session.get(), &e);
    }
    check(s);
    nb::dict d;
    d["samples"] = e.samples;
    d["skipped"] = e.skipped;
    if (e.has_loss)
      d["loss"] = e.loss;
    if (e.has_accuracy) {
      d["accuracy"] = e.accuracy;
      d["correct"] = e.correct;
      d["counted"] = e.counted;
    }
    return d;
  }

private:
  nb::object artifact_;
  ArrayList data_;
  tcc_evaluator_t handle_ = nullptr;
};

} // namespace

NB_MODULE(_tcc, m) {
  m.doc() = "The C API of libtcc_runtime (tcc.h); use the tcc package on top of it.";
  errorType = PyErr_NewExceptionWithDoc(
      "tcc.Error", "A failed runtime call: str() is the runtime's message, .status its code.",
      PyExc_RuntimeError, nullptr);
  m.attr("Error") = nb::handle(errorType);
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const Failure &f) {
      nb::object error = nb::borrow(errorType)(f.message);
      error.attr("status") = tcc_status_string(f.status);
      PyErr_SetObject(errorType, error.ptr());
    }
  });
  m.def("runtime_version", [] { return std::string(tcc_runtime_version()); });

  nb::class_<Artifact>(m, "Artifact", "A loaded artifact (tcc_artifact_load).")
      .def(nb::init<const std::string &>(), nb::arg("path"))
      .def("info", &Artifact::info)
      .def("tensors", &Artifact::tensors,
           "(name, role, dtype code, shape, size in bytes) of every tensor, in descriptor order.")
      .def("entries", &Artifact::entries, "entry point name -> indices of its tensors.")
      .def("metadata", &Artifact::metadata, nb::arg("key"));

  nb::class_<Session>(m, "Session", "A session: arena and parameters (tcc_session_create).")
      .def(nb::init<const Artifact &, int, bool, bool>(), nb::arg("artifact"), nb::arg("threads"),
           nb::arg("poison"), nb::arg("skip_default_params"), nb::keep_alive<1, 2>())
      .def("set_input", &Session::setInput, nb::arg("name"), nb::arg("dtype"), nb::arg("shape"),
           nb::arg("data"))
      .def("set_param", &Session::setParam, nb::arg("name"), nb::arg("dtype"), nb::arg("shape"),
           nb::arg("data"))
      .def("run", &Session::run, nb::arg("entry"))
      .def("copy_output", &Session::copyOutput, nb::arg("name"), nb::arg("out"))
      .def("output_shape", &Session::outputShape, nb::arg("name"),
           "The shape output NAME has after the last run (a partial batch's rows first).")
      .def("get_param", &Session::getParam, nb::arg("name"), nb::arg("out"))
      .def("save_params", [](Session &s, const std::string &p) {
        check(tcc_session_save_params(s.get(), p.c_str()));
      })
      .def("load_params", [](Session &s, const std::string &p) {
        check(tcc_session_load_params(s.get(), p.c_str()));
      })
      .def("save_checkpoint", &Session::saveCheckpoint, nb::arg("path"), nb::arg("metadata"))
      .def("load_checkpoint", [](Session &s, const std::string &p) {
        check(tcc_session_load_checkpoint(s.get(), p.c_str()));
      });

  m.def("checkpoint_metadata", &checkpointMetadata, nb::arg("path"), nb::arg("key"));

  nb::class_<Communicator>(m, "Communicator",
                           "The job this process belongs to (tcc_communicator_create).")
      .def(nb::init<double>(), nb::arg("timeout_seconds"))
      .def_prop_ro("rank", &Communicator::rank)
      .def_prop_ro("size", &Communicator::size)
      .def_prop_ro("local_rank", &Communicator::localRank)
      .def("sum", &Communicator::sum, nb::arg("values"),
           "The sums over the ranks of VALUES (collective: every rank calls it).");

  nb::class_<Trainer>(m, "Trainer", "A training run (tcc_trainer_create).")
      .def(nb::init<nb::object, nb::dict, nb::list, nb::list, nb::object, nb::object,
                    nb::object, nb::object>(),
           nb::arg("artifact"), nb::arg("options"), nb::arg("data"), nb::arg("val"),
           nb::arg("log").none(), nb::arg("on_step").none(), nb::arg("communicator").none(),
           nb::arg("source").none() = nb::none())
      .def("run", &Trainer::run, nb::arg("session"))
      .def("request_stop", &Trainer::requestStop)
      .def("steps_done", &Trainer::stepsDone)
      .def("close", &Trainer::close);

  nb::class_<Evaluator>(m, "Evaluator", "An opened, checked data set (tcc_evaluator_create).")
      .def(nb::init<nb::object, std::optional<std::string>, nb::list, std::optional<std::string>,
                    std::optional<std::string>, std::optional<std::string>>(),
           nb::arg("artifact"), nb::arg("data_dir").none(), nb::arg("data"),
           nb::arg("normalize").none(), nb::arg("augment_input").none(),
           nb::arg("image_shape").none())
      .def("run", &Evaluator::run, nb::arg("session"),
           "Evaluates SESSION on the whole data set (tcc_evaluator_run).")
      .def("close", &Evaluator::close);
}
