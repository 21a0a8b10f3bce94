//===- MemoryBudget.cpp - the plan under a memory budget ------------------===//
//
// A budget is checked against the real plan, not the recomputation pass's
// model of it: each attempt compiles the imported program through the memory
// plan and measures what it allocates (docs/memory.md). --batch=auto searches
// the batches by the same attempts.
//
//===---------------------------------------------------------------------===//

#include "compiler/Compilation.h"

#include "passes/training/RematSummary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

FailureOr<tcc::MemoryFootprint> tcc::Compilation::readFootprint() {
  FailureOr<std::vector<tcc::PlannedEntry>> read = tcc::readPlans(*module);
  if (failed(read))
    return failure();
  return tcc::memoryFootprint(*module, *read, device ? StringRef(cuda.chip) : StringRef());
}

/// After a plan that fits with room to spare (the pass's tensor-level model
/// overestimates the real plan, most where fusion removes buffers), raises
/// the pass's target towards its model peak without recomputation, by
/// bisection, and keeps the highest target whose plan still fits: the same
/// budget for less recomputed arithmetic (resnet18 at state + 75% of its
/// arena: 28% of the step recomputed at the first target). Not while
/// --batch=auto probes (a fit is all it asks).
template <typename Attempt>
LogicalResult tcc::Compilation::recomputeLess(Attempt &attempt, int64_t fits,
                                         tcc::MemoryFootprint got) {
  int64_t budget = options.memoryBudget;
  int64_t above = 0;
  module->walk([&](func::FuncOp fn) {
    if (std::optional<tcc::RematSummary> remat = tcc::readRematSummary(fn))
      above = std::max(above, remat->peakBefore);
  });
  if (probing || budget - got.total() < budget / 32 || above <= fits)
    return success();
  // The plan moves with the model's target by about as much: a target more
  // than twice the room above the one that fits is not worth a round (the
  // 6-layer GPT at state + 35%: 9 MiB of room, a model peak 260 MiB above).
  above = std::min(above, fits + 2 * (budget - got.total()));
  bool lastFits = true;
  for (int round = 0; round < 3; ++round) {
    int64_t mid = fits + (above - fits) / 2;
    tcc::RematOptions remat;
    remat.arenaBudget = mid;
    FailureOr<tcc::MemoryFootprint> trial = attempt(remat);
    if (failed(trial))
      return failure();
    lastFits = trial->total() <= budget;
    (lastFits ? fits : above) = mid;
  }
  if (lastFits)
    return success();
  tcc::RematOptions remat;
  remat.arenaBudget = fits;
  return failed(attempt(remat)) ? failure() : success();
}

LogicalResult tcc::Compilation::planWithBudget() {
  int64_t budget = options.memoryBudget;
  OwningOpRef<ModuleOp> base(module->clone());
  // Each attempt compiles a copy of the imported program through the plan
  // and measures what the real plan allocates, not the pass's estimate.
  auto attempt = [&](const tcc::RematOptions &remat) -> FailureOr<tcc::MemoryFootprint> {
    module = OwningOpRef<ModuleOp>(base->clone());
    if (failed(planStages(remat)))
      return failure();
    return readFootprint();
  };
  tcc::RematOptions off, max;
  off.mode = tcc::RematMode::Off;
  max.mode = tcc::RematMode::Max;
  if (probing) {
    // --batch=auto asks only whether the batch fits at all: with the most
    // recomputation it does, or no budgeted compile of it would (the
    // target ladder below ends at max). One plan per candidate instead of
    // up to eight; the chosen batch is then compiled as any other.
    bool recompute = train && options.remat != tcc::Remat::Off;
    FailureOr<tcc::MemoryFootprint> least = attempt(recompute ? max : off);
    if (failed(least))
      return failure();
    return least->total() <= budget ? success() : refuseBudget(*least, *least);
  }
  if (options.remat == tcc::Remat::Max) {
    if (failed(attempt(off)))
      return failure();
    FailureOr<std::vector<tcc::PlannedEntry>> unremat = tcc::readPlans(*module);
    if (succeeded(unremat))
      plansWithoutRemat = std::move(*unremat);
    FailureOr<tcc::MemoryFootprint> least = attempt(max);
    if (failed(least))
      return failure();
    return budget == 0 || least->total() <= budget ? success() : refuseBudget(*least, *least);
  }
  FailureOr<tcc::MemoryFootprint> plain = attempt(off);
  if (failed(plain))
    return failure();
  if (plain->total() <= budget)
    return success();
  if (!train || options.remat == tcc::Remat::Off)
    return refuseBudget(*plain, std::nullopt);
  FailureOr<std::vector<tcc::PlannedEntry>> unremat = tcc::readPlans(*module);
  if (succeeded(unremat))
    plansWithoutRemat = std::move(*unremat);
  // The pass plans the arena with a tensor-level model; the real plan
  // differs (fusion removes buffers, alignment and packing add bytes):
  // lower the model's target by what the plan overshot, a few times.
  int64_t arenaTarget = budget - plain->state - plain->workspace;
  int64_t target = arenaTarget;
  for (int round = 0; round < 6 && target > 0; ++round) {
    tcc::RematOptions remat;
    remat.arenaBudget = target;
    FailureOr<tcc::MemoryFootprint> got = attempt(remat);
    if (failed(got))
      return failure();
    if (got->total() <= budget)
      return recomputeLess(attempt, target, *got);
    if (tcc::rematModelPeak(*module) > target)
      break; // the pass reached its floor: only max can do better
    target -= std::max<int64_t>(got->total() - budget, 4096);
  }
  FailureOr<tcc::MemoryFootprint> least = attempt(max);
  if (failed(least))
    return failure();
  if (least->total() <= budget)
    return success();
  return refuseBudget(*plain, *least);
}

