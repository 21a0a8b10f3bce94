//===- device.h - what a session needs to run a device artifact on CUDA ----===//
//
// One Device per session: the primary context and a stream, the artifact's
// module (cubin when it matches the device exactly, else PTX through the
// driver's JIT), one CUfunction per kernel-table entry, the library calls,
// and the CUDA graphs of the entries that have run. The ABI's launch_kernel
// and library_call land here; generated code has no error path, so the
// first failure is recorded and reported when the entry returns.
//
// On the emulated device (TCC_CUDA_DEVICE=emulated, emulator.h) the same
// code runs on the emulator's driver table; only where the work comes from
// differs: each kernel-table entry's CUfunction is its host twin, and the
// library calls (and, over several ranks, the collectives) are the CPU
// runtime's, enqueued as host work on the stream so that graphs capture them.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CUDA_DEVICE_H
#define TCC_RUNTIME_CUDA_DEVICE_H

#include "runtime/cuda/driver.h"
#include "runtime/cuda/libraries.h"
#include "runtime/include/tcc/abi.h"

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tcc::rt {
class LibraryCalls;
class Collectives;
} // namespace tcc::rt

namespace tcc::rt::cuda {

struct EmulatedKernel;

/// Bytes of library workspace when the descriptor does not say (artifacts
/// from before the compiler sized it per call).
constexpr size_t kDefaultWorkspaceBytes = size_t(32) << 20;

class Device {
public:
  /// D is validated and has device != NULL. Throws Error: UNSUPPORTED with
  /// "<what>: compiled for cuda:sm_XY but there is no CUDA device: <why>"
  /// when there is none, or with TCC_CUDA_DEVICE=emulated when D has no host
  /// twins (compiled without --cuda-emulation); or naming the call that
  /// failed.
  Device(const tcc_abi_descriptor &d, const std::string &what);
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  Context &context() { return *context_; }
  /// The driver table the device chose when it was made.
  const Driver &driver() const { return context_->driver(); }
  /// Whether this is the emulated CUDA device.
  bool emulated() const { return emulated_; }
  /// Bytes of workspace the library calls need at the arena's tail (0
  /// without library calls).
  size_t workspaceSize() const { return calls_ ? workspaceBytes_ : 0; }
  void setWorkspace(CUdeviceptr workspace);

  /// The ABI's launch_kernel and library_call (SELF is the Device).
  static void launchKernel(void *self, int32_t index, void **params);
  static void libraryCall(void *self, int32_t index, void *const *operands);
  /// The emulated device's collectives: COLLECTIVES (the session's CPU ones,
  /// on TABLE's COUNT rows) run in stream order through collective().
  void useHostCollectives(Collectives *collectives, const tcc_abi_collective *table,
                          int32_t count);
  /// The ABI's collective on the emulated device (SELF is the Device).
  static void collective(void *self, int32_t index, void *const *operands);
  /// The first failure recorded since the last call, or "" (and clears it).
  std::string takeError();

  /// Runs BODY (an entry: it enqueues work on the stream and returns its
  /// code) for the entry KEY. The first run is eager; the second captures
  /// BODY into a CUDA graph and launches it, later runs replay the graph
  /// (TCC_CUDA_GRAPH=0: always eager). A capture that fails falls back to
  /// eager runs for KEY. Returns BODY's code (0 for a replay).
  int32_t execute(int key, const std::function<int32_t()> &body);
  /// Whether KEY replays a graph now (for tests and the self-test).
  bool hasGraph(int key) const;
  /// Why capturing KEY failed, or "".
  std::string graphFailure(int key) const;
  /// cubin or PTX, for messages and the self-test.
  const std::string &moduleKind() const { return moduleKind_; }

private:
  struct Graph {
    int eagerRuns = 0;
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    std::string failure; ///< non-empty: capture failed, run eagerly
  };
  void record(const std::string &error);
  /// Emulated: runs RUN on a copy of the NUM_OPERANDS OPERANDS of row INDEX
  /// (of COUNT) of KIND's table, as host work in stream order.
  void runOnHost(const char *kind, int32_t index, int32_t count, int32_t numOperands,
                 void *const *operands, std::function<void(void *const *)> run);
  /// TCC_CUDA_PROFILE=1: events around every kernel and library call of
  /// eager runs; per-name totals printed when the device is destroyed.
  void markStart(std::string name);
  void markEnd();
  void collectProfile();
  void printProfile() const;
  struct Mark {
    std::string name;
    CUevent start = nullptr, end = nullptr;
  };
  struct Stat {
    double ms = 0;
    int64_t count = 0;
  };
  bool profile_ = false;
  bool profileWarm_ = false;
  int profiledRuns_ = 0;
  std::vector<Mark> marks_;
  size_t usedMarks_ = 0;
  std::map<std::string, Stat> stats_;

