//===- PrepareLinalg.cpp - linalg on tensors, ready for fusion -------------===//
//
// Replaces upstream's (deprecated, all-or-nothing) generalization pass:
// elementwise named ops become generics for fusion, the ops that the runtime
// hands to a library keep their names.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/MatmulMaps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tcc {
#define GEN_PASS_DEF_PREPARELINALGPASS
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

/// For a batch_matmul operand that is [collapse_shape of] a transpose
/// whose last two result dimensions come out of order (p[r-2] > p[r-1]):
/// the same value without that last swap (the transpose with the last two
/// entries of its permutation exchanged, or its input when that is the
/// identity), which the batch_matmul then reads transposed. The collapse
/// must leave the last two dimensions alone. Attention's K^T and P^T are
/// such operands: the head split's transpose (shared with Q's and V's) or
/// the scores themselves, instead of a strided copy of each.
std::optional<Value> withoutLastSwap(PatternRewriter &rewriter, Value operand) {
  auto collapse = operand.getDefiningOp<tensor::CollapseShapeOp>();
  auto t = (collapse ? collapse.getSrc() : operand).getDefiningOp<linalg::TransposeOp>();
  if (!t)
    return std::nullopt;
  SmallVector<int64_t> perm(t.getPermutation());
  int64_t r = perm.size();
  if (r < 3 || perm[r - 2] < perm[r - 1])
    return std::nullopt;
  if (collapse) {
    SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
    if (groups.size() != 3 || groups[1] != ReassociationIndices{r - 2} ||
        groups[2] != ReassociationIndices{r - 1})
      return std::nullopt;
  } else if (r != 3) {
    return std::nullopt;
  }
  std::swap(perm[r - 2], perm[r - 1]);
  Value inner = t.getInput();
  Location loc = t.getLoc();
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, r))) {
    auto type = cast<RankedTensorType>(inner.getType());
    SmallVector<int64_t> shape;
    for (int64_t d : perm)
      shape.push_back(type.getDimSize(d));
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
    inner = linalg::TransposeOp::create(rewriter, loc, inner, empty, perm)->getResult(0);
  }
  if (collapse)
    inner = tensor::CollapseShapeOp::create(rewriter, collapse.getLoc(), inner,
                                            collapse.getReassociationIndices());
  return inner;
}

/// batch_matmul(transpose(A), B) and batch_matmul(A, transpose(B)), the
/// transposes of the matrices' two dimensions (see withoutLastSwap) ->
/// one batch_matmul whose indexing maps read the operand transposed.
struct FoldTransposeIntoBatchMatmul : OpRewritePattern<linalg::BatchMatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::BatchMatmulOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<std::pair<bool, bool>> reads = tcc::batchMatmulTransposes(op);
    if (!op.hasPureTensorSemantics() || !reads)
      return failure();
    SmallVector<Value> inputs(op.getDpsInputs());
    bool transposed[2] = {reads->first, reads->second};
    bool changed = false;
    for (int i = 0; i < 2; ++i) {
      if (std::optional<Value> inner = withoutLastSwap(rewriter, inputs[i])) {
        inputs[i] = *inner;
        transposed[i] = !transposed[i];
        changed = true;
      }
    }
    if (!changed)
      return failure();
    auto bmm = linalg::BatchMatmulOp::create(
        rewriter, op.getLoc(), op->getResultTypes(), inputs, op.getDpsInits(),
        {rewriter.getNamedAttr("indexing_maps", tcc::batchMatmulMaps(rewriter, transposed[0],
                                                                      transposed[1]))});
    bmm->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, bmm->getResults());
    return success();
  }
};

/// A 2-D product that FoldTransposeOfMatmul computes transposed: one use,
/// a fill as its init, maps it understands.
bool transposableProduct(Value v) {
  auto mm = v.getDefiningOp<linalg::MatmulOp>();
  if (!mm || !mm.hasPureTensorSemantics() || !v.hasOneUse())
    return false;
  auto fill = mm.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  return fill && fill->hasOneUse() && tcc::matmulTransposes(mm).has_value();
}

