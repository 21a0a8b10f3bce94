//===- ArtifactWriter.h - LLVM dialect to model.so -------------------------===//
//
// The last stage for both targets: translate the lowered module (host code;
// for CUDA with its PTX, assembled here by ptxas) to LLVM IR, add the
// entry-point wrappers and the descriptor of runtime/include/tcc/abi.h,
// optimize (kernels O3 or O2, host O1), emit an object file in-process, link a shared library that
// exports only the descriptor.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_ARTIFACTWRITER_H
#define TCC_COMPILER_ARTIFACTWRITER_H

#include "compiler/LLVMCodegen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tcc {

/// One tensor of the memory plan, read from `tcc.plan` before lowering.
struct PlannedTensor {
  std::string name;
  int32_t role = 0;   // tcc_role
  int32_t dtype = 0;  // tcc_dtype
  int32_t region = 0; // tcc_region
  std::vector<int64_t> shape;
  int64_t offset = 0, size = 0;
};

/// An intermediate buffer of the plan: where it lives and the ops (by
/// position in the function) between which it is live.
struct PlannedTemp {
  int64_t offset = 0, size = 0, firstOp = 0, lastOp = 0;
  std::string node; ///< the ONNX node it was allocated for
};

/// One entry point: the lowered function and its plan.
struct PlannedEntry {
  std::string name;     // "infer"
  std::string function; // symbol of the lowered function
  std::vector<PlannedTensor> tensors;
  std::vector<PlannedTemp> temps;
  int64_t arenaSize = 0, stateSize = 0;
};

/// The tcc_dtype of an element type, or 0 if the artifact format has none.
int32_t abiDtypeOf(mlir::Type elementType);

/// Reads the plans recorded by tcc-plan-memory (call before lowering to the
/// LLVM dialect, which drops function attributes), checking that every
/// tensor lies inside its region and has a role and a type the artifact
/// format knows.
mlir::FailureOr<std::vector<PlannedEntry>> readPlans(mlir::ModuleOp module);

/// The entry points compiled for another CPU: their module, lowered to the
/// LLVM dialect from the same plan as the artifact's.
struct CpuVariantCode {
  TargetCpu cpu;
  mlir::ModuleOp module;
};

struct ArtifactOptions {
  std::string fingerprint; ///< hex digest identifying model + options
  /// The CPU the code is for (tcc --cpu); its recorded features are what
  /// the runtime checks at load.
  TargetCpu cpu;
  /// Code variants the artifact also holds, best first (CPU artifacts).
  std::vector<CpuVariantCode> variants;
  bool optimize = true;
  /// Device artifacts: the CUDA toolkit whose ptxas assembles the kernels.
  std::string cudaToolkit = "/usr/local/cuda";
  /// LLVM's worker threads (0: every core); the output does not depend on it.
  unsigned threads = 0;
  /// The object code of kernel groups is looked up and stored here (null:
  /// no cache).
  CompileCache *cache = nullptr;
  /// Where the LLVM stages' times nest (null: not timed).
  mlir::TimingScope *timing = nullptr;
  /// Filled in when set: kernels, groups, groups from the cache.
  CodegenStats *stats = nullptr;
};

/// What `--emit` can stop at after the LLVM dialect.
enum class ArtifactStage { LLVMIR, Object, SharedLibrary };

/// Translates `module` (LLVM dialect) and writes the requested stage to
/// `outputPath` ("-" for stdout, text stages only). Emits diagnostics and
/// returns failure on error.
mlir::LogicalResult writeArtifact(mlir::ModuleOp module,
                                  llvm::ArrayRef<PlannedEntry> entries,
                                  const ArtifactOptions &options,
                                  ArtifactStage stage,
                                  llvm::StringRef outputPath);

} // namespace tcc

#endif // TCC_COMPILER_ARTIFACTWRITER_H
