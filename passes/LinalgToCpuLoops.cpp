//===- LinalgToCpuLoops.cpp - linalg on buffers to (parallel) loops -------===//
//
// Upstream offers convert-linalg-to-loops (all sequential) and
// convert-linalg-to-parallel-loops (every op parallel, also a 4-element add);
// this pass chooses per op, by its iteration count.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace tcc {
#define GEN_PASS_DEF_LINALGTOCPULOOPSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// Iterations of all loops of OP, or nullopt when a range is dynamic.
std::optional<int64_t> iterationCount(linalg::LinalgOp op) {
  int64_t count = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    if (range != 0 && count > INT64_MAX / range)
      return INT64_MAX;
    count *= range;
  }
  return count;
}

/// Parallel chunks worth having: enough to balance a few dozen threads.
constexpr int64_t kMinParallelIterations = 64;

/// How many of OP's outermost loops to run as one parallel loop: the
/// shortest prefix of its leading parallel dimensions with at least
/// kMinParallelIterations iterations (all of them when none is that long).
/// Only a prefix: collapsing every dimension would make each iteration
/// recover its indices with divisions, and a parallel loop inside a
/// reduction loop would fork once per reduction step.
unsigned parallelPrefix(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned k = 0;
  int64_t product = 1;
  while (k < iterators.size() && iterators[k] == utils::IteratorType::parallel &&
         !ShapedType::isDynamic(ranges[k]) && product < kMinParallelIterations)
    product *= ranges[k++];
  return k;
}

/// Replaces the K outermost loops of the perfect nest LOOPS by one
/// scf.parallel; returns false (leaving the nest alone) when a loop bound is
/// computed inside the nest.
bool parallelizeOuterLoops(RewriterBase &rewriter, ArrayRef<Operation *> loops,
                           unsigned k) {
  SmallVector<scf::ForOp> fors;
  for (unsigned i = 0; i < k; ++i) {
    auto f = dyn_cast<scf::ForOp>(loops[i]);
    if (!f || f.getNumRegionIterArgs() != 0)
      return false;
    fors.push_back(f);
  }
  scf::ForOp outer = fors.front(), inner = fors.back();
  SmallVector<Value> lbs, ubs, steps;
  for (scf::ForOp f : fors) {
    for (Value v : {f.getLowerBound(), f.getUpperBound(), f.getStep()})
      if (!v.getParentRegion()->isProperAncestor(&outer.getRegion()) &&
          v.getParentRegion() != outer->getParentRegion())
        return false;
    lbs.push_back(f.getLowerBound());
    ubs.push_back(f.getUpperBound());
    steps.push_back(f.getStep());
  }
  rewriter.setInsertionPoint(outer);
  auto par = scf::ParallelOp::create(rewriter, outer.getLoc(), lbs, ubs, steps);
  for (unsigned i = 0; i + 1 < k; ++i)
    rewriter.replaceAllUsesWith(fors[i].getInductionVar(), par.getInductionVars()[i]);
  Block *body = inner.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, par.getBody()->getTerminator(),
                             ValueRange{par.getInductionVars()[k - 1]});
  rewriter.eraseOp(outer);
  return true;
}

struct LinalgToCpuLoopsPass
    : tcc::impl::LinalgToCpuLoopsPassBase<LinalgToCpuLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op->emitError("linalg op on tensors after bufferization");
        return signalPassFailure();
      }
      std::optional<int64_t> count = iterationCount(op);
      unsigned prefix = count && *count >= minParallelWork ? parallelPrefix(op) : 0;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops = linalg::linalgOpToLoops(rewriter, op);
      if (failed(loops)) {
        op->emitError("cannot lower to loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
      if (prefix > 0 && loops->size() >= prefix)
        parallelizeOuterLoops(rewriter, *loops, prefix);
    }
  }
};

} // namespace
