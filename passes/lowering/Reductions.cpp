//===- Reductions.cpp - tcc reductions, arg-reductions and cumsum ---------===//
//
// reduce_* become linalg.reduce (plus an expand_shape for keepdims and a
// division for the mean); argmax / argmin a two-output linalg.generic whose
// combiner is order-independent, so that later passes may tile and
// parallelize the reduction; cumsum a sequential scf.for over the scanned
// axis that adds whole slices at a time.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Patterns.h"

using namespace mlir;
using namespace tcc;
using namespace tcc::lowering;

namespace {

enum class ReduceKind { Sum, Mean, Max, Min, Prod };

/// reduce_{sum,mean,max,min,prod} -> linalg.reduce over the axes. An empty
/// axes list is the identity. Max and min propagate NaN. The integer mean
/// divides with truncation toward zero, with the input's signedness.
template <typename OpTy, ReduceKind Kind>
struct ReduceLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = convertedTensorType(*this->getTypeConverter(), op.getType());
    Value in = adaptor.getInput();
    auto inType = cast<RankedTensorType>(in.getType());
    ArrayRef<int64_t> axes = op.getAxes();
    if (axes.empty()) {
      rewriter.replaceOp(op, reshapeTo(rewriter, loc, in, outType));
      return success();
    }
    ElemKind k = elemKind(op.getInput().getType());
    Value identity;
    switch (Kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      identity = scalarConst(rewriter, loc, k.type, 0);
      break;
    case ReduceKind::Prod:
      identity = scalarConst(rewriter, loc, k.type, 1);
      break;
    case ReduceKind::Max:
      identity = lowestValue(rewriter, loc, k);
      break;
    case ReduceKind::Min:
      identity = highestValue(rewriter, loc, k);
      break;
    }
    SmallVector<int64_t> reduced = dropDims(inType.getShape(), axes);
    Value init = filledTensor(rewriter, loc, reduced, identity);
    auto reduce = linalg::ReduceOp::create(
        rewriter, loc, ValueRange{in}, ValueRange{init}, axes,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value r;
          switch (Kind) {
          case ReduceKind::Sum:
          case ReduceKind::Mean:
            r = addScalar(b, l, k, args[0], args[1]);
            break;
          case ReduceKind::Prod:
            r = mulScalar(b, l, k, args[0], args[1]);
            break;
          case ReduceKind::Max:
            r = maxScalar(b, l, k, args[0], args[1]);
            break;
          case ReduceKind::Min:
            r = minScalar(b, l, k, args[0], args[1]);
            break;
          }
          linalg::YieldOp::create(b, l, r);
        });
    Value result = reduce->getResult(0);
    if (Kind == ReduceKind::Mean) {
      int64_t count = 1;
      for (int64_t a : axes)
        count *= inType.getDimSize(a);
      // A float mean over nothing is 0/0 = NaN, as numpy; an integer one is
      // the empty sum, 0.
      if (k.isFloat || count > 0) {
        auto type = cast<RankedTensorType>(result.getType());
        result = mapElementwise(
            rewriter, loc, type, ValueRange{result},
            [&](OpBuilder &b, Location l, ValueRange args) -> Value {
              // The count is a non-zero constant: no guard is needed.
              Value n = scalarConst(b, l, k.type, double(count));
              if (k.isFloat)
                return arith::DivFOp::create(b, l, args[0], n);
              if (k.isUnsigned)
                return arith::DivUIOp::create(b, l, args[0], n);
              return arith::DivSIOp::create(b, l, args[0], n);
            });
      }
    }
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, result, outType));
    return success();
  }
};

/// argmax / argmin -> linalg.generic with a reduction over the axis and two
/// outputs (best value, its index). The combiner is a total order, so the
/// result does not depend on the reduction order: NaN beats every number
/// (numpy: the first NaN wins), otherwise the larger (smaller) value wins,
/// and ties go to the smaller index, or the larger with select_last_index.
template <typename OpTy, bool IsMax>
struct ArgReduceLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = convertedTensorType(*this->getTypeConverter(), op.getType());
    Value in = adaptor.getInput();
    auto inType = cast<RankedTensorType>(in.getType());
    int64_t axis = op.getAxis();
    int64_t rank = inType.getRank();
    bool last = op.getSelectLastIndex();
    ElemKind k = elemKind(op.getInput().getType());
    SmallVector<int64_t> reduced = dropDims(inType.getShape(), {axis});
    Type i64 = rewriter.getI64Type();
    Value valInit = filledTensor(rewriter, loc, reduced,
                                 IsMax ? lowestValue(rewriter, loc, k)
                                       : highestValue(rewriter, loc, k));
    // The sentinel index loses every tie: larger than any index for "first",
    // smaller for "last".
    Value idxInit =
        filledTensor(rewriter, loc, reduced,
                     intConst(rewriter, loc, i64,
                              last ? -1 : std::numeric_limits<int64_t>::max()));
    MLIRContext *ctx = rewriter.getContext();
    AffineMap outMap = dropDimsMap(ctx, rank, {axis});
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank),
                                   outMap, outMap};
    SmallVector<utils::IteratorType> iters = parallelIterators(rank);
    iters[axis] = utils::IteratorType::reduction;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valInit.getType(), idxInit.getType()},
        ValueRange{in}, ValueRange{valInit, idxInit}, maps, iters,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], best = args[1], bestIdx = args[2];
          Value i = arith::IndexCastOp::create(
              b, l, i64, linalg::IndexOp::create(b, l, axis));
          Value tieWins = arith::CmpIOp::create(
              b, l,
              last ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt, i,
              bestIdx);
          Value better;
          if (k.isFloat) {
            Value xNan =
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
            Value bNan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO,
                                               best, best);
            Value strictly = arith::CmpFOp::create(
                b, l,
                IsMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
                x, best);
            Value equal =
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, best);
            Value ordinary = arith::OrIOp::create(
                b, l, strictly, arith::AndIOp::create(b, l, equal, tieWins));
            Value notBNan = arith::XOrIOp::create(
                b, l, bNan, intConst(b, l, b.getI1Type(), 1));
            // x NaN: wins unless best is NaN too (then the tie rule);
            // x a number: loses to a NaN best, else the ordinary rule.
            Value nanWins = arith::OrIOp::create(b, l, notBNan, tieWins);
            Value numberWins = arith::AndIOp::create(b, l, notBNan, ordinary);
            better = arith::SelectOp::create(b, l, xNan, nanWins, numberWins);
          } else {
            arith::CmpIPredicate p =
                IsMax ? (k.isUnsigned ? arith::CmpIPredicate::ugt
                                      : arith::CmpIPredicate::sgt)
                      : (k.isUnsigned ? arith::CmpIPredicate::ult
                                      : arith::CmpIPredicate::slt);
            Value strictly = arith::CmpIOp::create(b, l, p, x, best);
            Value equal =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, best);
            better = arith::OrIOp::create(
                b, l, strictly, arith::AndIOp::create(b, l, equal, tieWins));
          }
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::SelectOp::create(b, l, better, x, best),
                         arith::SelectOp::create(b, l, better, i, bestIdx)});
        });
    rewriter.replaceOp(op,
                       reshapeTo(rewriter, loc, generic.getResult(1), outType));
    return success();
  }
};