LogicalResult tcc::Compilation::chooseBatch() {
  int64_t global = options.globalBatch;
  auto accumulation = [&](int64_t b) { return global > 0 ? global / b : training.gradAccum; };
  // Compiles the whole plan at batch B (a fresh import each time).
  auto fits = [&](int64_t b) -> FailureOr<bool> {
    batch = b;
    training.gradAccum = accumulation(b);
    if (failed(importModel()) || failed(runStage("import passes", tcc::buildImportPipeline)))
      return failure();
    probing = true;
    notFitting = false;
    LogicalResult planned = planWithBudget();
    probing = false;
    if (failed(planned) && !notFitting)
      return failure();
    return succeeded(planned);
  };
  // The candidates: every batch (doubling, then bisection), or with a
  // global batch its divisors, largest first.
  int64_t best = 0, tooLarge = 0;
  if (global > 0) {
    for (int64_t b = global; b >= 1 && !best; --b) {
      if (global % b)
        continue;
      FailureOr<bool> ok = fits(b);
      if (failed(ok))
        return failure();
      if (*ok)
        best = b;
      else
        tooLarge = b;
    }
  } else {
    constexpr int64_t kLargest = int64_t(1) << 20;
    int64_t lo = 0, hi = 1;
    for (;; hi *= 2) {
      FailureOr<bool> ok = hi > kLargest ? FailureOr<bool>(false) : fits(hi);
      if (failed(ok))
        return failure();
      if (!*ok)
        break;
      lo = hi;
    }
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      FailureOr<bool> ok = fits(mid);
      if (failed(ok))
        return failure();
      (*ok ? lo : hi) = mid;
    }
    best = lo;
    tooLarge = hi;
  }
  if (best == 0) {
    // Batch 1 does not fit: compile it once more, to say why.
    batch = 1;
    training.gradAccum = accumulation(1);
    if (failed(importModel()) || failed(runStage("import passes", tcc::buildImportPipeline)))
      return failure();
    (void)planWithBudget();
    return error() << "--batch=auto: not even batch 1 fits --memory-budget="
                   << tcc::humanBytes(options.memoryBudget);
  }
  llvm::raw_ostream &os = *options.reportStream;
  os << "tcc: --batch=auto: batch " << best;
  if (global > 0)
    os << " x " << accumulation(best) << " accumulated micro-batches = " << global;
  os << " fits --memory-budget=" << tcc::humanBytes(options.memoryBudget);
  if (tooLarge > best)
    os << " (batch " << tooLarge << " does not)";
  os << "\n";
  os.flush();
  batch = best;
  training.gradAccum = accumulation(best);
  return importModel();
}

LogicalResult tcc::Compilation::refuseBudget(const tcc::MemoryFootprint &needed,
                                        std::optional<tcc::MemoryFootprint> least) {
  if (probing) {
    notFitting = true;
    return failure();
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  int64_t budget = options.memoryBudget;
  const tcc::MemoryFootprint &best = least ? *least : needed;
  os << "--memory-budget=" << tcc::humanBytes(budget) << " (" << budget
     << " bytes) cannot hold this model: ";
  if (least)
    os << "with the most recomputation (--remat=max) it needs " << tcc::humanBytes(best.total())
       << ", " << tcc::humanBytes(best.total() - budget) << " more";
  else
    os << "it needs " << tcc::humanBytes(best.total()) << ", "
       << tcc::humanBytes(best.total() - budget) << " more"
       << (train ? " (recomputation is off)" : " (an inference artifact recomputes nothing)");
  os << " (arena " << tcc::humanBytes(best.arena) << " + state " << tcc::humanBytes(best.state);
  if (best.workspace)
    os << " + library workspace " << tcc::humanBytes(best.workspace);
  os << ")\n";
  FailureOr<std::vector<tcc::PlannedEntry>> read = tcc::readPlans(*module);
  if (succeeded(read))
    tcc::printPeak(*read, os, 8);
  os << "the smallest budget that fits: " << tcc::humanBytes(best.total()) << " ("
     << best.total() << " bytes)";
  if (least)
    os << "; or a smaller batch (--batch=auto chooses the largest that fits)";
  return error() << text;
}
