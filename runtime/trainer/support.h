//===- support.h - the trainer's failure and C API helpers ----------------===//
//
// The one way the trainer fails (a UsageError that the C API turns into a
// tcc_status and the last-error message, and that tcc-run prints), and the
// small helpers around the runtime's C API and the file system that the
// trainer and tcc-run both use. Compiled into libtcc_runtime and, as the
// static library TccTrainerSupport, into tcc-run, which reaches the runtime
// only through its exported C API.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_SUPPORT_H
#define TCC_RUNTIME_TRAINER_SUPPORT_H

#include "runtime/include/tcc/tcc.h"

#include <csignal>
#include <string>
#include <vector>

namespace tcc::train {

/// Thrown for any failure of a training run or a tcc-run command; the C API
/// returns STATUS with MESSAGE as the last error, tcc-run prints it and
/// exits with 1.
struct UsageError {
  std::string message;
  tcc_status status = TCC_ERROR_INVALID_ARGUMENT;
};

[[noreturn]] void die(const std::string &message, tcc_status status = TCC_ERROR_INVALID_ARGUMENT);

/// Dies with the runtime's message and status when a C API call failed.
void check(tcc_status status);

/// Creates DIR and its missing parents, like mkdir -p.
void makeDirectory(const std::string &dir);

/// Dies unless a file can be created in the existing folder DIR (OPTION
/// names the flag it came from).
void checkWritableFolder(const std::string &dir, const std::string &option);

/// "f32[2,3]".
std::string typeString(const tcc_tensor_info &t);

/// The file name a tensor is read from or written to: its name with path
/// separators replaced (so every ONNX name stays inside the folder) + ".npy".
std::string npyFileName(const std::string &name);

/// SIGINT, SIGTERM (what timeout, Docker, Kubernetes and Slurm send) and
/// SIGHUP (a closed terminal) caught while an instance lives, so that a run
/// (or a sweep) stops at its next step boundary with what it has: its
/// checkpoint, its results. Installed with SA_RESETHAND: a second signal
/// takes its default action at once. One per process at a time.
class StopSignals {
public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals &) = delete;
  StopSignals &operator=(const StopSignals &) = delete;
  /// The signal that asked to stop ("SIGTERM"), or nullptr. Any thread.
  static const char *pending();

private:
  static constexpr int kCount = 3;
  struct sigaction previous_[kCount];
};

/// The files a training run writes into its checkpoint folder.
extern const char *const kCheckpointFiles[2];

/// The artifact's metadata KEY, or FALLBACK (absent: artifacts from before
/// it).
std::string artifactMetadata(tcc_artifact_t artifact, const char *key, const std::string &fallback);

/// The input and output tensors of the entry point NAME, in descriptor order;
/// the artifact must have it.
std::vector<tcc_tensor_info> entryTensors(tcc_artifact_t artifact, const char *name);

/// Whether the artifact has the entry point NAME.
bool hasEntry(tcc_artifact_t artifact, const char *name);

} // namespace tcc::train

#endif // TCC_RUNTIME_TRAINER_SUPPORT_H
