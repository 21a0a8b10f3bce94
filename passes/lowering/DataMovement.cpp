//===- DataMovement.cpp - tcc data movement ops to tensor and linalg ------===//
//
// Broadcasts, reshapes, transposes, concatenation, slices and pads become
// tensor ops or the named linalg ops that express them exactly. Gathers read
// with tensor.extract inside a linalg.generic; scatters are sequential scf.for
// loops that insert into the tensor, so later updates win as ONNX's reference
// loops define. Indices are wrapped once when negative and then clamped:
// ONNX leaves out-of-range indices undefined, and a compiled model must never
// read or write out of bounds.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Patterns.h"

#include "mlir/IR/AffineExpr.h"

using namespace mlir;
using namespace tcc;
using namespace tcc::lowering;

namespace {

/// Collapses the dimensions of `v` that `keep` does not mark; they all have
/// size 1. Each dropped dimension joins the group of a kept neighbour.
Value dropUnitDims(OpBuilder &b, Location loc, Value v, ArrayRef<bool> keep) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    pending.push_back(d);
    if (keep[d]) {
      groups.push_back(pending);
      pending.clear();
      shape.push_back(type.getDimSize(d));
    }
  }
  if (!pending.empty() && !groups.empty())
    llvm::append_range(groups.back(), pending);
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return tensor::CollapseShapeOp::create(b, loc, resultType, v, groups);
}

/// broadcast_in_dim -> linalg.broadcast; operand dimensions of size 1 that
/// expand are collapsed away first, because linalg.broadcast only adds
/// dimensions.
struct BroadcastInDimLowering : OpConversionPattern<BroadcastInDimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BroadcastInDimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = convertedTensorType(*getTypeConverter(), op.getType());
    Value in = adaptor.getInput();
    auto inType = cast<RankedTensorType>(in.getType());
    ArrayRef<int64_t> dims = op.getDims();
    SmallVector<bool> keep;
    SmallVector<int64_t> keptDims;
    for (int64_t i = 0; i < inType.getRank(); ++i) {
      bool expands =
          inType.getDimSize(i) == 1 && outType.getDimSize(dims[i]) != 1;
      keep.push_back(!expands);
      if (!expands)
        keptDims.push_back(dims[i]);
    }
    if (llvm::is_contained(keep, false))
      in = dropUnitDims(rewriter, loc, in, keep);
    SmallVector<int64_t> added;
    for (int64_t d = 0; d < outType.getRank(); ++d)
      if (!llvm::is_contained(keptDims, d))
        added.push_back(d);
    if (added.empty()) { // Same shape: dims is the identity.
      rewriter.replaceOp(op, in);
      return success();
    }
    Value init = emptyTensor(rewriter, loc, outType.getShape(),
                             outType.getElementType());
    auto bcast = linalg::BroadcastOp::create(rewriter, loc, in, init, added);
    rewriter.replaceOp(op, bcast->getResults());
    return success();
  }
};

/// reshape -> tensor.collapse_shape / expand_shape.
struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = convertedTensorType(*getTypeConverter(), op.getType());
    rewriter.replaceOp(
        op, reshapeTo(rewriter, op.getLoc(), adaptor.getInput(), type));
    return success();
  }
};

/// transpose -> linalg.transpose.
struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = convertedTensorType(*getTypeConverter(), op.getType());
    ArrayRef<int64_t> perm = op.getPerm();
    bool identity = true;
    for (auto [i, p] : llvm::enumerate(perm))
      identity &= int64_t(i) == p;
    if (identity) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    Value init = emptyTensor(rewriter, op.getLoc(), type.getShape(),
                             type.getElementType());
    auto t = linalg::TransposeOp::create(rewriter, op.getLoc(),
                                         adaptor.getInput(), init, perm);
    rewriter.replaceOp(op, t->getResults());
    return success();
  }
};

/// concat -> tensor.concat (empty operands dropped).
struct ConcatLowering : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = convertedTensorType(*getTypeConverter(), op.getType());
    int64_t axis = op.getAxis();
    SmallVector<Value> inputs;
    for (Value v : adaptor.getInputs())
      if (cast<RankedTensorType>(v.getType()).getDimSize(axis) != 0)
        inputs.push_back(v);
    if (inputs.empty() || type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, op.getLoc(), type.getShape(),
                                         type.getElementType()));
      return success();
    }
    if (inputs.size() == 1) {
      rewriter.replaceOp(op, inputs[0]);
      return success();
    }
    rewriter.replaceOpWithNewOp<tensor::ConcatOp>(op, type, axis, inputs);
    return success();
  }
};

