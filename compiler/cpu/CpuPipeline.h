//===- CpuPipeline.h - tcc dialect to LLVM dialect for CPUs ---------------===//
//
// The CPU code-generation pipeline, as a pass pipeline and as the stages the
// driver stops at (--emit=linalg|bufferized|llvm-dialect).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_CPU_CPUPIPELINE_H
#define TCC_COMPILER_CPU_CPUPIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace tcc {

struct CpuPipelineOptions {
  /// f32 matmuls and convolutions as oneDNN calls through the runtime
  /// (tcc-mark-library-calls); false keeps them on generated loops.
  bool libraryCalls = true;
  /// Producer-consumer fusion of elementwise ops (tcc-fuse-elementwise);
  /// false gives one kernel per op (for measuring what fusion buys).
  bool fuse = true;
  /// A reduction with its prologue and epilogue over the same rows as one
  /// loop (tcc-fuse-rows; CPU only, so ignored with `device`).
  bool fuseRows = true;
  /// Print the kernels before and after fusion (tcc --report=fusion).
  bool reportFusion = false;
  /// Every kernel in its own function, named after its node, for per-kernel
  /// profiles with perf (tcc --profile).
  bool outlineKernels = false;
  /// A device artifact: sibling reductions stay separate (the GPU block
  /// reduction carries one output); in the host code, library calls were
  /// lowered and every kernel outlined by the CUDA pipeline before.
  bool device = false;
  /// f32 library calls may use TF32 tensor cores (--precision=tf32; device
  /// artifacts only).
  bool tf32 = false;
  /// The target CPU's vector width in bits: 256 for x86-64-v3 (AVX2), 512
  /// for a --cpu with AVX-512.
  int64_t vectorBits = 256;
  /// The target CPU rounds f32 to bf16 itself (AVX512-BF16).
  bool nativeBF16Rounding = false;
};

/// tcc dialect -> linalg on tensors, fused.
void buildCpuLinalgPipeline(mlir::OpPassManager &pm, const CpuPipelineOptions &options = {});
/// linalg on tensors -> memrefs, every buffer planned into the arena.
void buildCpuBufferizePipeline(mlir::OpPassManager &pm,
                               const CpuPipelineOptions &options = {});
/// planned memrefs -> loops -> LLVM dialect.
void buildCpuLowerToLLVMPipeline(mlir::OpPassManager &pm,
                                 const CpuPipelineOptions &options = {});

/// All three, for `tcc-opt --tcc-cpu-pipeline`.
void buildCpuCodegenPipeline(mlir::OpPassManager &pm);
void registerCpuPipelines();

} // namespace tcc

#endif // TCC_COMPILER_CPU_CPUPIPELINE_H