/// The elementwise sum of two 2-D tensors (a generic of identity maps whose
/// body adds its two inputs), or null.
linalg::GenericOp elementwiseSum(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || !g.hasPureTensorSemantics() || g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1 ||
      g.getNumLoops() != 2 || g.getNumReductionLoops() != 0 ||
      !llvm::all_of(g.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
    return nullptr;
  Block &body = g.getRegion().front();
  if (!llvm::hasSingleElement(body.without_terminator()))
    return nullptr;
  auto add = dyn_cast<arith::AddFOp>(body.front());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (!add || yield.getValues() != ValueRange{add.getResult()} ||
      !((add.getLhs() == body.getArgument(0) && add.getRhs() == body.getArgument(1)) ||
        (add.getLhs() == body.getArgument(1) && add.getRhs() == body.getArgument(0))))
    return nullptr;
  return g;
}

/// A value whose transpose costs nothing once pushed to its leaves: a
/// transposable product, a transpose, or a one-use sum of two such values.
bool transposesAway(Value v, int depth = 0) {
  if (transposableProduct(v) || v.getDefiningOp<linalg::TransposeOp>())
    return true;
  linalg::GenericOp sum = elementwiseSum(v);
  if (!sum || !v.hasOneUse() || depth > 64)
    return false;
  return llvm::all_of(sum.getDpsInputs(), [&](Value x) { return transposesAway(x, depth + 1); });
}

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
    if (!transposableProduct(op.getInput()))
      return failure();
    auto mm = op.getInput().getDefiningOp<linalg::MatmulOp>();
    auto fill = mm.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    std::optional<std::pair<bool, bool>> t = tcc::matmulTransposes(mm);
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

/// transpose(a + b) -> transpose(a) + transpose(b) when both transposes go
/// away (transposesAway): backpropagation through time sums one product
/// per step into a recurrent weight's gradient, in the transposed layout,
/// and the sum's transpose would read all the terms strided (an LSTM's
/// 32-term sum was 1.4 of its 2.5 ms step). The same additions in the same
/// order: the values are unchanged.
struct SinkTransposeThroughSum : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getPermutation() != ArrayRef<int64_t>{1, 0})
      return failure();
    linalg::GenericOp sum = elementwiseSum(op.getInput());
    if (!sum || !op.getInput().hasOneUse() || !transposesAway(op.getInput()))
      return failure();
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<Value> inputs;
    for (Value x : sum.getDpsInputs()) {
      Value e = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
      inputs.push_back(linalg::TransposeOp::create(rewriter, loc, x, e, ArrayRef<int64_t>{1, 0})
                           ->getResult(0));
    }
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
    auto moved = linalg::GenericOp::create(
        rewriter, sum.getLoc(), TypeRange{type}, inputs, ValueRange{init},
        sum.getIndexingMapsArray(), sum.getIteratorTypesArray());
    rewriter.inlineRegionBefore(sum.getRegion(), moved.getRegion(), moved.getRegion().begin());
    moved->setDiscardableAttrs(sum->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, moved->getResults());
    rewriter.eraseOp(sum);
    return success();
  }
};

/// True when the static boxes [OFFSETS, OFFSETS + SIZES) of two slices
/// (unit strides) share no element.
bool disjoint(tensor::ExtractSliceOp a, tensor::ExtractSliceOp b) {
  for (unsigned d = 0; d < a.getStaticOffsets().size(); ++d) {
    int64_t lo = std::max(a.getStaticOffsets()[d], b.getStaticOffsets()[d]);
    int64_t hi = std::min(a.getStaticOffsets()[d] + a.getStaticSizes()[d],
                          b.getStaticOffsets()[d] + b.getStaticSizes()[d]);
    if (lo >= hi)
      return true;
  }
  return false;
}

/// The extract_slices that are V's only uses, with static offsets and sizes,
/// unit strides, no rank reduction and no two sharing an element; nullopt
/// when V has another use (or none).
std::optional<SmallVector<tensor::ExtractSliceOp>> disjointSlices(Value v) {
  SmallVector<tensor::ExtractSliceOp> slices;
  for (Operation *user : v.getUsers()) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    if (!slice || slice.getSource() != v || !slice.hasUnitStride() ||
        !slice.getOffsets().empty() || !slice.getSizes().empty() ||
        int64_t(slice.getStaticSizes().size()) != slice.getResultType().getRank())
      return std::nullopt;
    for (tensor::ExtractSliceOp other : slices)
      if (!disjoint(slice, other))
        return std::nullopt;
    slices.push_back(slice);
  }
  if (slices.empty())
    return std::nullopt;
  return slices;
}

/// An op whose result a slice may take apart: an all-parallel generic, a
/// fill or a 2-D matmul (its parallel dimensions only), on tensors, with one
/// result.
bool splittable(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() || op->getNumResults() != 1)
    return false;
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return generic.getNumLoops() == generic.getNumParallelLoops();
  return isa<linalg::FillOp, linalg::MatmulOp>(op);
}

