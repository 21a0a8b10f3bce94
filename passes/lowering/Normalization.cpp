//===- Normalization.cpp - softmax, norms, nll_loss, dropout, random ------===//
//
// The ops that combine reductions with elementwise epilogues. Each becomes a
// few linalg.generic ops (reductions over some dimensions, then an
// elementwise op that reads the reduced statistics through projected maps),
// in the numerically stable forms: softmax subtracts the row maximum, and
// the norms compute the mean first and then the variance of (x - mean), all
// in the element type.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Patterns.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace tcc;
using namespace tcc::lowering;

namespace {

/// A linalg.generic over `iterShape` that reduces the dimensions `dims`
/// into a fresh tensor (shape: iterShape without dims) initialised with
/// `init`; `inputs` are read with `inputMaps`, and `fn(inputs, acc)` gives
/// the new accumulator.
Value reduceGeneric(
    OpBuilder &b, Location loc, ArrayRef<int64_t> iterShape,
    ArrayRef<int64_t> dims, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
    Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value)> fn) {
  unsigned rank = iterShape.size();
  Value out = filledTensor(b, loc, dropDims(iterShape, dims), init);
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(dropDimsMap(b.getContext(), rank, dims));
  SmallVector<utils::IteratorType> iters = parallelIterators(rank);
  for (int64_t d : dims)
    iters[d] = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{out.getType()}, inputs, ValueRange{out}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l,
                                fn(nb, l, args.drop_back(), args.back()));
      });
  return generic.getResult(0);
}

/// An elementwise linalg.generic over `shape` (result element type
/// `elementType`) reading `inputs` with `inputMaps`.
Value mapWithMaps(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType, ValueRange inputs,
                  ArrayRef<AffineMap> inputMaps, ScalarFn fn) {
  unsigned rank = shape.size();
  Value out = emptyTensor(b, loc, shape, elementType);
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{out.getType()}, inputs, ValueRange{out}, maps,
      parallelIterators(rank), [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, fn(nb, l, args.drop_back()));
      });
  return generic.getResult(0);
}

/// Mean and 1 / sqrt(var + eps) of `x` over `dims`: two passes, the second
/// over (x - mean)^2, so that a large mean does not cancel the variance.
/// Returns {mean, variance, invStd}, shaped like x without `dims`. The sums
/// accumulate in `accType` (x's type, or f64 for an f32 x), the results are
/// in x's type.
std::tuple<Value, Value, Value> moments(OpBuilder &b, Location loc, Value x,
                                        ArrayRef<int64_t> dims, double eps,
                                        const ElemKind &k, Type accType) {
  auto type = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> shape = type.getShape();
  unsigned rank = shape.size();
  int64_t count = 1;
  for (int64_t d : dims)
    count *= shape[d];
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap stat = dropDimsMap(b.getContext(), rank, dims);
  SmallVector<int64_t> statShape = dropDims(shape, dims);
  auto statType = RankedTensorType::get(statShape, k.type);
  auto accStatType = RankedTensorType::get(statShape, accType);
  bool widen = accType != k.type;
  // x in the accumulator's type (an extension folded into the reductions).
  auto widened = [widen, accType](OpBuilder &nb, Location l, Value v) -> Value {
    return widen ? Value(arith::ExtFOp::create(nb, l, accType, v)) : v;
  };
  Value zero = scalarConst(b, loc, accType, 0);
  Value sum =
      reduceGeneric(b, loc, shape, dims, ValueRange{x}, {id}, zero,
                    [&](OpBuilder &nb, Location l, ValueRange in, Value acc) {
                      return Value(arith::AddFOp::create(nb, l, acc, widened(nb, l, in[0])));
                    });
  auto divByCount = [&](Value v) {
    return mapElementwise(
        b, loc, accStatType, ValueRange{v},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          return Value(arith::DivFOp::create(
              nb, l, a[0], scalarConst(nb, l, accType, double(count))));
        });
  };
  Value meanAcc = divByCount(sum);
  Value sq =
      reduceGeneric(b, loc, shape, dims, ValueRange{x, meanAcc}, {id, stat}, zero,
                    [&](OpBuilder &nb, Location l, ValueRange in, Value acc) {
                      Value c = arith::SubFOp::create(nb, l, widened(nb, l, in[0]), in[1]);
                      return Value(arith::AddFOp::create(
                          nb, l, acc, arith::MulFOp::create(nb, l, c, c)));
                    });
  Value varAcc = divByCount(sq);
  auto narrowed = [&](Value v) {
    if (!widen)
      return v;
    return mapElementwise(b, loc, statType, ValueRange{v},
                          [&](OpBuilder &nb, Location l, ValueRange a) {
                            return Value(arith::TruncFOp::create(nb, l, k.type, a[0]));
                          });
  };
  Value mean = narrowed(meanAcc), var = narrowed(varAcc);
  Value invStd = mapElementwise(
      b, loc, statType, ValueRange{var},
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value s = math::SqrtOp::create(
            nb, l,
            arith::AddFOp::create(nb, l, a[0],
                                  scalarConst(nb, l, k.type, eps)));
        return Value(
            arith::DivFOp::create(nb, l, scalarConst(nb, l, k.type, 1.0), s));
      });
  return {mean, var, invStd};
}

