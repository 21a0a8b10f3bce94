//===- ExpandArith.cpp - arith expansions that keep max / min -------------===//
//
// Upstream's arith-expand with the bf16 and ceil / floor division patterns
// only: its maximumf / minimumf expansion (compares and selects) hides the
// reduction from LLVM's loop vectorizer (Passes.td says more). For a CPU
// with AVX512-BF16, f32 -> bf16 truncations stay LLVM's (its instruction).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tcc {
#define GEN_PASS_DEF_EXPANDARITHPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// f32 -> bf16 truncation as llvm.fptrunc, which LLVM lowers to
/// vcvtneps2bf16 on a CPU with AVX512-BF16.
struct NativeBF16Rounding : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op, PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getIn().getType()).isF32() ||
        !getElementTypeOrSelf(op.getType()).isBF16() || op.getRoundingmodeAttr())
      return failure();
    rewriter.replaceOpWithNewOp<LLVM::FPTruncOp>(op, op.getType(), op.getIn());
    return success();
  }
};

struct ExpandArithPass : tcc::impl::ExpandArithPassBase<ExpandArithPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    if (nativeBF16Rounding)
      patterns.add<NativeBF16Rounding>(&getContext(), /*benefit=*/2);
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
