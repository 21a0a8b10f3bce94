//===- Compile.h - the compiler as one call --------------------------------===//
//
// `compile(context, options)` is the whole compiler: it imports the model,
// runs the stages in order up to the one asked for, reads the memory plans
// once, and writes the output (IR, PTX, LLVM IR, an object, or the artifact
// with its weights) and the reports. The `tcc` driver is flag parsing over
// it; tests, benchmarks and the Python package call the same function.
//
// Errors are MLIR diagnostics on the context (the caller's handler prints
// them) and a failed result; nothing is written on failure except what a
// stage wrote before it failed (never a half-written artifact: it is renamed
// into place).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_COMPILE_H
#define TCC_COMPILER_COMPILE_H

#include "compiler/Pipeline.h"
#include "frontend/onnx/OnnxImporter.h"
#include "passes/training/TrainingSettings.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>
#include <vector>

namespace tcc {

/// Where compilation stops, in pipeline order (`tcc --emit`).
enum class Stage {
  MlirRaw,       ///< the tcc IR exactly as the importer built it
  Mlir,          ///< imported, folded and verified (and the training step)
  Linalg,        ///< lowered to linalg on tensors, fused
  Bufferized,    ///< buffers, every one planned into the arena
  Ptx,           ///< the PTX of every kernel (CUDA targets)
  LLVMDialect,   ///< the LLVM dialect, before translation
  LLVMIR,        ///< optimized LLVM IR of the artifact
  Object,        ///< the artifact's object file
  SharedLibrary, ///< the artifact, and its weights beside it
};

/// Which ops fuse into one kernel (`tcc --fusion`).
enum class Fusion {
  All,         ///< elementwise, multi-output and sibling kernels, CPU row fusion
  Elementwise, ///< elementwise, multi-output and sibling kernels only
  None,        ///< one kernel per op
};

/// Rematerialization (`tcc --remat`): recompute forward values in the
/// backward pass when the step needs more memory than `memoryBudget`.
enum class Remat {
  Auto, ///< as much as the budget needs (nothing without a budget)
  Off,  ///< never (a budget the step exceeds is refused)
  Max,  ///< the least memory tcc-rematerialize reaches
};

/// What to print on the report stream (`tcc --report`).
enum class Report { None, Memory, Fusion, Precision };

struct CompileOptions {
  // Input.
  /// A model: .onnx, .onnxtxt / .txt (ONNX's textual syntax), .tcc (tcc's
  /// model language, docs/dsl.md), or .mlir (tcc IR at any stage before
  /// bufferization, for tests).
  std::string input;
  /// Symbolic dimensions (ONNX and .tcc; for .tcc `dims` also overrides
  /// integer constants) and constant inputs (ONNX only). `onParameter` is
  /// the compiler's: it collects the weights.
  OnnxImportOptions import;

  // Training.
  /// Build the training step (tcc-build-train-step); else the artifact only
  /// infers.
  bool train = false;
  /// The step's loss, optimizer and their settings: the pass's own options,
  /// documented with their defaults in passes/Passes.td.
  TrainingOptions training;
  /// The training settings the caller gave explicitly: a .tcc file's train
  /// block sets the others, and a recipe with a loss makes the compile train
  /// unless `inferOnly`.
  TrainingGiven trainingGiven;
  bool inferOnly = false;

  /// Length buckets (`tcc --length-buckets=DIM=V1,V2,...`): the symbolic
  /// dimension DIM is bound to the largest value for every entry point,
  /// and the training entries are compiled again at each smaller one
  /// (train_step.DIM_V, accumulate_grad.DIM_V: compiler/LengthBuckets.h);
  /// ascending, at least two values. Empty: none.
  std::string lengthDim;
  std::vector<int64_t> lengthBuckets;