/// softmax / log_softmax -> max over the axis, sum of exp(x - max), then
/// exp(x - max) / sum or (x - max) - log(sum). NaN in a row propagates to
/// the whole row through maximumf.
template <typename OpTy, bool IsLog>
struct SoftmaxLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    ArrayRef<int64_t> shape = type.getShape();
    unsigned rank = shape.size();
    int64_t axis = op.getAxis();
    ElemKind k = elemKind(type);
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    AffineMap row = dropDimsMap(rewriter.getContext(), rank, {axis});
    Value lowest = lowestValue(rewriter, loc, k);
    Value max = reduceGeneric(
        rewriter, loc, shape, {axis}, ValueRange{x}, {id}, lowest,
        [](OpBuilder &b, Location l, ValueRange in, Value acc) {
          return Value(arith::MaximumFOp::create(b, l, acc, in[0]));
        });
    Value zero = scalarConst(rewriter, loc, k.type, 0);
    Value sum =
        reduceGeneric(rewriter, loc, shape, {axis}, ValueRange{x, max},
                      {id, row}, zero,
                      [](OpBuilder &b, Location l, ValueRange in, Value acc) {
                        Value e = math::ExpOp::create(
                            b, l, arith::SubFOp::create(b, l, in[0], in[1]));
                        return Value(arith::AddFOp::create(b, l, acc, e));
                      });
    Value result = mapWithMaps(
        rewriter, loc, shape, k.type, ValueRange{x, max, sum}, {id, row, row},
        [](OpBuilder &b, Location l, ValueRange in) -> Value {
          Value shifted = arith::SubFOp::create(b, l, in[0], in[1]);
          if (IsLog)
            return arith::SubFOp::create(b, l, shifted,
                                         math::LogOp::create(b, l, in[2]));
          return arith::DivFOp::create(b, l, math::ExpOp::create(b, l, shifted),
                                       in[2]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// layer_norm -> moments over axis..rank-1, then
/// (x - mean) * invStd * scale (+ bias); mean and invStd are returned with
/// the normalized dimensions kept as 1.
struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    ArrayRef<int64_t> shape = type.getShape();
    int64_t rank = shape.size(), axis = op.getAxis();
    ElemKind k = elemKind(type);
    SmallVector<int64_t> dims;
    for (int64_t d = axis; d < rank; ++d)
      dims.push_back(d);
    auto [mean, var, invStd] =
        moments(rewriter, loc, x, dims, op.getEpsilon().convertToDouble(), k, k.type);
    (void)var;
    MLIRContext *ctx = rewriter.getContext();
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    AffineMap stat = dropDimsMap(ctx, rank, dims);
    SmallVector<int64_t> pre;
    for (int64_t d = 0; d < axis; ++d)
      pre.push_back(d);
    AffineMap param = dropDimsMap(ctx, rank, pre);
    SmallVector<Value> inputs = {x, mean, invStd, adaptor.getScale()};
    SmallVector<AffineMap> maps = {id, stat, stat, param};
    bool hasBias = bool(adaptor.getBias());
    if (hasBias) {
      inputs.push_back(adaptor.getBias());
      maps.push_back(param);
    }
    Value y =
        mapWithMaps(rewriter, loc, shape, k.type, inputs, maps,
                    [&](OpBuilder &b, Location l, ValueRange in) -> Value {
                      Value c = arith::SubFOp::create(b, l, in[0], in[1]);
                      Value n = arith::MulFOp::create(b, l, c, in[2]);
                      Value s = arith::MulFOp::create(b, l, n, in[3]);
                      if (hasBias)
                        return arith::AddFOp::create(b, l, s, in[4]);
                      return s;
                    });
    auto statType =
        convertedTensorType(*getTypeConverter(), op.getMean().getType());
    rewriter.replaceOp(op, {y, reshapeTo(rewriter, loc, mean, statType),
                            reshapeTo(rewriter, loc, invStd, statType)});
    return success();
  }
};

/// batch_norm_inference -> one elementwise generic reading the per-channel
/// parameters with the map (n, c, ...) -> (c).
struct BatchNormInferenceLowering : OpConversionPattern<BatchNormInferenceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormInferenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank();
    ElemKind k = elemKind(type);
    double eps = op.getEpsilon().convertToDouble();
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    AffineMap channel = AffineMap::get(rank, 0, rewriter.getAffineDimExpr(1));
    Value y =
        mapWithMaps(rewriter, loc, type.getShape(), k.type,
                    ValueRange{x, adaptor.getScale(), adaptor.getBias(),
                               adaptor.getMean(), adaptor.getVariance()},
                    {id, channel, channel, channel, channel},
                    [&](OpBuilder &b, Location l, ValueRange in) -> Value {
                      Value c = arith::SubFOp::create(b, l, in[0], in[3]);
                      Value s = math::SqrtOp::create(
                          b, l,
                          arith::AddFOp::create(
                              b, l, in[4], scalarConst(b, l, k.type, eps)));
                      Value n = arith::DivFOp::create(b, l, c, s);
                      return arith::AddFOp::create(
                          b, l, arith::MulFOp::create(b, l, n, in[1]), in[2]);
                    });
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// batch_norm_training -> moments over every dimension but 1, then the
/// normalization; returns the batch mean and the biased batch variance.
struct BatchNormTrainingLowering : OpConversionPattern<BatchNormTrainingOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormTrainingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank();
    ElemKind k = elemKind(type);
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (d != 1)
        dims.push_back(d);
    auto [mean, var, invStd] = moments(rewriter, loc, x, dims, op.getEpsilon().convertToDouble(),
                                       k, batchNormAccumulatorType(k.type));
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    AffineMap channel = AffineMap::get(rank, 0, rewriter.getAffineDimExpr(1));
    Value y = mapWithMaps(
        rewriter, loc, type.getShape(), k.type,
        ValueRange{x, mean, invStd, adaptor.getScale(), adaptor.getBias()},
        {id, channel, channel, channel, channel},
        [&](OpBuilder &b, Location l, ValueRange in) -> Value {
          Value c = arith::SubFOp::create(b, l, in[0], in[1]);
          Value n = arith::MulFOp::create(b, l, c, in[2]);
          return arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, n, in[3]), in[4]);
        });
    rewriter.replaceOp(op, {y, mean, var});
    return success();
  }
};

