//===- Compilation.h - one compile, as the compiler's files share it -------===//
//
// tcc::compile builds one Compilation and runs it. Its members are defined
// by concern: the stage driver and the import (Compile.cpp), the options'
// checks and a .tcc recipe (CompileOptions.cpp), the warnings a cached
// artifact replays (CompileWarnings.cpp), the fingerprint and the compile
// cache (ArtifactCache.cpp), and the memory budget and --batch=auto
// (MemoryBudget.cpp). Internal to the compiler: not installed.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_COMPILATION_H
#define TCC_COMPILER_COMPILATION_H

#include "compiler/ArtifactWriter.h"
#include "compiler/Compile.h"
#include "compiler/CompileCache.h"
#include "compiler/MemoryReport.h"
#include "compiler/SourceKey.h"
#include "compiler/Weights.h"
#include "compiler/cpu/CpuPipeline.h"
#include "compiler/cuda/CudaPipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tcc {

namespace dsl {
struct Recipe;
} // namespace dsl

/// One compile: the options, the module as it moves through the stages, and
/// what the stages hand to the writers.
class Compilation {
public:
  Compilation(mlir::MLIRContext &context, const CompileOptions &options)
      : context(context), options(options), device(options.target != "cpu"),
        train(options.train), training(options.training), batch(options.import.batch) {
    timing.setEnabled(options.timeReport);
    timing.setOutput(createOutputStrategy(mlir::DefaultTimingManager::OutputFormat::Text,
                                          *options.reportStream));
    root = timing.getRootScope();
  }

  mlir::LogicalResult run();
  /// The stages after the import, up to the one asked for.
  mlir::LogicalResult compileStages();
  /// The training step and the plans, recomputing as `memoryBudget` and
  /// `remat` say; fails with an explanation when the budget cannot hold.
  mlir::LogicalResult planWithBudget();
  template <typename Attempt>
  mlir::LogicalResult recomputeLess(Attempt &attempt, int64_t fits, MemoryFootprint got);
  /// --batch=auto: the largest batch (with --global-batch, the largest
  /// divisor of it, and the accumulation reaching it) whose plan fits the
  /// budget; leaves the module imported at that batch.
  mlir::LogicalResult chooseBatch();

private:
  mlir::InFlightDiagnostic error() { return mlir::emitError(mlir::UnknownLoc::get(&context)); }

  // The options (CompileOptions.cpp).
  mlir::LogicalResult checkOptions();
  void applyRecipe(const dsl::Recipe &recipe);

  // The import and the stages (Compile.cpp).
  mlir::LogicalResult importModel();
  mlir::LogicalResult importDsl();
  /// The model's buffers (parameters marked tcc.buffer) keep their exact
  /// values under tcc-run --init: their initializer record says so.
  void recordBufferInits();
  /// --length-buckets: the model again at each value but the largest
  /// (lengthVariants), through the import passes when IMPORTPASSES.
  mlir::LogicalResult importLengthVariants();
  /// --length-buckets: each variant's training step, moved into the module.
  mlir::LogicalResult mergeLengthVariants(const RematOptions &remat);
  /// Runs the passes BUILD adds on TARGET (default: the module).
  mlir::LogicalResult runStage(llvm::StringRef name,
                               llvm::function_ref<void(mlir::OpPassManager &)> build,
                               mlir::ModuleOp target = nullptr);
  /// The training step (with REMAT), linalg and fusion, and, from
  /// Bufferized on, the memory plan.
  mlir::LogicalResult planStages(const RematOptions &remat);
  CpuPipelineOptions cpuOptions() const;
  /// The CPU variants this artifact holds (cpuVariantsOf): a 16-bit CPU
  /// training step for the default CPU, unless options.cpuVariants is off.
  std::vector<TargetCpu> variantCpus() const;
  /// The CUDA kernels, then the plans (split reductions grow the arena by
  /// their scratch), then PTX output or the host code's LLVM dialect.
  mlir::LogicalResult lowerPlanned();
  mlir::LogicalResult writeArtifact();
  mlir::LogicalResult writeText(llvm::function_ref<void(llvm::raw_ostream &)> print);
  void printTimeReport();

