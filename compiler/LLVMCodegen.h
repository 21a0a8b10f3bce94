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
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Target/TargetMachine.h"

#include <optional>
#include <string>
#include <vector>

namespace tcc {

class CompileCache;

struct CodegenOptions {
  std::string cpu = "x86-64-v3";
  /// LLVM's feature string on top of CPU ("+avx512f,-amx-tile,..."; `tcc
  /// --cpu=native` passes the host's), "" for the CPU's own.
  std::string features;
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

/// Creates the x86-64 target machine tcc compiles for: CPU with FEATURES
/// (LLVM's "+f,-g" string; "" for the CPU's own).
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(llvm::StringRef cpu, llvm::StringRef features, std::string &error,
                    llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive);

/// What an x86-64-v3 artifact records as its CPU features.
inline constexpr const char *kX86_64V3Features = "avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe";

/// The CPU that `tcc --cpu` names, resolved for code generation; by default
/// x86-64-v3.
struct TargetCpu {
  std::string name = "x86-64-v3"; ///< LLVM's CPU name ("x86-64-v3", "znver4", ...)
  std::string features;           ///< LLVM's feature string on top of it ("" for its own)
  /// What the artifact records and the runtime checks at load (LLVM feature
  /// names the runtime knows, comma-separated).
  std::string recorded = kX86_64V3Features;
  /// 512 where the CPU has AVX-512 and LLVM's tuning for it does not prefer
  /// 256-bit vectors (znver4; not Intel's AVX-512 CPUs), else 256.
  int64_t vectorBits = 256;
  /// A code variant's name in the artifact (its functions' suffix, the
  /// value of TCC_CPU_VARIANT that picks it) where it is not `name`.
  std::string variantName;

  /// The name the artifact gives this CPU's code variant.
  const std::string &variant() const { return variantName.empty() ? name : variantName; }
  /// Whether the CPU rounds f32 to bf16 itself (AVX512-BF16's
  /// vcvtneps2bf16), so that generated code converts with it.
  bool roundsBF16() const;
};

/// The code variants an artifact for BASE holds besides BASE's own code,
/// best first: for x86-64-v3 (the portable default), x86-64-v4 with
/// AVX512-BF16 ("x86-64-v4-bf16": bf16 rounding by the instruction) and
/// x86-64-v4 (AVX-512), both with 512-bit vectors; none for any other CPU
/// (docs/precision.md).
std::vector<TargetCpu> cpuVariantsOf(const TargetCpu &base);

/// The function attribute that marks a variant's functions in the
/// artifact's LLVM module (the code generation counts the base's kernels).
inline constexpr const char *kVariantAttr = "tcc-cpu-variant";

/// Resolves --cpu=NAME: "x86-64-v3" (the default: AVX2, FMA), "native" (the
/// host's CPU and features), or any CPU LLVM's x86 target knows
/// ("x86-64-v4", "skylake-avx512", "znver4", ...). Null and ERROR set for a
/// name LLVM does not know. FEATURES, LLVM's "+f,-g" string, adds to the
/// CPU's own.
std::optional<TargetCpu> resolveTargetCpu(llvm::StringRef name, std::string &error,
                                          llvm::StringRef features = "");

/// LLVM's default pipeline at LEVEL over M.
void optimizeModule(llvm::Module &m, llvm::TargetMachine &tm,
                    llvm::OptimizationLevel level = llvm::OptimizationLevel::O2);

/// Rewrites of optimized IR that LLVM's optimizer would undo, for the
/// instruction selection of TM: bf16 selects as selects of their bits (x86
/// without AVX512-BF16 would call libgcc per element), and, in functions
/// compiled for AVX-512, scalar llvm.maximum / llvm.minimum as
/// createMinMax's compares and selects.
void prepareForInstructionSelection(llvm::Module &m, llvm::TargetMachine &tm);

/// Makes CONTEXT drop LLVM's optimization remarks and failures (a
/// reduction LLVM cannot vectorize as tcc asked stays a loop in order, the
/// compiler's business); everything else is printed as LLVM prints it.
void quietOptimizationDiagnostics(llvm::LLVMContext &context);

/// IEEE 754-2019 maximum (MAX) or minimum of the scalars X and Y, as
/// llvm.maximum / llvm.minimum compute it, in compares and selects: a NaN
/// operand gives a NaN, and of two equal values maximum takes the AND of
/// their bits (+0 over -0), minimum the OR.
llvm::Value *createMinMax(llvm::IRBuilderBase &b, bool max, llvm::Value *x, llvm::Value *y);

/// Compiles M (its triple and data layout set) into object files, one per
/// group, in a fixed order; M is left split (its kernels external). Errors
/// go to ERROR.
mlir::FailureOr<std::vector<std::string>> emitObjects(llvm::Module &m,
                                                      const CodegenOptions &options,
                                                      mlir::TimingScope &timing,
                                                      CodegenStats &stats, std::string &error);

} // namespace tcc

#endif // TCC_COMPILER_LLVMCODEGEN_H
