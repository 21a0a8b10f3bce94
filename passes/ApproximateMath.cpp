//===- ApproximateMath.cpp - vectorizable transcendental functions --------===//
//
// Upstream's math-to-llvm lowering turns math.exp into llvm.exp, which LLVM
// expands into a call of libm's expf per element: a loop with a call cannot
// be vectorized. Upstream also has polynomial approximations but no pass that
// applies them with a chosen op list; this is that pass.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

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

struct ApproximateMathPass
    : tcc::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // f16 / bf16 through f32, then the f32 polynomials.
    populateMathF32ExpansionPatterns(patterns, isApproximated);
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
