//===- ExpandComposites.cpp - composite ops into primitives ---------------===//
//
// Rewrites activation functions that are compositions of primitive tcc ops.
// The expansions are written for numerical safety: softplus avoids exp
// overflow, elu feeds exp only non-positive values, so that no branch of a
// select produces inf that a gradient could later multiply by zero.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/support/TccBuilders.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tcc {
#define GEN_PASS_DEF_EXPANDCOMPOSITESPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;
using namespace tcc;

namespace {

Value compare(PatternRewriter &rewriter, Location loc, CmpPredicate p,
              Value a, Value b) {
  return CompareOp::create(rewriter, loc, p, a, b);
}

/// gelu(x) = 0.5 x (1 + erf(x / sqrt 2)), or with tanh:
/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
struct ExpandGelu : OpRewritePattern<GeluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GeluOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    Value inner;
    if (op.getApproximate()) {
      Value x3 = MulOp::create(rewriter, loc, x, MulOp::create(rewriter, loc, x, x));
      Value poly = AddOp::create(
          rewriter, loc, x,
          MulOp::create(rewriter, loc, splat(rewriter, loc, x, 0.044715), x3));
      inner = TanhOp::create(
          rewriter, loc,
          MulOp::create(rewriter, loc,
                        splat(rewriter, loc, x, std::sqrt(2.0 / M_PI)), poly));
    } else {
      inner = ErfOp::create(
          rewriter, loc,
          MulOp::create(rewriter, loc, x, splat(rewriter, loc, x, M_SQRT1_2)));
    }
    Value onePlus = AddOp::create(rewriter, loc, splat(rewriter, loc, x, 1.0), inner);
    Value half = MulOp::create(rewriter, loc, splat(rewriter, loc, x, 0.5), x);
    rewriter.replaceOpWithNewOp<MulOp>(op, half, onePlus);
    return success();
  }
};

/// softplus(x) = max(x, 0) + log(1 + exp(-|x|)).
struct ExpandSoftplus : OpRewritePattern<SoftplusOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftplusOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    Value negAbs = NegOp::create(rewriter, loc, AbsOp::create(rewriter, loc, x));
    Value one = splat(rewriter, loc, x, 1.0);
    Value log1p = LogOp::create(
        rewriter, loc,
        AddOp::create(rewriter, loc, one, ExpOp::create(rewriter, loc, negAbs)));
    rewriter.replaceOpWithNewOp<AddOp>(op, ReluOp::create(rewriter, loc, x),
                                       log1p);
    return success();
  }
};

/// leaky_relu(x) = select(x >= 0, x, alpha x).
struct ExpandLeakyRelu : OpRewritePattern<LeakyReluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LeakyReluOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    Value zero = splat(rewriter, loc, x, 0.0);
    Value scaled = MulOp::create(
        rewriter, loc, x,
        splat(rewriter, loc, x, op.getAlpha().convertToDouble()));
    rewriter.replaceOpWithNewOp<SelectOp>(
        op, compare(rewriter, loc, CmpPredicate::ge, x, zero), x, scaled);
    return success();
  }
};

/// elu(x) = select(x > 0, x, alpha (exp(min(x, 0)) - 1)).
struct ExpandElu : OpRewritePattern<EluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EluOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    Value zero = splat(rewriter, loc, x, 0.0);
    Value exp = ExpOp::create(rewriter, loc, MinOp::create(rewriter, loc, x, zero));
    Value expm1 = SubOp::create(rewriter, loc, exp, splat(rewriter, loc, x, 1.0));
    Value neg = MulOp::create(
        rewriter, loc, expm1,
        splat(rewriter, loc, x, op.getAlpha().convertToDouble()));
    rewriter.replaceOpWithNewOp<SelectOp>(
        op, compare(rewriter, loc, CmpPredicate::gt, x, zero), x, neg);
    return success();
  }
};

/// rsqrt(x) = 1 / sqrt(x); reciprocal(x) = 1 / x.
struct ExpandRsqrt : OpRewritePattern<RsqrtOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RsqrtOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    rewriter.replaceOpWithNewOp<DivOp>(
        op, splat(rewriter, loc, op.getInput(), 1.0),
        SqrtOp::create(rewriter, loc, op.getInput()));
    return success();
  }
};

struct ExpandReciprocal : OpRewritePattern<ReciprocalOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReciprocalOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<DivOp>(
        op, splat(rewriter, op.getLoc(), op.getInput(), 1.0), op.getInput());
    return success();
  }
};

struct ExpandCompositesPass
    : tcc::impl::ExpandCompositesPassBase<ExpandCompositesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandGelu, ExpandSoftplus, ExpandLeakyRelu, ExpandElu,
                 ExpandRsqrt, ExpandReciprocal>(&getContext());
    // Only the new ops are rewritten; folding would hide what the pass did.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      signalPassFailure();
  }
};

} // namespace