/// nll_loss -> a linalg.generic over the target positions reading the
/// log-probability of the target class with tensor.extract (the class index
/// clamped like a gather index), then, for sum / mean, a reduction of
/// (loss, weight) pairs; mean divides the loss sum by the weight sum (NaN
/// when every target is ignored, as PyTorch). Ignored positions contribute a
/// plain 0, never -x * 0, which would be NaN for x = -inf.
struct NllLossLowering : OpConversionPattern<NllLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(NllLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), target = adaptor.getTarget();
    Value weight = adaptor.getWeight();
    auto xType = cast<RankedTensorType>(x.getType());
    auto tType = cast<RankedTensorType>(target.getType());
    ElemKind k = elemKind(xType);
    int64_t classes = xType.getDimSize(1);
    int64_t rank = tType.getRank();
    std::optional<int64_t> ignore = op.getIgnoreIndex();
    LossReduction reduction = op.getReduction();
    // The per-position (loss, weight), computed in the generic body.
    auto lossAndWeight = [&](OpBuilder &b, Location l,
                             Value t) -> std::pair<Value, Value> {
      Value cls = wrapAndClampIndex(b, l, t, classes);
      SmallVector<Value> at = {linalg::IndexOp::create(b, l, 0), cls};
      for (int64_t d = 1; d < rank; ++d)
        at.push_back(linalg::IndexOp::create(b, l, d));
      Value logp = tensor::ExtractOp::create(b, l, x, at);
      Value w = weight ? Value(tensor::ExtractOp::create(b, l, weight, cls))
                       : scalarConst(b, l, k.type, 1.0);
      Value loss =
          arith::NegFOp::create(b, l, arith::MulFOp::create(b, l, logp, w));
      if (ignore) {
        Value ig = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, t,
                                         intConst(b, l, t.getType(), *ignore));
        Value zero = scalarConst(b, l, k.type, 0);
        loss = arith::SelectOp::create(b, l, ig, zero, loss);
        w = arith::SelectOp::create(b, l, ig, zero, w);
      }
      return {loss, w};
    };
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    if (reduction == LossReduction::none) {
      Value y = mapWithMaps(rewriter, loc, tType.getShape(), k.type,
                            ValueRange{target}, {id},
                            [&](OpBuilder &b, Location l, ValueRange in) {
                              return lossAndWeight(b, l, in[0]).first;
                            });
      rewriter.replaceOp(op, y);
      return success();
    }
    Value zero = scalarConst(rewriter, loc, k.type, 0);
    Value lossInit = filledTensor(rewriter, loc, {}, zero);
    Value weightInit = filledTensor(rewriter, loc, {}, zero);
    AffineMap scalarMap = AffineMap::get(rank, 0, rewriter.getContext());
    SmallVector<utils::IteratorType> iters(rank,
                                           utils::IteratorType::reduction);
    auto sums = linalg::GenericOp::create(
        rewriter, loc, TypeRange{lossInit.getType(), weightInit.getType()},
        ValueRange{target}, ValueRange{lossInit, weightInit},
        SmallVector<AffineMap>{id, scalarMap, scalarMap}, iters,
        [&](OpBuilder &b, Location l, ValueRange args) {
          auto [loss, w] = lossAndWeight(b, l, args[0]);
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::AddFOp::create(b, l, args[1], loss),
                         arith::AddFOp::create(b, l, args[2], w)});
        });
    Value result = sums.getResult(0);
    if (reduction == LossReduction::mean)
      result = mapElementwise(
          rewriter, loc, cast<RankedTensorType>(result.getType()),
          ValueRange{result, sums.getResult(1)},
          [](OpBuilder &b, Location l, ValueRange a) {
            return Value(arith::DivFOp::create(b, l, a[0], a[1]));
          });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Philox4x32-10 (Salmon et al., SC'11) on i32 words: the four output words
/// for counter C and key K.
std::array<Value, 4> philox(OpBuilder &b, Location loc, std::array<Value, 4> c,
                            std::array<Value, 2> k) {
  Type i32 = b.getI32Type();
  auto konst = [&](uint32_t v) { return intConst(b, loc, i32, int64_t(int32_t(v))); };
  Value m0 = konst(0xD2511F53), m1 = konst(0xCD9E8D57);
  Value w0 = konst(0x9E3779B9), w1 = konst(0xBB67AE85);
  for (int round = 0; round < 10; ++round) {
    if (round) {
      k[0] = arith::AddIOp::create(b, loc, k[0], w0);
      k[1] = arith::AddIOp::create(b, loc, k[1], w1);
    }
    auto p0 = arith::MulUIExtendedOp::create(b, loc, m0, c[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, m1, c[2]);
    auto x3 = [&](Value a, Value x, Value y) {
      return arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, a, x), y);
    };
    c = {x3(p1.getHigh(), c[1], k[0]), p1.getLow(), x3(p0.getHigh(), c[3], k[1]), p0.getLow()};
  }
  return c;
}

