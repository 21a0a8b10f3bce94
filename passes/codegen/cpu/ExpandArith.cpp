//===- ExpandArith.cpp - arith expansions that keep max / min -------------===//
//
// Upstream's arith-expand with the bf16 and ceil / floor division patterns
// only: its maximumf / minimumf expansion (compares and selects) hides the
// reduction from LLVM's loop vectorizer (Passes.td says more).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tcc {
#define GEN_PASS_DEF_EXPANDARITHPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

struct ExpandArithPass : tcc::impl::ExpandArithPassBase<ExpandArithPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