/// cumsum -> scf.for over the axis carrying the running sum of one slice
/// (shape of the input with the axis set to 1): each step adds the next
/// input slice elementwise and inserts the sum (inclusive) or the sum before
/// the addition (exclusive); `reverse` walks the axis backwards. The
/// summation order is sequential, as numpy's.
struct CumSumLowering : OpConversionPattern<CumSumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CumSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value in = adaptor.getInput();
    auto type = cast<RankedTensorType>(in.getType());
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, in);
      return success();
    }
    ElemKind k = elemKind(op.getType());
    int64_t axis = op.getAxis(), n = type.getDimSize(axis);
    int64_t rank = type.getRank();
    bool exclusive = op.getExclusive(), reverse = op.getReverse();
    SmallVector<int64_t> sliceShape(type.getShape());
    sliceShape[axis] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, k.type);
    Value acc0 = filledTensor(rewriter, loc, sliceShape,
                              scalarConst(rewriter, loc, k.type, 0));
    Value res0 = emptyTensor(rewriter, loc, type.getShape(), k.type);
    Value lower = indexConst(rewriter, loc, 0);
    Value upper = indexConst(rewriter, loc, n);
    Value step = indexConst(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, lower, upper, step, ValueRange{acc0, res0},
        [&](OpBuilder &b, Location l, Value j, ValueRange it) {
          Value pos = reverse ? Value(arith::SubIOp::create(
                                    b, l, indexConst(b, l, n - 1), j))
                              : j;
          SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
          offsets[axis] = pos;
          SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
          for (int64_t s : sliceShape)
            sizes.push_back(b.getIndexAttr(s));
          Value x = tensor::ExtractSliceOp::create(b, l, sliceType, in, offsets,
                                                   sizes, strides);
          // Exclusive: write the running sum before adding this slice.
          // The insertion is built first so that it reads the carried slice
          // before the addition overwrites it in place.
          Value res = it[1];
          if (exclusive)
            res = tensor::InsertSliceOp::create(b, l, it[0], res, offsets,
                                                sizes, strides);
          // Accumulate into the carried slice itself (outs = acc), so that
          // the loop bufferizes in place with no copy per iteration.
          SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
          Value sum = linalg::GenericOp::create(
                          b, l, TypeRange{sliceType}, ValueRange{x},
                          ValueRange{it[0]}, maps, parallelIterators(rank),
                          [&](OpBuilder &sb, Location sl, ValueRange a) {
                            linalg::YieldOp::create(
                                sb, sl, addScalar(sb, sl, k, a[1], a[0]));
                          })
                          .getResult(0);
          if (!exclusive)
            res = tensor::InsertSliceOp::create(b, l, sum, res, offsets, sizes,
                                                strides);
          scf::YieldOp::create(b, l, ValueRange{sum, res});
        });
    rewriter.replaceOp(op, loop.getResult(1));
    return success();
  }
};

} // namespace

void tcc::lowering::populateReductionPatterns(const TypeConverter &tc,
                                              RewritePatternSet &patterns) {
  patterns.add<ReduceLowering<ReduceSumOp, ReduceKind::Sum>,
               ReduceLowering<ReduceMeanOp, ReduceKind::Mean>,
               ReduceLowering<ReduceMaxOp, ReduceKind::Max>,
               ReduceLowering<ReduceMinOp, ReduceKind::Min>,
               ReduceLowering<ReduceProdOp, ReduceKind::Prod>,
               ArgReduceLowering<ArgMaxOp, true>,
               ArgReduceLowering<ArgMinOp, false>, CumSumLowering>(
      tc, patterns.getContext());
}
