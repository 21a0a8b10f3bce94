//===- LLVMCodegen.h - object code on every core, through the cache --------===//
//
// The artifact's LLVM module is split into groups: the kernels (functions
// named `kernel_*`) spread over a fixed number of groups by their names,
// which tcc-dedup-kernels derives from their bodies, and one host group with
// everything else (the entry points, the descriptor, shared constants).
// Each group is optimized and compiled to an object file in its own
// LLVMContext on a thread pool, or taken from the compile cache. The groups
// do not depend on the thread count, so neither do the object files: the
// artifact is the same bytes for any number of threads.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_LLVMCODEGEN_H
#define TCC_COMPILER_LLVMCODEGEN_H

#include "mlir/Support/LogicalResult.h"
#include "mlir/Support/Timing.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Target/TargetMachine.h"

#include <string>
#include <vector>

namespace tcc {

class CompileCache;

struct CodegenOptions {
  std::string cpu = "x86-64-v3";
  bool optimize = true;
  /// Worker threads; 0: every core.
  unsigned threads = 0;
  /// Null: no cache.
  CompileCache *cache = nullptr;
};

/// What the codegen did, for --time-report.
struct CodegenStats {
  unsigned kernels = 0, kernelCalls = 0, groups = 0, cached = 0;
};

/// Creates the x86-64 target machine tcc compiles for.
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(llvm::StringRef cpu, std::string &error,
                    llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive);

/// LLVM's default pipeline at LEVEL over M.
void optimizeModule(llvm::Module &m, llvm::TargetMachine &tm,
                    llvm::OptimizationLevel level = llvm::OptimizationLevel::O2);

/// Compiles M (its triple and data layout set) into object files, one per
/// group, in a fixed order; M is left split (its kernels external). Errors
/// go to ERROR.
mlir::FailureOr<std::vector<std::string>> emitObjects(llvm::Module &m,
                                                      const CodegenOptions &options,
                                                      mlir::TimingScope &timing,
                                                      CodegenStats &stats, std::string &error);

} // namespace tcc

#endif // TCC_COMPILER_LLVMCODEGEN_H
