//===- ApproximateMath.cpp - vectorizable transcendental functions --------===//
//
// Upstream's math-to-llvm lowering turns math.exp into llvm.exp, which LLVM
// expands into a call of libm's expf per element: a loop with a call cannot
// be vectorized. Upstream also has polynomial approximations but no pass that
// applies them with a chosen op list; this is that pass.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tcc {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// The ops tcc approximates. Trigonometric and inverse functions are rare in
/// models and keep libm's accuracy.
bool isApproximated(StringRef name) {
  return llvm::is_contained(
      {math::ExpOp::getOperationName(), math::ExpM1Op::getOperationName(),
       math::Exp2Op::getOperationName(), math::LogOp::getOperationName(),
       math::Log1pOp::getOperationName(), math::Log2Op::getOperationName(),
       math::TanhOp::getOperationName(), math::ErfOp::getOperationName()},
      name);
}

/// f32 erf(x) as one rational function of x^2: x P(x^2) / Q(x^2) with x
/// clamped to [-3.92, 3.92] (beyond, erf rounds to +-1 in f32) and the
/// result to [-1, 1]: 2 min/max, 10 fma, 2 mul, one division and 2 min/max
/// per element, where upstream's approximation selects between three
/// intervals' coefficients (8 fma, 21 selects, 2 divisions). GELU's erf
/// forward and backward ran through it on every MLP activation.
///
/// P has degree 6 and Q degree 4 in x^2; their coefficients were fitted
/// here (minimax of the relative error against f64 erf on [0, 3.92] by
/// iteratively reweighted linearized least squares, then rounded to f32).
/// In f64 the fit is within 5.2e-8 relative; evaluated in f32 with fma
/// its largest error is 3.1e-7 (relative where |erf| >= 1e-3, absolute
/// below; test/integration/approximate-math.mlir), from the rounding of
/// the large terms of P and Q near the clamp; upstream's is 2.4e-7. Odd in
/// x exactly (x^2 is even), erf(0) = 0, NaN stays NaN (maximumf / minimumf
/// propagate it).
struct RationalErf : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ErfOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    static constexpr float kP[] = {1.128379107e+00f, 1.998811960e-01f, 5.056795850e-02f,
                                   3.699919907e-03f, 1.418200554e-04f, -1.957977474e-06f,
                                   1.992973253e-08f};
    static constexpr float kQ[] = {1.000000000e+00f, 5.104717612e-01f, 1.149808168e-01f,
                                   1.434973534e-02f, 9.556602454e-04f};
    static constexpr float kClamp = 3.92f;
    Location loc = op.getLoc();
    auto constant = [&](float v) -> Value {
      Attribute a = rewriter.getF32FloatAttr(v);
      if (auto shaped = dyn_cast<ShapedType>(type))
        a = SplatElementsAttr::get(shaped, a);
      return arith::ConstantOp::create(rewriter, loc, type, cast<TypedAttr>(a));
    };
    auto horner = [&](ArrayRef<float> coefficients, Value t) {
      Value acc = constant(coefficients.back());
      for (float c : llvm::reverse(coefficients.drop_back()))
        acc = math::FmaOp::create(rewriter, loc, acc, t, constant(c));
      return acc;
    };
    // Each op on its own line: arguments are evaluated in an unspecified
    // order, and so would the constants be created (scripts/check_arg_order.py).
    auto clamp = [&](Value v, float bound) {
      Value hi = constant(bound);
      Value below = arith::MinimumFOp::create(rewriter, loc, v, hi);
      Value lo = constant(-bound);
      return arith::MaximumFOp::create(rewriter, loc, below, lo).getResult();
    };
    Value x = clamp(op.getOperand(), kClamp);
    Value t = arith::MulFOp::create(rewriter, loc, x, x);
    Value p = horner(kP, t);
    Value num = arith::MulFOp::create(rewriter, loc, x, p);
    Value q = horner(kQ, t);
    Value r = clamp(arith::DivFOp::create(rewriter, loc, num, q), 1.0f);
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct ApproximateMathPass
    : tcc::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // f16 / bf16 through f32, then the f32 polynomials; erf is tcc's own.
    populateMathF32ExpansionPatterns(patterns, isApproximated);
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return isApproximated(name) && name != math::ErfOp::getOperationName();
    });
    patterns.add<RationalErf>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
