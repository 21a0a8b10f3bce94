//===- PrepareCpuLinalg.cpp - linalg on tensors, ready for fusion ---------===//
//
// Replaces upstream's (deprecated, all-or-nothing) generalization pass:
// elementwise named ops become generics for fusion, the ops that the runtime
// hands to a library keep their names.
//
//===----------------------------------------------------------------------===//

#include "passes/MatmulMaps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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
    std::optional<std::pair<bool, bool>> reads = tcc::matmulTransposes(op);
    if (!op.hasPureTensorSemantics() || !reads)
      return failure();
    SmallVector<Value> inputs(op.getDpsInputs());
    bool transposed[2] = {reads->first, reads->second};
    bool changed = false;
    for (int i = 0; i < 2; ++i) {
      auto t = inputs[i].getDefiningOp<linalg::TransposeOp>();
      if (!t || t.getPermutation() != ArrayRef<int64_t>{1, 0})
        continue;
      inputs[i] = t.getInput();
      transposed[i] = !transposed[i];
      changed = true;
    }
    if (!changed)
      return failure();
    auto mm = linalg::MatmulOp::create(
        rewriter, op.getLoc(), op->getResultTypes(), inputs, op.getDpsInits(),
        {rewriter.getNamedAttr(
            "indexing_maps", tcc::matmulMaps(rewriter, transposed[0], transposed[1]))});
    mm->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, mm->getResults());
    return success();
  }
};

/// transpose(matmul(A, B)) -> matmul(B^T, A^T), the transposes in the
/// indexing maps: the product is written in the layout its reader wants.
/// The weight gradient of y = x W^T comes out of the backward as X^T G, in
/// W^T's layout, and the optimizer's update would read it transposed (a
/// strided, unvectorized access, 6-7x slower than the contiguous one on
/// GPT-2-small's updates); G^T X is the same library call in W's layout.
/// Only a product whose one use is the transpose and whose init is a fill
/// (recreated in the transposed shape): every point is the same sum of the
/// same products in the same order, so the values are bitwise unchanged.
struct FoldTransposeOfMatmul : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getPermutation() != ArrayRef<int64_t>{1, 0})
      return failure();
    auto mm = op.getInput().getDefiningOp<linalg::MatmulOp>();
    if (!mm || !mm.hasPureTensorSemantics() || !mm->getResult(0).hasOneUse())
      return failure();
    auto fill = mm.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    std::optional<std::pair<bool, bool>> t = tcc::matmulTransposes(mm);
    if (!fill || !fill->hasOneUse() || !t)
      return failure();
    // C^T = op(B)^T op(A)^T: B first, read transposed unless it was.
    bool ta = !t->second, tb = !t->first;
    Attribute maps = tcc::matmulMaps(rewriter, ta, tb);
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    Value empty = tensor::EmptyOp::create(rewriter, op.getLoc(),
                                          type.getShape(), type.getElementType());
    Value init = linalg::FillOp::create(rewriter, fill.getLoc(),
                                        fill.getDpsInputs()[0], empty)
                     .getResult(0);
    Value inputs[] = {mm.getDpsInputs()[1], mm.getDpsInputs()[0]};
    auto product = linalg::MatmulOp::create(
        rewriter, mm.getLoc(), TypeRange{type}, inputs, ValueRange{init},
        {rewriter.getNamedAttr("indexing_maps", maps)});
    product->setDiscardableAttrs(mm->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, product->getResults());
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
    patterns.add<FoldTransposeIntoMatmul, FoldTransposeOfMatmul>(&getContext());
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
