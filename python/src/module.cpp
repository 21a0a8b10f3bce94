//===- module.cpp - tcc._tcc: the C API of libtcc_runtime for Python -------===//
//
// A thin nanobind layer over tcc.hpp (the C API's C++ wrapper): artifacts,
// sessions, the trainer and the evaluator, with tensors passed as buffers (NumPy arrays, anything with
// DLPack or the buffer protocol) whose memory is read or written in place,
// never copied on the way. python/tcc/__init__.py builds the Pythonic API (dicts of arrays,
// keyword options) on top; the trainer's keywords are the rows of
// <tcc/trainer_options.def> (trainer_options() lists them). A failing call
// raises tcc.Error carrying the runtime's message and its status name; long
// calls (run, train) release the GIL.
//
//===----------------------------------------------------------------------===//

#include <tcc/tcc.hpp>

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

using tcc::check; // throws tcc::Error, raised in Python as tcc.Error

/// Input buffers: read-only, C-contiguous, on the CPU, of any dtype.
using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
/// Output buffers: writable, C-contiguous, on the CPU.
using OutArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

size_t byteSize(const InArray &a) { return a.size() * a.itemsize(); }

/// A loaded artifact: tcc::Artifact, with its tables as Python values.
class Artifact {
public:
  explicit Artifact(const std::string &path) : impl_(path) {}
  tcc_artifact_t get() const { return impl_.get(); }

  nb::dict info() const {
    tcc_artifact_info i = impl_.info();
    nb::dict d;
    d["path"] = i.path;
    d["abi_version"] = i.abi_version;
    d["fingerprint"] = i.fingerprint;
    d["producer"] = i.producer;
    d["target"] = i.target;
    d["arena_size"] = i.arena_size;
    d["state_size"] = i.state_size;
    d["device"] = impl_.device();
    return d;
  }

  /// (name, role, dtype code, shape, size in bytes) of every tensor.
  std::vector<std::tuple<std::string, int, int, std::vector<int64_t>, size_t>> tensors() const {
    std::vector<std::tuple<std::string, int, int, std::vector<int64_t>, size_t>> out;
    for (const tcc::TensorInfo &t : impl_.tensors())
      out.emplace_back(t.name, int(t.role), int(t.dtype), t.shape, t.sizeBytes);
    return out;
  }

  /// entry name -> the indices of its tensors.
  std::map<std::string, std::vector<int32_t>> entries() const {
    int32_t count = 0;
    check(tcc_artifact_num_entries(get(), &count));
    std::map<std::string, std::vector<int32_t>> out;
    for (int32_t i = 0; i < count; ++i) {
      tcc_entry_info e;
      check(tcc_artifact_entry_info(get(), i, &e));
      out[e.name] = std::vector<int32_t>(e.tensor_indices, e.tensor_indices + e.num_tensors);
    }
    return out;
  }

  std::optional<std::string> metadata(const std::string &key) const {
    return impl_.metadata(key);
  }
  const tcc::Artifact &getArtifact() const { return impl_; }

private:
  tcc::Artifact impl_;
};

/// A session: tcc::Session, with buffers of any dtype in and out.
class Session {
public:
  Session(const Artifact &artifact, int threads, bool poison, bool skipDefaultParams)
      : impl_(artifact.getArtifact(), options(threads, poison, skipDefaultParams)) {}
  tcc_session_t get() const { return impl_.get(); }
  tcc::Session &impl() { return impl_; }

  void setInput(const std::string &name, int dtype, const std::vector<int64_t> &shape,
                const InArray &data) {
    check(tcc_session_set_input(get(), name.c_str(), tcc_dtype(dtype), int32_t(shape.size()),
                                shape.data(), data.data(), byteSize(data)));
  }
  void setParam(const std::string &name, int dtype, const std::vector<int64_t> &shape,
                const InArray &data) {
    check(tcc_session_set_param(get(), name.c_str(), tcc_dtype(dtype), int32_t(shape.size()),
                                shape.data(), data.data(), byteSize(data)));
  }
  void run(const std::string &entry) {
    nb::gil_scoped_release released;
    impl_.run(entry);
  }
  void copyOutput(const std::string &name, OutArray out) {
    check(tcc_session_copy_output(get(), name.c_str(), out.data(), out.size() * out.itemsize()));
  }
  std::vector<int64_t> outputShape(const std::string &name) { return impl_.outputShape(name); }
  void getParam(const std::string &name, OutArray out) {
    check(tcc_session_get_param(get(), name.c_str(), out.data(), out.size() * out.itemsize()));
  }
  void saveParams(const std::string &path) { impl_.saveParams(path); }
  void loadParams(const std::string &path) { impl_.loadParams(path); }
  void saveCheckpoint(const std::string &path, const std::map<std::string, std::string> &meta) {
    impl_.saveCheckpoint(path, meta);
  }
  void loadCheckpoint(const std::string &path) { impl_.loadCheckpoint(path); }

private:
  static tcc_session_options options(int threads, bool poison, bool skipDefaultParams) {
    tcc_session_options o = tcc::sessionOptions();
    o.num_threads = threads;
    o.poison_arena = poison;
    o.skip_default_params = skipDefaultParams;
    return o;
  }
  tcc::Session impl_;
};

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
    tcc_trainer_options o = tcc::trainerOptions();
    // Every row of the table by its name; absent or None keeps the default.
    strings_.reserve(64);
