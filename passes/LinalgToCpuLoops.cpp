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
      bool parallel = op.getNumParallelLoops() > 0 &&
                      (!count || *count >= minParallelWork);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          parallel ? linalg::linalgOpToParallelLoops(rewriter, op)
                   : linalg::linalgOpToLoops(rewriter, op);
      if (failed(loops)) {
        op->emitError("cannot lower to loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
