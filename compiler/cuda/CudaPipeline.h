//===- CudaPipeline.h - planned buffers to PTX kernels and host code ------===//

#ifndef TCC_COMPILER_CUDA_CUDAPIPELINE_H
#define TCC_COMPILER_CUDA_CUDAPIPELINE_H

#include "compiler/cpu/CpuPipeline.h"

#include "mlir/Pass/PassManager.h"

#include <string>

namespace tcc {

struct CudaPipelineOptions {
  /// The GPU architecture: "sm_90" (default) or "sm_80".
  std::string chip = "sm_90";
  /// The CUDA toolkit, for libdevice (math functions) and ptxas.
  std::string toolkitPath = "/usr/local/cuda";
  /// Also compile every kernel for the host (tcc-gpu-emulated-kernels), for
  /// the runtime's emulated CUDA device.
  bool emulation = false;
};

/// Parses "cuda", "cuda:sm_80" or "cuda:sm_90" into OPTIONS.chip; false for
/// anything else.
bool parseCudaTarget(llvm::StringRef target, CudaPipelineOptions &options);

/// The CUDA toolkit: $TCC_CUDA_PATH, else $CUDA_PATH, else /usr/local/cuda.
std::string defaultCudaToolkitPath();

/// The ptxas that assembles an artifact's kernels, as found once per process
/// and toolkit.
struct PtxasInfo {
  /// TOOLKIT/bin/ptxas, else the one on PATH; empty when there is none.
  std::string path;
  /// What `ptxas --version` prints ("...release 13.0, V13.0.88..."). Part of
  /// a CUDA artifact's fingerprint: another ptxas makes another cubin.
  std::string version;
  /// It takes --split-compile N (CUDA 12.x and later): its optimizations on
  /// N threads.
  bool splitCompile = false;
};
const PtxasInfo &findPtxas(llvm::StringRef toolkit);

/// After tcc-cpu-bufferize (library calls chosen, memory planned): every
/// kernel through gpu.launch -> NVVM -> PTX (one module), launches and
/// library calls as calls of the runtime; buildCudaHostPipeline then lowers
/// the host code.
void buildCudaKernelPipeline(mlir::OpPassManager &pm, const CudaPipelineOptions &options);

/// The host code of a CUDA artifact, after buildCudaKernelPipeline: the
/// planned entry points, now launches and runtime calls around the scalar
/// glue left on the host, to the LLVM dialect. The CPU's lowering with
/// `device` set: library calls were lowered and kernels outlined before.
void buildCudaHostPipeline(mlir::OpPassManager &pm, CpuPipelineOptions options);

/// Bytes of device workspace that library call KIND with PARAMS (abi.h's
/// tcc_library_call_kind and its parameters) is planned for on CHIP
/// ("sm_90"): a cuBLASLt matmul gets NVIDIA's recommended workspace (32 MiB
/// on Hopper, 4 MiB before); a cuDNN convolution the bytes of its im2col
/// matrix, between 1 MiB and 256 MiB (docs/cuda-codegen.md). The calls run in
/// order on one stream and share one region at the arena's tail, as large as
/// the largest of these.
int64_t libraryWorkspaceBytes(int32_t kind, llvm::ArrayRef<int64_t> params, llvm::StringRef chip);

void registerCudaPipelines();

} // namespace tcc

#endif // TCC_COMPILER_CUDA_CUDAPIPELINE_H