/// The state of a random op's Philox draws: `rng = [seed, counter]` (the
/// key and the high counter words) as two 0-d tensors, which the op's
/// generic takes as broadcast inputs (PhiloxState::append), or null for seed
/// 0 and counter 0. Inputs, not scalars extracted above the generic: a GPU
/// kernel cannot take a value that host code loaded from device memory, and
/// the CPU's vectorizer broadcasts an input where it would not vectorize a
/// load in the body. Checks the op's element count against the 32-bit
/// element word of the counter.
struct PhiloxState {
  Value seed, counter;

  /// Appends the state's inputs and their maps for a generic of RANK loops.
  void append(OpBuilder &b, unsigned rank, SmallVectorImpl<Value> &inputs,
              SmallVectorImpl<AffineMap> &maps) const {
    if (!seed)
      return;
    inputs.append({seed, counter});
    maps.append(2, AffineMap::get(rank, 0, {}, b.getContext()));
  }
};
FailureOr<PhiloxState> philoxState(OpBuilder &b, Operation *op, Value rng,
                                   RankedTensorType type) {
  if (type.getNumElements() > (int64_t(1) << 32))
    return op->emitOpError("random draws for more than 2^32 elements are not supported (the "
                           "Philox counter holds a 32-bit element index)");
  if (!rng)
    return PhiloxState{};
  Location loc = op->getLoc();
  auto scalar = RankedTensorType::get({}, b.getI64Type());
  auto word = [&](int64_t at) -> Value {
    return tensor::ExtractSliceOp::create(b, loc, scalar, rng, ArrayRef<OpFoldResult>{b.getIndexAttr(at)},
                                          ArrayRef<OpFoldResult>{b.getIndexAttr(1)},
                                          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  };
  Value seed = word(0);
  Value counter = word(1);
  return PhiloxState{seed, counter};
}

/// The Philox words of the element at the current linalg.generic indices of
/// a tensor of SHAPE (row-major index, as i32) in stream STREAM. STATE holds
/// the body's block arguments of the inputs PhiloxState::append added (seed
/// and counter), or nothing for seed 0 and counter 0.
std::array<Value, 4> philoxAt(OpBuilder &b, Location l, ArrayRef<int64_t> shape,
                              int64_t stream, ValueRange state) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  std::array<Value, 2> key, count;
  if (state.empty()) {
    Value zero = intConst(b, l, i32, 0);
    key = count = {zero, zero};
  } else {
    auto words = [&](Value v) -> std::array<Value, 2> {
      Value hi = arith::ShRUIOp::create(b, l, v, intConst(b, l, i64, 32));
      return {arith::TruncIOp::create(b, l, i32, v).getResult(),
              arith::TruncIOp::create(b, l, i32, hi).getResult()};
    };
    key = words(state[0]);
    count = words(state[1]);
  }
  Value linear = indexConst(b, l, 0);
  for (unsigned d = 0; d < shape.size(); ++d) {
    linear = arith::MulIOp::create(b, l, linear, indexConst(b, l, shape[d]));
    linear = arith::AddIOp::create(b, l, linear, linalg::IndexOp::create(b, l, d));
  }
  Value i = arith::IndexCastUIOp::create(b, l, i32, linear);
  return philox(b, l, {i, intConst(b, l, i32, stream), count[0], count[1]}, key);
}