  std::string what_;
  std::unique_ptr<Context> context_;
  CUmodule module_ = nullptr;
  std::string moduleKind_;
  const tcc_abi_kernel *kernels_ = nullptr;
  std::vector<CUfunction> functions_;
  std::unique_ptr<LibraryCalls> calls_;
  size_t workspaceBytes_ = 0;
  bool emulated_ = false;
  /// Emulated: the twins the CUfunctions point to.
  std::vector<std::unique_ptr<EmulatedKernel>> twins_;
  /// Emulated: the library calls on the CPU (oneDNN, BLAS), their own
  /// scratchpad, and the table (operand counts).
  std::unique_ptr<tcc::rt::LibraryCalls> hostCalls_;
  std::unique_ptr<uint8_t, void (*)(void *)> hostScratch_{nullptr, std::free};
  const tcc_abi_library_call *callTable_ = nullptr;
  int32_t numCalls_ = 0;
  /// Emulated: the session's CPU collectives and their table.
  Collectives *hostCollectives_ = nullptr;
  const tcc_abi_collective *collectiveTable_ = nullptr;
  int32_t numCollectives_ = 0;
  std::string error_;
  bool graphsEnabled_ = true;
  std::map<int, Graph> graphs_;
};

/// The inputs of a device session on their way to the arena. An input's
/// slot in the arena cannot take the next run's bytes early: the plan lets a
/// run overwrite it with intermediates. So set() copies the input into its
/// slot of a page-locked host buffer and uploads it, on the context's copy
/// stream, into a device staging buffer, while the previous run may still be
/// computing; a run then copies its inputs from staging to their fixed arena
/// slots on its own stream (device to device, a few microseconds), after
/// waiting for their uploads. The arena addresses never change, so a captured
/// CUDA graph stays valid.
class InputStaging {
public:
  /// One slot per input tensor of D (validated); the context must be current.
  InputStaging(const tcc_abi_descriptor &d, Context &context, const std::string &what);
  ~InputStaging();
  InputStaging(const InputStaging &) = delete;
  InputStaging &operator=(const InputStaging &) = delete;

  /// Stages input tensor INDEX: its SIZE bytes (its byte size) from DATA.
  /// Waits only for the slot's previous upload to have read the host copy;
  /// the upload waits, on the copy stream, for the last run to have copied
  /// the staging buffer to the arena. WHERE names the input in errors.
  void set(int32_t index, const void *data, size_t size, const std::string &where);
  /// Enqueues on the context's stream: waits for the uploads of ENTRY's
  /// inputs, then copies each into its slot of ARENA.
  void copyToArena(const tcc_abi_entry &entry, CUdeviceptr arena, const std::string &where);

private:
  const tcc_abi_descriptor &d_;
  Context &context_;
  std::vector<size_t> offset_; ///< per descriptor tensor: its staging offset
  std::unique_ptr<uint8_t, void (*)(void *)> host_{nullptr, std::free};
  HostRegistration pinned_;
  DeviceBuffer device_;
  /// Per input tensor: recorded on the copy stream after its last upload.
  std::vector<CUevent> uploaded_;
  /// Recorded on the run's stream after a run's copies out of staging.
  CUevent consumed_ = nullptr;
};

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_H