#define TCC_TRAINER_OPTION(NAME, TYPE, KIND, FLAG, ARG, DEFAULT, RANGE, HELP)                    \
  if (options.contains(#NAME) && !options[#NAME].is_none())                                     \
    set(o.NAME, options[#NAME]);
#include <tcc/trainer_options.def>
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
    impl_.emplace(nb::cast<Artifact &>(artifact).getArtifact(), o);
  }
  /// Destroys the C trainer now (its checkpoint folder's lock with it),
  /// whoever still holds this object: a traceback keeps it alive.
  void close() { impl_.reset(); }
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;

  void run(Session &session) {
    std::optional<tcc::Error> failed;
    {
      nb::gil_scoped_release released;
      try {
        impl_->run(session.impl());
      } catch (const tcc::Error &e) {
        failed = e;
      }
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
    if (failed)
      throw *failed;
  }
  void requestStop() { impl_->requestStop(); }
  int64_t stepsDone() const { return impl_->stepsDone(); }

private:
  /// An option's value from Python, converted to its C field's type; the
  /// strings are kept in strings_.
  void set(const char *&field, nb::handle value) {
    strings_.push_back(nb::cast<std::string>(value));
    field = strings_.back().c_str();
  }
  void set(int64_t &field, nb::handle value) { field = nb::cast<int64_t>(value); }
  void set(uint64_t &field, nb::handle value) { field = nb::cast<uint64_t>(value); }
  void set(double &field, nb::handle value) { field = nb::cast<double>(value); }
  void set(int32_t &field, nb::handle value) {
    // A switch (shuffle, flip, overwrite) takes any truth value.
    field = PyBool_Check(value.ptr()) ? int32_t(value.ptr() == Py_True)
                                      : int32_t(nb::cast<int64_t>(value));
  }

  nb::object artifact_, log_, onStep_, communicator_, source_;
  std::vector<std::string> strings_; // reserved: pointers into it stay valid
  ArrayList data_, val_, batch_;
  std::unique_ptr<nb::python_error> callbackError_;
  std::string sourceError_;
  std::optional<tcc::Trainer> impl_;
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
    impl_.emplace(nb::cast<Artifact &>(artifact).getArtifact(), o);
  }
  /// Closes the files now, whoever still holds this object.
  void close() { impl_.reset(); }

  /// samples, skipped, and loss / accuracy, correct, counted where measured.
  nb::dict run(Session &session) {
    tcc_evaluation e;
    {
      nb::gil_scoped_release released;
      e = impl_->run(session.impl());
    }
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
  std::optional<tcc::Evaluator> impl_;
};

/// A default as Python has it: None for an absent string and a NaN (the
/// artifact's value), a bool for a switch.
nb::object pythonValue(const char *v, const char *) {
  return v ? nb::object(nb::str(v)) : nb::none();
}
nb::object pythonValue(int64_t v, const char *) { return nb::int_(v); }
nb::object pythonValue(uint64_t v, const char *) { return nb::int_(v); }
nb::object pythonValue(double v, const char *) {
  return std::isnan(v) ? nb::none() : nb::object(nb::float_(v));
}
nb::object pythonValue(int32_t v, const char *kind) {
  std::string k = kind;
  return k == "Switch" || k == "NoSwitch" ? nb::object(nb::bool_(v != 0)) : nb::object(nb::int_(v));
}

/// The rows of trainer_options.def: (name, kind, flag, arg, default, range,
/// help), the default as tcc_trainer_options_init sets it.
nb::list trainerOptionRows() {
  tcc_trainer_options d = tcc::trainerOptions();
  nb::list out;
#define TCC_TRAINER_OPTION(NAME, TYPE, KIND, FLAG, ARG, DEFAULT, RANGE, HELP)                    \
  out.append(nb::make_tuple(#NAME, #KIND, FLAG, ARG, pythonValue(d.NAME, #KIND), RANGE, HELP));
#include <tcc/trainer_options.def>
  return out;
}

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
    } catch (const tcc::Error &e) {
      nb::object error = nb::borrow(errorType)(e.what());
      error.attr("status") = tcc_status_string(e.status());
      PyErr_SetObject(errorType, error.ptr());
    }
  });
  m.def("runtime_version", [] { return std::string(tcc_runtime_version()); });
  m.def("trainer_options", &trainerOptionRows,
        "The trainer's options, the rows of trainer_options.def: (name, kind, flag, arg, "
        "default, range, help).");

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
      .def("save_params", &Session::saveParams)
      .def("load_params", &Session::loadParams)
      .def("save_checkpoint", &Session::saveCheckpoint, nb::arg("path"), nb::arg("metadata"))
      .def("load_checkpoint", &Session::loadCheckpoint);

  m.def("checkpoint_metadata", &tcc::checkpointMetadata, nb::arg("path"), nb::arg("key"));

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