/// dropout. Without RNG state (outside training): the identity and an
/// all-true mask. With `rng = [seed, counter]`: element i is kept when the
/// top 24 bits of Philox4x32-10(key = seed, counter = (i, stream, counter))
/// are >= ceil(ratio 2^24) (an exact integer test), and scaled by
/// 1 / (1 - ratio).
struct DropoutLowering : OpConversionPattern<DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto maskType = cast<RankedTensorType>(op.getMask().getType());
    if (!adaptor.getRng()) {
      Value mask = arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(maskType, rewriter.getBoolAttr(true)));
      rewriter.replaceOp(op, {adaptor.getInput(), mask});
      return success();
    }
    auto xType = cast<RankedTensorType>(adaptor.getInput().getType());
    auto state = philoxState(rewriter, op, adaptor.getRng(), xType);
    if (failed(state))
      return failure();
    Type et = xType.getElementType();
    Type i32 = rewriter.getI32Type();
    double ratio = op.getRatio().convertToDouble();
    int64_t threshold = int64_t(std::ceil(ratio * double(1 << 24)));
    Value limit = intConst(rewriter, loc, i32, threshold);
    Value scale = scalarConst(rewriter, loc, et, 1.0 / (1.0 - ratio));
    Value zero = scalarConst(rewriter, loc, et, 0.0);
    ArrayRef<int64_t> shape = xType.getShape();
    unsigned rank = shape.size();
    Value outY = emptyTensor(rewriter, loc, shape, et);
    Value outMask = emptyTensor(rewriter, loc, shape, rewriter.getI1Type());
    SmallVector<Value> inputs{adaptor.getInput()};
    SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(rank)};
    state->append(rewriter, rank, inputs, maps);
    maps.append(2, rewriter.getMultiDimIdentityMap(rank));
    int64_t stream = op.getStream();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outY.getType(), outMask.getType()}, inputs,
        ValueRange{outY, outMask}, maps, parallelIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value word = philoxAt(b, l, shape, stream, args.slice(1, inputs.size() - 1))[0];
          Value bits = arith::ShRUIOp::create(b, l, word, intConst(b, l, i32, 8));
          Value keep = arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, bits, limit);
          Value scaled = arith::MulFOp::create(b, l, args[0], scale);
          Value y = arith::SelectOp::create(b, l, keep, scaled, zero);
          linalg::YieldOp::create(b, l, ValueRange{y, keep});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// random: per element, u = (w0 >> 8) 2^-24 (an f32 in [0, 1), exact);