  // Memory.
  /// Bytes the artifact may allocate on its target: the arena (inputs,
  /// outputs, intermediates), the state region (parameters, gradients'
  /// accumulators, optimizer state) and, on CUDA, the library workspace;
  /// 0: no budget. A training step that needs more is compiled with
  /// recomputation (`remat`), or refused with an explanation.
  int64_t memoryBudget = 0;
  Remat remat = Remat::Auto;
  /// Choose the largest batch (the import's `batch`) whose plan fits the
  /// budget; with `globalBatch`, also the gradient accumulation reaching it.
  bool autoBatch = false;
  int64_t globalBatch = 0;
  /// An SVG of the live bytes over the step's schedule, without and with
  /// recomputation (`tcc --memory-plot`); empty: none.
  std::string memoryPlot;

  // Target and code generation.
  /// "cpu", or "cuda", "cuda:sm_80", "cuda:sm_90".
  std::string target = "cpu";
  /// CUDA targets: every kernel also compiled for the host, so that the
  /// runtime's emulated CUDA device can run the artifact on the CPU
  /// (TCC_CUDA_DEVICE=emulated; docs/cuda-codegen.md).
  bool cudaEmulation = false;
  /// The x86-64 CPU the code is for (`--cpu`): x86-64-v3 (AVX2, the
  /// default), native (this machine's), or an LLVM CPU name (x86-64-v4,
  /// skylake-avx512, znver4, ...). The runtime refuses the artifact on a
  /// CPU without the features it implies.
  std::string cpu = "x86-64-v3";
  /// A 16-bit training step for x86-64-v3 also holds its entry points
  /// compiled for x86-64-v4 (AVX-512, 512-bit vectors) with and without
  /// AVX512-BF16, which the runtime runs on CPUs that have them
  /// (`--cpu-variants`; docs/precision.md).
  bool cpuVariants = true;
  /// f32 matmuls and convolutions as oneDNN calls (CPU) or cuBLASLt / cuDNN
  /// calls (CUDA); false: generated loops.
  bool libraryCalls = true;
  Fusion fusion = Fusion::All;
  /// Every kernel in its own function named after its node (perf profiles).
  bool profile = false;
  /// LLVM's optimization on the artifact (false: `--O0`).
  bool optimize = true;
  /// Threads for LLVM's optimization and code generation, and with 1 for
  /// MLIR's passes too (0: every core).
  /// The artifact is the same bytes for any count.
  unsigned threads = 0;

  // The compile cache (compiler/CompileCache.h).
  /// Look up and store kernels' object code and whole artifacts. The
  /// caller clears it when something the cache key cannot see shapes the
  /// code (tcc: any of LLVM's or MLIR's own flags).
  bool cache = true;
  /// The cache folder; empty: defaultCacheDir().
  std::string cacheDir;

  // Output.
  Stage stage = Stage::Mlir;
  /// A file, or "-" for standard output (text stages only). An artifact's
  /// weights go beside it: model.so -> model.safetensors.
  std::string output = "-";
  Report report = Report::None;
  llvm::raw_ostream *reportStream = &llvm::errs();
  /// The stages' wall and CPU times, and the kernel and cache counts, on
  /// the report stream (`tcc --time-report`).
  bool timeReport = false;
  /// Called on every pass manager before it runs (tcc applies MLIR's
  /// debugging flags and its timer); may fail.
  std::function<mlir::LogicalResult(mlir::PassManager &)> configurePassManager;
};

/// The canonical text of every option in OPTIONS that can change the
/// artifact: everything but where the output goes, the reports, the thread
/// count and the cache's own settings. The training step's options are in
/// it whether or not `train` is set (a .tcc file's train block may turn
/// training on after the import). With the model's bytes it keys the
/// artifact in the compile cache before the import (compiler/SourceKey.h);
/// the artifact's fingerprint prints the same options after the import.
std::string artifactOptionsKey(const CompileOptions &options);

/// Compiles as OPTIONS say; diagnostics go to CONTEXT's handler. The context
/// needs the dialects of registerAllDialects.
mlir::LogicalResult compile(mlir::MLIRContext &context, const CompileOptions &options);

} // namespace tcc

#endif // TCC_COMPILER_COMPILE_H