/// Results read only through slices that do not overlap are computed slice
/// by slice: a splittable op becomes one op per slice on slices of its
/// operands (upstream's replaceExtractSliceWithTiledProducer), and a slice
/// of an expand_shape that keeps each expanded group whole becomes an
/// expand_shape of a slice; the same values, no element computed twice, and
/// the whole result is never materialized. Attention's projection read as
/// Q, K and V (x W^T + b, then three slices) becomes three products, each
/// into a buffer of its own whose rows are one token's heads, which the
/// attention products then read in place (docs/cpu-codegen.md "Attention
/// heads"). Sets CHANGED when it rewrote anything.
LogicalResult splitSlicedResults(func::FuncOp fn, bool &changed) {
  IRRewriter rewriter(fn.getContext());
  SmallVector<Operation *> ops;
  fn.walk([&](Operation *op) {
    if (splittable(op) || isa<tensor::ExpandShapeOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    std::optional<SmallVector<tensor::ExtractSliceOp>> slices =
        disjointSlices(op->getResult(0));
    if (!slices)
      continue;
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
      ArrayRef<int64_t> shape = expand.getResultType().getShape();
      auto keepsGroups = [&](tensor::ExtractSliceOp slice) {
        for (const ReassociationIndices &group : groups)
          if (group.size() > 1)
            for (int64_t d : group)
              if (slice.getStaticOffsets()[d] != 0 || slice.getStaticSizes()[d] != shape[d])
                return false;
        return true;
      };
      if (!llvm::all_of(*slices, keepsGroups))
        continue;
      for (tensor::ExtractSliceOp slice : *slices) {
        SmallVector<OpFoldResult> offsets, sizes, strides;
        ArrayRef<int64_t> srcShape = expand.getSrcType().getShape();
        for (auto [g, group] : llvm::enumerate(groups)) {
          bool single = group.size() == 1;
          offsets.push_back(rewriter.getIndexAttr(single ? slice.getStaticOffsets()[group[0]] : 0));
          sizes.push_back(
              rewriter.getIndexAttr(single ? slice.getStaticSizes()[group[0]] : srcShape[g]));
          strides.push_back(rewriter.getIndexAttr(1));
        }
        rewriter.setInsertionPoint(slice);
        Value part = tensor::ExtractSliceOp::create(rewriter, slice.getLoc(), expand.getSrc(),
                                                    offsets, sizes, strides);
        rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(slice, slice.getResultType(), part,
                                                           groups);
      }
      rewriter.eraseOp(expand);
      changed = true;
      continue;
    }
    for (tensor::ExtractSliceOp slice : *slices) {
      rewriter.setInsertionPoint(slice);
      FailureOr<TilingResult> tiled =
          tensor::replaceExtractSliceWithTiledProducer(rewriter, slice, op->getOpResult(0));
      if (failed(tiled))
        return op->emitError("cannot split the result into its slices");
      rewriter.replaceOp(slice, tiled->tiledValues.front());
    }
    rewriter.eraseOp(op);
    changed = true;
  }
  return success();
}

/// Ops the runtime may hand to a library, and fills (which such an op's
/// output starts from): kept named.
bool keepsName(linalg::LinalgOp op) {
  return isa<linalg::GenericOp, linalg::FillOp>(op) ||
         linalg::isaContractionOpInterface(op) ||
         linalg::isaConvolutionOpInterface(op);
}

struct PrepareLinalgPass
    : tcc::impl::PrepareLinalgPassBase<PrepareLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposeIntoMatmul, FoldTransposeIntoBatchMatmul, FoldTransposeOfMatmul,
                 SinkTransposeThroughSum>(
        &getContext());
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
    // Until no split is left: a split op's operands may now be results read
    // through slices (the bias broadcast before the add, the product).
    SmallVector<func::FuncOp> fns;
    if (auto fn = dyn_cast<func::FuncOp>(getOperation()))
      fns.push_back(fn);
    else
      getOperation()->walk([&](func::FuncOp fn) { fns.push_back(fn); });
    for (func::FuncOp fn : fns) {
      for (bool changed = true; changed;) {
        changed = false;
        if (failed(splitSlicedResults(fn, changed)))
          return signalPassFailure();
      }
      // The split ops' operands: a slice of all of a tensor folds to the
      // tensor (the product's left operand), a slice of an empty tensor to
      // an empty tensor of its own (upstream's patterns; else one buffer
      // would hold all the parts).
      SmallVector<Operation *> slices;
      fn.walk([&](tensor::ExtractSliceOp slice) { slices.push_back(slice); });
      RewritePatternSet folds(&getContext());
      tensor::populateFoldTensorEmptyPatterns(folds);
      if (failed(applyOpPatternsGreedily(slices, std::move(folds))))
        return signalPassFailure();
    }
  }
};

} // namespace