/// uniform: a + (b - a) u; normal (Box-Muller): a + b sqrt(-2 ln u1)
/// cos(2 pi u2), u1 = ((w0 >> 8) + 1) 2^-24 in (0, 1], u2 from w1. In f32,
/// then cast to the result type.
struct RandomLowering : OpConversionPattern<RandomOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RandomOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getResult().getType());
    auto state = philoxState(rewriter, op, adaptor.getRng(), type);
    if (failed(state))
      return failure();
    Type et = type.getElementType(), f32 = rewriter.getF32Type(), i32 = rewriter.getI32Type();
    ArrayRef<int64_t> shape = type.getShape();
    unsigned rank = shape.size();
    double a = op.getA().convertToDouble(), bb = op.getB().convertToDouble();
    bool normal = op.getDistribution() == RandomDistribution::normal;
    int64_t stream = op.getStream();
    Value out = emptyTensor(rewriter, loc, shape, et);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    state->append(rewriter, rank, inputs, maps);
    maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{out.getType()}, inputs, ValueRange{out}, maps,
        parallelIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          std::array<Value, 4> w = philoxAt(b, l, shape, stream, args.take_front(inputs.size()));
          Value eight = intConst(b, l, i32, 8);
          Value ulp = scalarConst(b, l, f32, 1.0 / double(1 << 24));
          auto unit = [&](Value word, int64_t plus) {
            Value bits = arith::ShRUIOp::create(b, l, word, eight);
            if (plus)
              bits = arith::AddIOp::create(b, l, bits, intConst(b, l, i32, plus));
            return arith::MulFOp::create(b, l, arith::UIToFPOp::create(b, l, f32, bits), ulp)
                .getResult();
          };
          // One value per statement: IR built in call arguments would follow
          // the host compiler's evaluation order (scripts/check_arg_order.py).
          Value z;
          if (!normal) {
            z = unit(w[0], 0);
          } else {
            Value u1 = unit(w[0], 1);
            Value u2 = unit(w[1], 0);
            Value minusTwo = scalarConst(b, l, f32, -2.0);
            Value logU1 = math::LogOp::create(b, l, u1);
            Value radius = math::SqrtOp::create(b, l, arith::MulFOp::create(b, l, minusTwo, logU1));
            Value twoPi = scalarConst(b, l, f32, 2.0 * M_PI);
            Value angle = math::CosOp::create(b, l, arith::MulFOp::create(b, l, twoPi, u2));
            z = arith::MulFOp::create(b, l, radius, angle);
          }
          // uniform: a + (b - a) u; normal: a + b z.
          Value spread = scalarConst(b, l, f32, normal ? bb : bb - a);
          Value offset = scalarConst(b, l, f32, a);
          Value y = arith::AddFOp::create(b, l, offset, arith::MulFOp::create(b, l, spread, z));
          if (et != f32)
            y = isa<FloatType>(et) && et.getIntOrFloatBitWidth() > 32
                    ? arith::ExtFOp::create(b, l, et, y).getResult()
                    : arith::TruncFOp::create(b, l, et, y).getResult();
          linalg::YieldOp::create(b, l, ValueRange{y});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void tcc::lowering::populateNormalizationPatterns(const TypeConverter &tc,
                                                  RewritePatternSet &patterns) {
  patterns.add<SoftmaxLowering<SoftmaxOp, false>,
               SoftmaxLowering<LogSoftmaxOp, true>, LayerNormLowering,
               BatchNormInferenceLowering, BatchNormTrainingLowering,
               NllLossLowering, DropoutLowering, RandomLowering>(tc, patterns.getContext());
}