/// slice -> tensor.extract_slice; a negative stride reads the same elements
/// with the positive stride from the other end, and a linalg.generic with
/// an `n - 1 - d` map reverses them.
struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertedTensorType(*getTypeConverter(), op.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t> offsets, strides;
    SmallVector<int64_t> reversed;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t n = type.getDimSize(d), start = op.getStart()[d],
              stride = op.getStride()[d];
      if (n == 0) {
        offsets.push_back(0);
        strides.push_back(1);
      } else if (n == 1 || stride > 0) {
        offsets.push_back(start);
        strides.push_back(n == 1 ? 1 : stride);
      } else {
        offsets.push_back(start + (n - 1) * stride);
        strides.push_back(-stride);
        reversed.push_back(d);
      }
    }
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, type, adaptor.getInput(), indexAttrs(rewriter, offsets),
        indexAttrs(rewriter, type.getShape()), indexAttrs(rewriter, strides));
    if (reversed.empty()) {
      rewriter.replaceOp(op, slice);
      return success();
    }
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d) {
      AffineExpr e = getAffineDimExpr(d, ctx);
      if (llvm::is_contained(reversed, d))
        e = getAffineConstantExpr(type.getDimSize(d) - 1, ctx) - e;
      exprs.push_back(e);
    }
    rewriter.replaceOp(op, copyThroughMap(rewriter, loc, slice,
                                          AffineMap::get(rank, 0, exprs, ctx),
                                          type.getShape()));
    return success();
  }
};

/// The source index along one dimension of a reflect / edge / wrap pad:
/// `i` is the output index minus the low padding, `n` > 0 the input size.
Value padSourceIndex(OpBuilder &b, Location loc, PadMode mode, Value i,
                     int64_t n) {
  Value zero = indexConst(b, loc, 0);
  auto positiveMod = [&](Value x, int64_t m) -> Value {
    Value mv = indexConst(b, loc, m);
    Value r = arith::RemSIOp::create(b, loc, x, mv);
    Value neg =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, zero);
    return arith::SelectOp::create(b, loc, neg,
                                   arith::AddIOp::create(b, loc, r, mv), r);
  };
  switch (mode) {
  case PadMode::edge: {
    Value low = arith::MaxSIOp::create(b, loc, i, zero);
    return arith::MinSIOp::create(b, loc, low, indexConst(b, loc, n - 1));
  }
  case PadMode::wrap:
    return positiveMod(i, n);
  case PadMode::reflect: {
    // Reflection without repeating the edge is periodic with period
    // 2 (n - 1); this also covers pads wider than the input, as numpy does.
    if (n == 1)
      return zero;
    int64_t period = 2 * (n - 1);
    Value m = positiveMod(i, period);
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, m,
                                         indexConst(b, loc, n));
    return arith::SelectOp::create(
        b, loc, inside, m,
        arith::SubIOp::create(b, loc, indexConst(b, loc, period), m));
  }
  case PadMode::constant:
    break;
  }
  llvm_unreachable("constant padding has no source index");
}

/// pad -> tensor.pad for constant padding; reflect / edge / wrap become a
/// linalg.generic over the result that computes each element's source index.
struct PadLowering : OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertedTensorType(*getTypeConverter(), op.getType());
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    ArrayRef<int64_t> low = op.getLow(), high = op.getHigh();
    if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
        llvm::all_of(high, [](int64_t v) { return v == 0; })) {
      rewriter.replaceOp(op, input);
      return success();
    }
    ElemKind k = elemKind(op.getType());
    if (op.getMode() == PadMode::constant || inType.getNumElements() == 0) {
      double v = op.getValue().convertToDouble();
      Value fill = k.isBool ? intConst(rewriter, loc, k.type, v != 0.0)
                            : scalarConst(rewriter, loc, k.type, v);
      rewriter.replaceOpWithNewOp<tensor::PadOp>(
          op, type, input, indexAttrs(rewriter, low),
          indexAttrs(rewriter, high), fill);
      return success();
    }
    int64_t rank = type.getRank();
    Value init =
        emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
    PadMode mode = op.getMode();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        parallelIterators(rank), [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < rank; ++d) {
            Value idx = linalg::IndexOp::create(b, l, d);
            if (low[d] || high[d]) {
              Value i =
                  arith::SubIOp::create(b, l, idx, indexConst(b, l, low[d]));
              idx = padSourceIndex(b, l, mode, i, inType.getDimSize(d));
            }
            coords.push_back(idx);
          }
          linalg::YieldOp::create(
              b, l, ValueRange{tensor::ExtractOp::create(b, l, input, coords)});
        });
    rewriter.replaceOp(op, generic->getResults());
    return success();
  }
};

