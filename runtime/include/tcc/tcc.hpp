//===- tcc.hpp - a header-only C++17 wrapper over the tcc C API -----------===//
//
// RAII handles, std::vector / pointer-and-size views and exceptions over
// <tcc/tcc.h>, for applications written in C++. Everything here is inline and
// calls only the C API, so an application links libtcc_runtime alone (CMake:
// tcc::runtime; pkg-config: tcc) and the runtime's ABI stays the C one.
//
//   tcc::Artifact artifact("model.so");
//   tcc::Session session(artifact);
//   std::vector<float> x(6, 1.0f);
//   session.setInput("x", x, {2, 3});
//   session.run("infer");
//   std::vector<float> y = session.output<float>("y");
//
// Errors: every failing C call throws tcc::Error, whose what() is the
// runtime's message (tcc_last_error) and status() its tcc_status. Threads and
// lifetimes are those of the C API (tcc.h): a Session is used by one thread at
// a time; a Session may outlive the Artifact it came from; a Trainer borrows
// its Session, which must outlive it.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_TCC_HPP
#define TCC_TCC_HPP

#include "tcc.h"

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tcc {

/// A failed C API call: the status and the runtime's message.
class Error : public std::runtime_error {
public:
  Error(tcc_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  tcc_status status() const noexcept { return status_; }

private:
  tcc_status status_;
};

/// Throws Error with the calling thread's last-error message unless STATUS is
/// TCC_OK.
inline void check(tcc_status status) {
  if (status != TCC_OK)
    throw Error(status, tcc_last_error());
}

/// The tcc_dtype of a C++ element type (float -> TCC_DTYPE_F32, ...).
template <typename T> constexpr tcc_dtype dtypeOf() {
  if constexpr (std::is_same_v<T, float>)
    return TCC_DTYPE_F32;
  else if constexpr (std::is_same_v<T, double>)
    return TCC_DTYPE_F64;
  else if constexpr (std::is_same_v<T, int64_t>)
    return TCC_DTYPE_I64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return TCC_DTYPE_I32;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return TCC_DTYPE_U8;
  else
    static_assert(sizeof(T) == 0, "no tcc_dtype for this element type");
}

/// A read-only view of COUNT elements at DATA (C++17 has no std::span).
template <typename T> struct Span {
  const T *data = nullptr;
  size_t size = 0;
  Span() = default;
  Span(const T *d, size_t n) : data(d), size(n) {}
  Span(const std::vector<T> &v) : data(v.data()), size(v.size()) {}
  template <size_t N> Span(const T (&a)[N]) : data(a), size(N) {}
  size_t bytes() const { return size * sizeof(T); }
};

/// One tensor of an artifact's descriptor, with its shape copied.
struct TensorInfo {
  std::string name;
  tcc_role role;
  tcc_dtype dtype;
  std::vector<int64_t> shape;
  size_t sizeBytes;
};

/// A loaded artifact (tcc_artifact_t); movable, not copyable.
class Artifact {
public:
  explicit Artifact(const std::string &path) { check(tcc_artifact_load(path.c_str(), &handle_)); }
  Artifact(Artifact &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Artifact &operator=(Artifact &&other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;
  ~Artifact() { tcc_artifact_destroy(handle_); }

  tcc_artifact_t get() const noexcept { return handle_; }

  tcc_artifact_info info() const {
    tcc_artifact_info out;
    check(tcc_artifact_get_info(handle_, &out));
    return out;
  }

  /// Every tensor, in descriptor order.
  std::vector<TensorInfo> tensors() const {
    int32_t count = 0;
    check(tcc_artifact_num_tensors(handle_, &count));
    std::vector<TensorInfo> out;
    for (int32_t i = 0; i < count; ++i)
      out.push_back(tensor(i));
    return out;
  }

  /// The tensors an entry point reads (inputs) and writes (outputs).
  std::vector<TensorInfo> entryTensors(const std::string &entry) const {
    int32_t index = 0;
    check(tcc_artifact_find_entry(handle_, entry.c_str(), &index));
    tcc_entry_info e;
    check(tcc_artifact_entry_info(handle_, index, &e));
    std::vector<TensorInfo> out;
    for (int32_t k = 0; k < e.num_tensors; ++k)
      out.push_back(tensor(e.tensor_indices[k]));
    return out;
  }

  /// Whether the artifact has the entry point NAME ("train_step", ...).
  bool hasEntry(const std::string &name) const {
    int32_t index = 0;
    tcc_status s = tcc_artifact_find_entry(handle_, name.c_str(), &index);
    if (s == TCC_ERROR_NOT_FOUND)
      return false;
    check(s);
    return true;
  }

  /// The metadata value KEY, or nothing when the artifact has none.
  std::optional<std::string> metadata(const std::string &key) const {
    const char *value = nullptr;
    tcc_status s = tcc_artifact_get_metadata(handle_, key.c_str(), &value);
    if (s == TCC_ERROR_NOT_FOUND)
      return std::nullopt;
    check(s);
    return std::string(value);
  }

  /// "cpu" or "cuda:sm_90".
  std::string device() const {
    const char *d = nullptr;
    check(tcc_artifact_get_device(handle_, &d));
    return d;
  }

private:
  TensorInfo tensor(int32_t index) const {
    tcc_tensor_info t;
    check(tcc_artifact_tensor_info(handle_, index, &t));
    return {t.name, t.role, t.dtype, std::vector<int64_t>(t.shape, t.shape + t.rank),
            t.size_bytes};
  }

  tcc_artifact_t handle_ = nullptr;
};

/// tcc_session_options with its defaults filled in.
inline tcc_session_options sessionOptions() {
  tcc_session_options o;
  tcc_session_options_init(&o);
  return o;
}

/// A session of an artifact (tcc_session_t): its arena and parameters.
class Session {
public:
  explicit Session(const Artifact &artifact, const tcc_session_options &options = sessionOptions()) {
    check(tcc_session_create(artifact.get(), &options, &handle_));
  }
  Session(Session &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Session &operator=(Session &&other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() { tcc_session_destroy(handle_); }

  tcc_session_t get() const noexcept { return handle_; }

  /// Sets input NAME from DATA with SHAPE (the declared one exactly).
  template <typename T>
  void setInput(const std::string &name, Span<T> data, const std::vector<int64_t> &shape) {
    check(tcc_session_set_input(handle_, name.c_str(), dtypeOf<T>(), int32_t(shape.size()),
                                shape.data(), data.data, data.bytes()));
  }
  template <typename T>
  void setInput(const std::string &name, const std::vector<T> &data,
                const std::vector<int64_t> &shape) {
    setInput(name, Span<T>(data), shape);
  }
  /// A 0-d input such as the learning rate: setScalar("lr", 0.05f).
  template <typename T> void setScalar(const std::string &name, T value) {
    check(tcc_session_set_input(handle_, name.c_str(), dtypeOf<T>(), 0, nullptr, &value,
                                sizeof value));
  }

  void run(const std::string &entry) { check(tcc_session_run(handle_, entry.c_str())); }

  /// A copy of output NAME as elements of T (its byte size must divide).
  template <typename T> std::vector<T> output(const std::string &name) const {
    const void *data = nullptr;
    size_t size = 0;
    check(tcc_session_get_output(handle_, name.c_str(), &data, &size));
    std::vector<T> out(size / sizeof(T));
    check(tcc_session_copy_output(handle_, name.c_str(), out.data(), out.size() * sizeof(T)));
    return out;
  }
  /// The shape output NAME has after the last run: its declared one, with a
  /// partial batch's rows first (see tcc_session_set_input).
  std::vector<int64_t> outputShape(const std::string &name) const {
    std::vector<int64_t> shape(16);
    int32_t rank = 0;
    check(tcc_session_get_output_shape(handle_, name.c_str(), int32_t(shape.size()), shape.data(),
                                       &rank));
    shape.resize(size_t(rank));
    return shape;
  }
  /// A 0-d output such as "loss".
  template <typename T> T scalar(const std::string &name) const {
    T value;
    check(tcc_session_copy_output(handle_, name.c_str(), &value, sizeof value));
    return value;
  }

  /// Parameter NAME's current value (SIZE elements of T: its byte size).
  template <typename T> std::vector<T> param(const std::string &name, size_t count) const {
    std::vector<T> out(count);
    check(tcc_session_get_param(handle_, name.c_str(), out.data(), count * sizeof(T)));
    return out;
  }
  template <typename T>
  void setParam(const std::string &name, Span<T> data, const std::vector<int64_t> &shape) {
    check(tcc_session_set_param(handle_, name.c_str(), dtypeOf<T>(), int32_t(shape.size()),
                                shape.data(), data.data, data.bytes()));
  }

  void loadParams(const std::string &path) {
    check(tcc_session_load_params(handle_, path.c_str()));
  }
  void saveParams(const std::string &path) {
    check(tcc_session_save_params(handle_, path.c_str()));
  }
  /// A checkpoint with the caller's METADATA (keys not starting with "tcc.").
  void saveCheckpoint(const std::string &path,
                      const std::map<std::string, std::string> &metadata = {}) {
    std::vector<const char *> keys, values;
    for (const auto &[k, v] : metadata) {
      keys.push_back(k.c_str());
      values.push_back(v.c_str());
    }
    check(tcc_session_save_checkpoint(handle_, path.c_str(), int32_t(keys.size()), keys.data(),
                                      values.data()));
  }
  void loadCheckpoint(const std::string &path) {
    check(tcc_session_load_checkpoint(handle_, path.c_str()));
  }

private:
  tcc_session_t handle_ = nullptr;
};

/// The metadata value KEY of the checkpoint PATH, or nothing when absent.
inline std::optional<std::string> checkpointMetadata(const std::string &path,
                                                     const std::string &key) {
  std::vector<char> buffer(1 << 16);
  tcc_status s = tcc_checkpoint_get_metadata(path.c_str(), key.c_str(), buffer.data(),
                                             buffer.size());
  if (s == TCC_ERROR_NOT_FOUND)
    return std::nullopt;
  check(s);
  return std::string(buffer.data());
}

/// tcc_trainer_options with its defaults filled in.
inline tcc_trainer_options trainerOptions() {
  tcc_trainer_options o;
  tcc_trainer_options_init(&o);
  return o;
}

/// An input's samples in memory for tcc_trainer_options.data / .val: NAME and
/// SHAPE (samples first) must outlive the options' use in Trainer's
/// constructor, DATA the Trainer itself.
template <typename T>
tcc_trainer_array trainerArray(const char *name, const std::vector<T> &data,
                               const std::vector<int64_t> &shape) {
  return {name, dtypeOf<T>(), int32_t(shape.size()), shape.data(), data.data(),
          data.size() * sizeof(T)};
}

/// A training run (tcc_trainer_t): created with its checks done, run once on
/// a session. Borrows the Artifact and the data arrays until destroyed.
class Trainer {
public:
  Trainer(const Artifact &artifact, const tcc_trainer_options &options) {
    check(tcc_trainer_create(artifact.get(), &options, &handle_));
  }
  Trainer(Trainer &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Trainer &operator=(Trainer &&other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;
  ~Trainer() { tcc_trainer_destroy(handle_); }

  tcc_trainer_t get() const noexcept { return handle_; }

  /// Trains SESSION; throws Error (TCC_ERROR_INTERRUPTED when stopped).
  void run(Session &session) { check(tcc_trainer_run(handle_, session.get())); }
  /// From any thread or a signal handler: stop at the next step boundary.
  void requestStop() noexcept { tcc_trainer_request_stop(handle_); }
  int64_t stepsDone() const {
    int64_t steps = 0;
    check(tcc_trainer_steps_done(handle_, &steps));
    return steps;
  }

private:
  tcc_trainer_t handle_ = nullptr;
};

/// tcc_evaluator_options with its defaults filled in.
inline tcc_evaluator_options evaluatorOptions() {
  tcc_evaluator_options o;
  tcc_evaluator_options_init(&o);
  return o;
}

/// A data set opened and checked for evaluating an artifact's sessions
/// (tcc_evaluator_t): the loss over every sample and a classifier's
/// accuracy, as tcc-run evaluate and --val compute them. Borrows the
/// Artifact and the data arrays until destroyed.
class Evaluator {
public:
  Evaluator(const Artifact &artifact, const tcc_evaluator_options &options) {
    check(tcc_evaluator_create(artifact.get(), &options, &handle_));
  }
  Evaluator(Evaluator &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Evaluator &operator=(Evaluator &&other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Evaluator(const Evaluator &) = delete;
  Evaluator &operator=(const Evaluator &) = delete;
  ~Evaluator() { tcc_evaluator_destroy(handle_); }

  tcc_evaluator_t get() const noexcept { return handle_; }

  /// Evaluates SESSION's current parameters on the whole data set.
  tcc_evaluation run(Session &session) {
    tcc_evaluation e{};
    check(tcc_evaluator_run(handle_, session.get(), &e));
    return e;
  }

private:
  tcc_evaluator_t handle_ = nullptr;
};

} // namespace tcc

#endif // TCC_TCC_HPP