  // The memory budget (MemoryBudget.cpp).
  /// The plans of MODULE (planned), and what they allocate.
  mlir::FailureOr<MemoryFootprint> readFootprint();
  /// The refusal of a budget: by how much, what is live at the peak, and
  /// the least that recomputation reaches (LEAST; none for --remat=off).
  mlir::LogicalResult refuseBudget(const MemoryFootprint &needed,
                                   std::optional<MemoryFootprint> least);

  // The fingerprint and the compile cache (ArtifactCache.cpp).
  /// A hash of what determines the artifact: the imported program, the
  /// weights and the options. The artifact carries it; with the compiler's
  /// identity it keys the artifact in the cache.
  std::string fingerprint() const;
  /// --zero=1: the fingerprint of the same compile without it, as the
  /// metadata TCC_METADATA_STATE_FINGERPRINT (its checkpoints' identity).
  void recordStateFingerprint();
  /// The options in the fingerprint: those of tcc::artifactOptionsKey
  /// after the import (a .tcc recipe applied), the training step's only
  /// when it trains.
  std::string canonicalOptions() const;
  /// The fingerprint the source key maps to, then its artifact, when there.
  mlir::FailureOr<bool> reuseBySource();
  /// Maps the source key to the fingerprint (after a compile or a reuse).
  void storeSource();
  /// The artifact and its weights from the cache, when there; the
  /// warnings of the compile that stored it, after EARLIER ones.
  mlir::FailureOr<bool> reuseArtifact(llvm::StringRef earlier = "");
  void storeArtifact();

  mlir::MLIRContext &context;
  const CompileOptions &options;
  bool device;
  /// What to train with: the options, under a .tcc file's recipe.
  bool train;
  TrainingOptions training;
  CudaPipelineOptions cuda;
  /// --cpu, resolved by checkOptions (x86-64-v3 before).
  TargetCpu targetCpu;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<Weight> weights;
  /// --length-buckets: the model imported at each smaller value (after the
  /// import passes), and while one is imported, that value.
  std::vector<std::pair<int64_t, mlir::OwningOpRef<mlir::ModuleOp>>> lengthVariants;
  std::optional<int64_t> variantLength;
  std::vector<PlannedEntry> plans;
  /// The planned module lowered again for each of variantCpus().
  std::vector<std::pair<TargetCpu, mlir::OwningOpRef<mlir::ModuleOp>>> cpuVariants;
  /// The plans without recomputation, when a budget made the compiler
  /// recompute (for the report and the plot).
  std::vector<PlannedEntry> plansWithoutRemat;
  mlir::DefaultTimingManager timing;
  mlir::TimingScope root;
  std::unique_ptr<CompileCache> cache;
  std::string artifactFingerprint;
  CodegenStats codegen;
  bool artifactFromCache = false;
  /// The artifact's cache key taken before the import, when the model can
  /// be keyed so; whether the artifact was found by it.
  std::optional<SourceKey> source;
  bool foundBySource = false;
  /// The import's warnings, kept with the source key (a compile that
  /// skips the import repeats them).
  std::string importWarnings;
  /// The warnings of this compile, one line each (location fields and the
  /// message, tab-separated), stored with a cached artifact and replayed
  /// when it is reused: a warm compile says what a cold one said.
  std::string warnings;
  /// The batch the import binds (--batch, or the one chooseBatch tries).
  std::optional<int64_t> batch;
  /// While chooseBatch probes: a budget that does not hold fails quietly
  /// and sets notFitting.
  bool probing = false, notFitting = false;
};

/// A diagnostic handler's body: a warning's line (the name, file, line and
/// column of its location and the message, tab-separated) goes to INTO, and
/// every diagnostic on to the caller's handler.
mlir::LogicalResult recordWarning(mlir::Diagnostic &diag, std::string &into);

/// Emits the warnings recorded by recordWarning again.
void replayWarnings(mlir::MLIRContext &context, llvm::StringRef text);

} // namespace tcc

#endif // TCC_COMPILER_COMPILATION_H
