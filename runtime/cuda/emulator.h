//===- emulator.h - an emulated CUDA device on the host CPU ---------------===//
//
// TCC_CUDA_DEVICE=emulated replaces the CUDA driver by host implementations
// of the same functions (driver.h's Driver table), so that the session, the
// Device, staging, streams, events and CUDA-graph capture run unchanged on a
// machine without a GPU. Device memory is host memory; a stream runs its work
// when it is enqueued, unless the stream is capturing, in which case the work
// is recorded into a graph that cuGraphLaunch replays in order. Kernels are
// the host twins of an artifact compiled with --cuda-emulation (abi.h's
// tcc_abi_emulated_kernel): the threads of a block run one after another, or
// as fibers when the kernel synchronizes (barriers, shuffles), and blocks run
// in parallel on the session's threads. docs/cuda-codegen.md, "Emulation".
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CUDA_EMULATOR_H
#define TCC_RUNTIME_CUDA_EMULATOR_H

#include "runtime/cuda/driver.h"
#include "runtime/include/tcc/abi.h"

#include <cstdint>
#include <functional>
#include <string>

namespace tcc::rt::cuda {

/// The value of TCC_CUDA_DEVICE that selects the emulated device; no other
/// value (and no missing GPU) ever selects it.
inline constexpr char kEmulatedDeviceSetting[] = "emulated";

/// What cuDeviceGetName says, and what messages call the device.
inline constexpr char kEmulatedDeviceName[] = "emulated CUDA device (host CPU)";

/// Whether TCC_CUDA_DEVICE is "emulated" now (read at every call: set it
/// before creating sessions and leave it while they live).
bool emulationSelected();

/// The host implementations of every driver function (one table per
/// process; cuInit always succeeds, there is one device, ordinal 0).
const Driver &emulatedDriver();

/// The compute capability the emulated device reports: the highest any
/// artifact asked for (Device sets it from "cuda:sm_90" before it opens the
/// context), so that an artifact's architecture check passes.
void emulateComputeCapability(int capability);

/// What an emulated CUfunction points to: kernel-table entry ENTRY's host
/// twin. Its owner (the Device) keeps it alive while launches may use it.
struct EmulatedKernel {
  tcc_abi_emulated_kernel twin;
  std::string name;      ///< the PTX kernel's name, for messages
  int32_t numParams = 0; ///< launch_kernel's PARAMS entries (captured by value)
  CUfunction function() { return reinterpret_cast<CUfunction>(this); }
};

/// Enqueues host work on STREAM (a library call or a collective of the
/// emulated device): runs it now, or records it into the graph STREAM is
/// capturing. Returns CUDA_ERROR_INVALID_HANDLE for a null stream.
CUresult emulatedHostWork(CUstream stream, std::function<void()> work);

/// The source lane of PTX shfl.sync as MLIR's gpu.shuffle lowering issues
/// it for WIDTH and MODE (gpu::ShuffleMode: 0 xor, 1 up, 2 down, 3 idx):
/// member mask (1 << WIDTH) - 1 and c = 32 - WIDTH for up, WIDTH - 1
/// otherwise (no segment mask), b = OFFSET. Sets *VALID to PTX's predicate;
/// returns LANE itself when it is 0.
int32_t shuffleSourceLane(int32_t lane, int32_t offset, int32_t width, int32_t mode, bool *valid);

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_EMULATOR_H
