//===- CudaPipeline.cpp - planned buffers to PTX kernels and host code ----===//
//
// The CUDA backend shares everything up to the memory plan with the CPU's
// (lowering, fusion, bufferization, library-call selection, the arena); from
// there each op becomes a kernel. Upstream passes do the GPU work (outlining,
// NVVM conversion, the NVPTX backend through gpu-module-to-binary); tcc's own
// passes choose the launch geometry and replace upstream's host lowering,
// whose mgpu* runtime wrappers an artifact must not depend on.
//
//===----------------------------------------------------------------------===//

#include "compiler/cuda/CudaPipeline.h"

#include "passes/Passes.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>

using namespace mlir;

bool tcc::parseCudaTarget(llvm::StringRef target, CudaPipelineOptions &options) {
  if (target == "cuda") {
    options.chip = "sm_90";
    return true;
  }
  if (target == "cuda:sm_80" || target == "cuda:sm_90") {
    options.chip = target.drop_front(5).str();
    return true;
  }
  return false;
}

std::string tcc::defaultCudaToolkitPath() {
  for (const char *var : {"TCC_CUDA_PATH", "CUDA_PATH"})
    if (const char *v = std::getenv(var); v && *v)
      return v;
  return "/usr/local/cuda";
}

namespace {
/// PTXAS's output for ARG (stdout and stderr), or nothing when it fails.
std::optional<std::string> runPtxas(llvm::StringRef ptxas, llvm::StringRef arg) {
  llvm::SmallString<128> out;
  if (llvm::sys::fs::createTemporaryFile("tcc-ptxas", "txt", out))
    return std::nullopt;
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove(out); });
  llvm::StringRef argv[] = {ptxas, arg};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(out),
                                                llvm::StringRef(out)};
  if (llvm::sys::ExecuteAndWait(ptxas, argv, std::nullopt, redirects) != 0)
    return std::nullopt;
  auto text = llvm::MemoryBuffer::getFile(out);
  if (!text)
    return std::nullopt;
  return (*text)->getBuffer().str();
}
} // namespace

const tcc::PtxasInfo &tcc::findPtxas(llvm::StringRef toolkit) {
  static std::mutex mutex;
  static llvm::StringMap<PtxasInfo> found;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = found.try_emplace(toolkit);
  PtxasInfo &info = it->second;
  if (!inserted)
    return info;
  llvm::SmallString<256> ptxas(toolkit);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  if (llvm::sys::fs::can_execute(ptxas)) {
    info.path = ptxas.str().str();
  } else if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas")) {
    info.path = *onPath;
  } else {
    return info;
  }
  info.version = runPtxas(info.path, "--version").value_or("");
  std::optional<std::string> help = runPtxas(info.path, "--help");
  info.splitCompile = help && llvm::StringRef(*help).contains("--split-compile");
  return info;
}

int64_t tcc::libraryWorkspaceBytes(int32_t kind, llvm::ArrayRef<int64_t> params,
                                   llvm::StringRef chip) {
  constexpr int64_t MiB = int64_t(1) << 20;
  if (kind == TCC_LIBRARY_CALL_MATMUL) {
    // The cuBLAS documentation's recommendation (cublasSetWorkspace): 32 MiB
    // on Hopper, 4 MiB on earlier architectures.
    int arch = 0;
    chip.consume_front("sm_");
    if (chip.getAsInteger(10, arch))
      arch = 0;
    return arch >= 90 ? 32 * MiB : 4 * MiB;
  }
  if ((kind == TCC_LIBRARY_CALL_CONV2D || kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA ||
       kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS) &&
      params.size() >= 9) {
    // The gradients' im2col matrices are no larger (one per direction).
    // cuDNN's workspace depends on the algorithm, known only on the device.
    // The im2col matrix (N*OH*OW x C*KH*KW floats) is what the explicit-GEMM
    // algorithm needs at most, more than implicit GEMM (none), precomputed
    // implicit GEMM (index tables) or Winograd need; FFT algorithms may need
    // more and are then passed over. At least 1 MiB for small calls; at most
    // 256 MiB, which implicit GEMM never needs.
    int64_t n = params[0], c = params[1], kh = params[5], kw = params[6], oh = params[7],
            ow = params[8];
    int64_t bytes = 4;
    for (int64_t v : {n, oh, ow, c, kh, kw})
      bytes = std::min(bytes * std::max<int64_t>(v, 1), 256 * MiB);
    return std::clamp(bytes, MiB, 256 * MiB);
  }
  return 0;
}

void tcc::buildCudaKernelPipeline(OpPassManager &pm, const CudaPipelineOptions &options) {
  // Library calls become runtime calls first: it gives each planned
  // function the runtime argument that kernel launches use too.
  pm.addPass(tcc::createLowerLibraryCallsPass());
  // Each op a launch with a static geometry; kernels capture the planned
  // buffers they use (views of the arena and the state), nothing else.
  pm.addNestedPass<func::FuncOp>(tcc::createGpuMapKernelsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(tcc::createGpuMergeModulesPass());
  // Host twins of the kernels, cloned before anything lowers them for NVVM;
  // the host pipeline compiles them with the host code.
  if (options.emulation)
    pm.addPass(tcc::createGpuEmulatedKernelsPass());
  // PTX ISA 8.0: the NVPTX backend's default is too old for sm_90.
  GpuNVVMAttachTargetOptions attach;
  attach.chip = options.chip;
  attach.features = "+ptx80";
  attach.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(attach));

  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  // The ops of one-thread kernels (scatter loops) are still linalg.
  kernels.addPass(createConvertLinalgToLoopsPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  // Kernel parameters as bare pointers (every kernel buffer is static);
  // math functions from libdevice.
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());

  // LLVM's NVPTX backend, in process: PTX only (ptxas runs in the artifact
  // writer, which embeds a cubin beside it).
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = options.toolkitPath;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  tcc::GpuLowerLaunchesPassOptions launches;
  launches.device = "cuda:" + options.chip;
  pm.addPass(tcc::createGpuLowerLaunchesPass(launches));
}

void tcc::buildCudaHostPipeline(OpPassManager &pm, CpuPipelineOptions options) {
  options.device = true;
  buildCpuLowerToLLVMPipeline(pm, options);
}

void tcc::registerCudaPipelines() {
  PassPipelineRegistration<>(
      "tcc-cuda-kernels",
      "planned buffers to PTX kernels launched through the tcc runtime (sm_90)",
      [](OpPassManager &pm) {
        CudaPipelineOptions options;
        options.toolkitPath = defaultCudaToolkitPath();
        buildCudaKernelPipeline(pm, options);
      });
}