/// gather -> linalg.generic over the result reading the index tensor with a
/// projected map and the input with tensor.extract.
struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertedTensorType(*getTypeConverter(), op.getType());
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    int64_t axis = op.getAxis();
    int64_t q = op.getIndices().getType().getRank();
    int64_t rank = type.getRank();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> idxExprs;
    for (int64_t j = 0; j < q; ++j)
      idxExprs.push_back(getAffineDimExpr(axis + j, ctx));
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, idxExprs, ctx),
                                   rewriter.getMultiDimIdentityMap(rank)};
    Value init =
        emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
    int64_t axisSize = inType.getDimSize(axis);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{adaptor.getIndices()},
        ValueRange{init}, maps, parallelIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < axis; ++d)
            coords.push_back(linalg::IndexOp::create(b, l, d));
          coords.push_back(wrapAndClampIndex(b, l, args[0], axisSize));
          for (int64_t d = axis + 1; d < inType.getRank(); ++d)
            coords.push_back(linalg::IndexOp::create(b, l, d - 1 + q));
          linalg::YieldOp::create(
              b, l, ValueRange{tensor::ExtractOp::create(b, l, input, coords)});
        });
    rewriter.replaceOp(op, generic->getResults());
    return success();
  }
};

/// gather_elements -> linalg.generic over the index tensor.
struct GatherElementsLowering : OpConversionPattern<GatherElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertedTensorType(*getTypeConverter(), op.getType());
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    int64_t axis = op.getAxis();
    int64_t rank = type.getRank();
    Value init =
        emptyTensor(rewriter, loc, type.getShape(), type.getElementType());
    SmallVector<AffineMap> maps(2, rewriter.getMultiDimIdentityMap(rank));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{adaptor.getIndices()},
        ValueRange{init}, maps, parallelIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < rank; ++d)
            coords.push_back(
                d == axis
                    ? wrapAndClampIndex(b, l, args[0], inType.getDimSize(axis))
                    : Value(linalg::IndexOp::create(b, l, d)));
          linalg::YieldOp::create(
              b, l, ValueRange{tensor::ExtractOp::create(b, l, input, coords)});
        });
    rewriter.replaceOp(op, generic->getResults());
    return success();
  }
};

/// Combines an update with the existing element by the scatter's reduction.
Value combine(OpBuilder &b, Location loc, ScatterReduction r, const ElemKind &k,
              Value current, Value update) {
  switch (r) {
  case ScatterReduction::none:
    return update;
  case ScatterReduction::add:
    return addScalar(b, loc, k, current, update);
  case ScatterReduction::mul:
    return mulScalar(b, loc, k, current, update);
  case ScatterReduction::max:
    return maxScalar(b, loc, k, current, update);
  case ScatterReduction::min:
    return minScalar(b, loc, k, current, update);
  }
  llvm_unreachable("unknown scatter reduction");
}

