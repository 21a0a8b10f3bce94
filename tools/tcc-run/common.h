//===- common.h - what every part of tcc-run shares -----------------------===//
//
// The options, the one way to fail (a UsageError that main prints as
// `tcc-run: error: ...` with exit status 1), and small helpers around the
// runtime's C API that inference and training both use.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_TOOLS_TCC_RUN_COMMON_H
#define TCC_TOOLS_TCC_RUN_COMMON_H

#include "runtime/include/tcc/tcc.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::run {

/// Thrown for any user-facing failure; main prints it and exits with 1.
struct UsageError {
  std::string message;
};

[[noreturn]] void die(const std::string &message);

/// Dies with the runtime's message when a C API call failed.
void check(tcc_status status);

struct Options {
  std::string model;
  bool list = false;
  bool run = false;
  std::string entry = "infer";
  std::vector<std::string> inputs; // NAME=FILE or FILE.pb
  std::string outputDir;
  std::string params;
  int threads = 0;
  bool poison = false;
  // Training.
  bool train = false;
  std::string dataDir;
  long steps = 0;
  double lr = 0;
  bool hasLr = false;
  bool shuffle = true;
  uint64_t seed = 0;
  std::string metrics;
  std::string save;
  long logEvery = 1;
  std::string schedule = "constant";
  long warmup = 0, stepSize = 0, cycleSteps = 0, plateauPatience = 10;
  double minLr = 0, gamma = 0.1;
  std::string checkpointDir;
  long saveEvery = 0;
  std::string resume;
  // Validation.
  std::string valDir;
  long evalEvery = 0;
  long patience = 0;
  double minDelta = 0;
  bool hasMinDelta = false;
};

/// "f32[2,3]".
std::string typeString(const tcc_tensor_info &t);

/// The file name a tensor is read from or written to: its name with path
/// separators replaced (so every ONNX name stays inside the folder) + ".npy".
std::string npyFileName(const std::string &name);

/// Creates DIR and its missing parents, like mkdir -p.
void makeDirectory(const std::string &dir);

/// Owns a session; destroys it when it goes out of scope.
struct SessionHandle {
  tcc_session_t s = nullptr;
  SessionHandle() = default;
  SessionHandle(SessionHandle &&other) noexcept : s(other.s) { other.s = nullptr; }
  SessionHandle(const SessionHandle &) = delete;
  ~SessionHandle() { tcc_session_destroy(s); }
};

/// A session with o's thread count and poisoning, its parameters from
/// --params or from the file beside the artifact.
SessionHandle createSession(tcc_artifact_t artifact, const Options &o);

/// The input and output tensors of the entry point NAME, in descriptor order;
/// the artifact must have it.
std::vector<tcc_tensor_info> entryTensors(tcc_artifact_t artifact, const char *name);

/// Whether the artifact has the entry point NAME.
bool hasEntry(tcc_artifact_t artifact, const char *name);

/// Runs the training loop of a --data invocation (train.cpp).
void train(tcc_artifact_t artifact, const Options &o);

} // namespace tcc::run

#endif // TCC_TOOLS_TCC_RUN_COMMON_H
