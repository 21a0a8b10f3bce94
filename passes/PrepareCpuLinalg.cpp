//===- PrepareCpuLinalg.cpp - linalg on tensors, ready for fusion ---------===//
//
// Replaces upstream's (deprecated, all-or-nothing) generalization pass:
// elementwise named ops become generics for fusion, the ops that the runtime
// hands to a library keep their names.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tcc {
#define GEN_PASS_DEF_PREPARECPULINALGPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// matmul(transpose(A), B) and matmul(A, transpose(B)) with 2-D transposes
/// -> one matmul whose indexing maps read the operand transposed.
struct FoldTransposeIntoMatmul : OpRewritePattern<linalg::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.hasUserDefinedMaps())
      return failure();
    SmallVector<Value> inputs(op.getDpsInputs());
    bool transposed[2] = {false, false};
    for (int i = 0; i < 2; ++i) {
      auto t = inputs[i].getDefiningOp<linalg::TransposeOp>();
      if (!t || t.getPermutation() != ArrayRef<int64_t>{1, 0})
        continue;
      inputs[i] = t.getInput();
      transposed[i] = true;
    }
    if (!transposed[0] && !transposed[1])
      return failure();
    // Loops (m, n, k): A[m, k] or A[k, m]; B[k, n] or B[n, k]; C[m, n].
    MLIRContext *ctx = op.getContext();
    AffineExpr m, n, k;
    bindDims(ctx, m, n, k);
    auto map = [&](ArrayRef<AffineExpr> results) {
      return AffineMapAttr::get(AffineMap::get(3, 0, results, ctx));
    };
    Attribute maps = rewriter.getArrayAttr(
        {transposed[0] ? map({k, m}) : map({m, k}),
         transposed[1] ? map({n, k}) : map({k, n}), map({m, n})});
    auto mm = linalg::MatmulOp::create(
        rewriter, op.getLoc(), op->getResultTypes(), inputs, op.getDpsInits(),
        {rewriter.getNamedAttr("indexing_maps", maps)});
    rewriter.replaceOp(op, mm->getResults());
    return success();
  }
};

/// Ops the runtime may hand to a library, and fills (which such an op's
/// output starts from): kept named.
bool keepsName(linalg::LinalgOp op) {
  return isa<linalg::GenericOp, linalg::FillOp>(op) ||
         linalg::isaContractionOpInterface(op) ||
         linalg::isaConvolutionOpInterface(op);
}

struct PrepareCpuLinalgPass
    : tcc::impl::PrepareCpuLinalgPassBase<PrepareCpuLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposeIntoMatmul>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    SmallVector<linalg::LinalgOp> named;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!keepsName(op))
        named.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op))) {
        op->emitError("cannot generalize");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