/// A loop nest 0..shape[d] that threads `init` through and yields what
/// `body` returns for each point.
Value threadLoopNest(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value)> body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t s : shape) {
    lbs.push_back(indexConst(b, loc, 0));
    ubs.push_back(indexConst(b, loc, s));
    steps.push_back(indexConst(b, loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{init},
      [&](OpBuilder &nb, Location l, ValueRange ivs, ValueRange iters) {
        return scf::ValueVector{body(nb, l, ivs, iters[0])};
      });
  return nest.results[0];
}

/// scatter_elements -> scf.for over the updates in row-major order, each
/// iteration inserting one element: sequential, so later updates win.
struct ScatterElementsLowering : OpConversionPattern<ScatterElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    auto updType = cast<RankedTensorType>(adaptor.getUpdates().getType());
    if (updType.getNumElements() == 0) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    ElemKind k = elemKind(op.getType());
    int64_t axis = op.getAxis();
    ScatterReduction red = op.getReduction();
    Value indices = adaptor.getIndices(), updates = adaptor.getUpdates();
    Value result = threadLoopNest(
        rewriter, loc, updType.getShape(), adaptor.getInput(),
        [&](OpBuilder &b, Location l, ValueRange ivs, Value acc) {
          Value raw = tensor::ExtractOp::create(b, l, indices, ivs);
          SmallVector<Value> coords(ivs);
          coords[axis] = wrapAndClampIndex(b, l, raw, inType.getDimSize(axis));
          Value u = tensor::ExtractOp::create(b, l, updates, ivs);
          if (red != ScatterReduction::none)
            u = combine(b, l, red, k,
                        tensor::ExtractOp::create(b, l, acc, coords), u);
          return Value(tensor::InsertOp::create(b, l, u, acc, coords));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// scatter_nd -> scf.for over the index tuples in row-major order, each
/// iteration inserting (or combining) one slice of the updates.
struct ScatterNdLowering : OpConversionPattern<ScatterNdOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterNdOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    auto idxType = cast<RankedTensorType>(adaptor.getIndices().getType());
    auto updType = cast<RankedTensorType>(adaptor.getUpdates().getType());
    if (updType.getNumElements() == 0) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    ElemKind k = elemKind(op.getType());
    ScatterReduction red = op.getReduction();
    int64_t tupleLen = idxType.getShape().back();
    ArrayRef<int64_t> batch = idxType.getShape().drop_back();
    ArrayRef<int64_t> sliceShape = inType.getShape().drop_front(tupleLen);
    auto sliceType = RankedTensorType::get(sliceShape, k.type);
    Value indices = adaptor.getIndices(), updates = adaptor.getUpdates();
    Value result = threadLoopNest(
        rewriter, loc, batch, adaptor.getInput(),
        [&](OpBuilder &b, Location l, ValueRange ivs, Value acc) -> Value {
          // The destination: the wrapped, clamped index tuple, then zeros.
          SmallVector<OpFoldResult> dstOffsets, dstSizes, srcOffsets, srcSizes;
          for (int64_t j = 0; j < tupleLen; ++j) {
            SmallVector<Value> at(ivs);
            at.push_back(indexConst(b, l, j));
            Value raw = tensor::ExtractOp::create(b, l, indices, at);
            dstOffsets.push_back(
                wrapAndClampIndex(b, l, raw, inType.getDimSize(j)));
            dstSizes.push_back(b.getIndexAttr(1));
          }
          for (Value iv : ivs) {
            srcOffsets.push_back(iv);
            srcSizes.push_back(b.getIndexAttr(1));
          }
          for (int64_t s : sliceShape) {
            dstOffsets.push_back(b.getIndexAttr(0));
            dstSizes.push_back(b.getIndexAttr(s));
            srcOffsets.push_back(b.getIndexAttr(0));
            srcSizes.push_back(b.getIndexAttr(s));
          }
          SmallVector<OpFoldResult> dstStrides(dstOffsets.size(),
                                               b.getIndexAttr(1));
          SmallVector<OpFoldResult> srcStrides(srcOffsets.size(),
                                               b.getIndexAttr(1));
          if (sliceShape.empty()) {
            // Whole index tuples address single elements.
            SmallVector<Value> dst, src(ivs);
            for (OpFoldResult o : dstOffsets)
              dst.push_back(cast<Value>(o));
            Value u = tensor::ExtractOp::create(b, l, updates, src);
            if (red != ScatterReduction::none)
              u = combine(b, l, red, k,
                          tensor::ExtractOp::create(b, l, acc, dst), u);
            return tensor::InsertOp::create(b, l, u, acc, dst);
          }
          Value u = tensor::ExtractSliceOp::create(
              b, l, sliceType, updates, srcOffsets, srcSizes, srcStrides);
          if (red != ScatterReduction::none) {
            Value cur = tensor::ExtractSliceOp::create(
                b, l, sliceType, acc, dstOffsets, dstSizes, dstStrides);
            u = mapElementwise(b, l, sliceType, ValueRange{cur, u},
                               [&](OpBuilder &sb, Location sl, ValueRange a) {
                                 return combine(sb, sl, red, k, a[0], a[1]);
                               });
          }
          return tensor::InsertSliceOp::create(b, l, u, acc, dstOffsets,
                                               dstSizes, dstStrides);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tcc::lowering::populateDataMovementPatterns(const TypeConverter &tc,
                                                 RewritePatternSet &patterns) {
  patterns
      .add<BroadcastInDimLowering, ReshapeLowering, TransposeLowering,
           ConcatLowering, SliceLowering, PadLowering, GatherLowering,
           GatherElementsLowering, ScatterElementsLowering, ScatterNdLowering>(
          tc, patterns.getContext());
}
