//===- Resize.cpp - tcc.resize to a table-driven linalg.generic -----------===//
//
// Shapes and scales are static, so every output coordinate's source taps
// (input indices and interpolation weights) are computed here, in double
// precision, exactly as the ONNX reference implementation computes them:
// the coordinate transformation, the neighbour selection with edge padding,
// the nearest rounding modes, linear and cubic (cubic_coeff_a) weights,
// exclude_outside renormalization, and tf_crop_and_resize's roi and
// extrapolation. The tables become small 1-D constants read through
// projected maps, and the generic body gathers the taps with tensor.extract
// and sums their weighted values. Dimensions that map each output index to
// itself (scale 1 and no crop) read the input directly.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Patterns.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace tcc;
using namespace tcc::lowering;

/// The n integers of [0, limit) nearest to x, ties to the smaller, sorted
/// (the reference's _get_neighbor_idxes).
static SmallVector<int64_t> nearestIntegers(double x, int64_t n, int64_t limit) {
  int64_t c = std::clamp<int64_t>(int64_t(std::floor(x)), 0, limit - 1);
  SmallVector<int64_t> cand;
  for (int64_t i = c - n - 1; i <= c + n + 1; ++i)
    if (i >= 0 && i < limit)
      cand.push_back(i);
  llvm::sort(cand, [&](int64_t a, int64_t b) {
    double da = std::fabs(x - double(a)), db = std::fabs(x - double(b));
    return da != db ? da < db : a < b;
  });
  cand.resize(std::min<size_t>(cand.size(), n));
  llvm::sort(cand);
  return cand;
}

/// Computes the taps of output coordinate `o` of one dimension.
ResizeTaps tcc::lowering::computeResizeTaps(ResizeOp op, int64_t o, int64_t in, int64_t outSize,
                 double scale, double roiStart, double roiEnd) {
  ResizeTaps t;
  double x = double(o);
  double outWidth = scale * double(in);
  double xo = 0;
  switch (op.getCoordinateMode()) {
  case CoordinateMode::align_corners:
    xo = outWidth == 1 ? 0.0 : x * double(in - 1) / (outWidth - 1);
    break;
  case CoordinateMode::asymmetric:
    xo = x / scale;
    break;
  case CoordinateMode::tf_crop_and_resize:
    xo = outWidth == 1
             ? (roiEnd - roiStart) * double(in - 1) / 2
             : x * (roiEnd - roiStart) * double(in - 1) / (outWidth - 1);
    xo += roiStart * double(in - 1);
    if (xo < 0 || xo > double(in - 1)) {
      t.valid = false;
      t.index.push_back(0);
      t.weight.push_back(0);
      return t;
    }
    break;
  case CoordinateMode::pytorch_half_pixel:
    xo = outWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    break;
  case CoordinateMode::half_pixel:
    xo = (x + 0.5) / scale - 0.5;
    break;
  case CoordinateMode::half_pixel_symmetric: {
    double adjustment = double(outSize) / outWidth;
    double center = double(in) / 2;
    double offset = center * (1 - adjustment);
    xo = offset + (x + 0.5) / scale - 0.5;
    break;
  }
  }
  double xi = std::floor(xo);
  // The ratio lies in (0, 1]: an integer coordinate takes its left
  // neighbour's pair with weight 1 on the right.
  double ratio = xo == xi ? 1.0 : xo - xi;
  SmallVector<double> coeffs;
  switch (op.getMode()) {
  case ResizeMode::nearest: {
    bool ceilSide;
    if (xo == xi)
      ceilSide = true;
    else
      switch (op.getNearestMode()) {
      case NearestMode::round_prefer_floor:
        ceilSide = ratio > 0.5;
        break;
      case NearestMode::round_prefer_ceil:
        ceilSide = ratio >= 0.5;
        break;
      case NearestMode::floor:
        ceilSide = false;
        break;
      case NearestMode::ceil:
        ceilSide = true;
        break;
      }
    coeffs = {ceilSide ? 0.0 : 1.0, ceilSide ? 1.0 : 0.0};
    break;
  }
  case ResizeMode::linear:
    coeffs = {1 - ratio, ratio};
    break;
  case ResizeMode::cubic: {
    double a = op.getCubicCoeffA().convertToDouble(), r = ratio, s = 1 - ratio;
    coeffs = {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
              ((a + 2) * r - (a + 3)) * r * r + 1,
              ((a + 2) * s - (a + 3)) * s * s + 1,
              ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
    break;
  }
  }
  int64_t n = coeffs.size();
  // Neighbours in the edge-padded input, as indices of the original.
  int64_t pad = (n + 1) / 2;
  SmallVector<int64_t> idx = nearestIntegers(xo + double(pad), n, in + 2 * pad);
  for (int64_t &i : idx)
    i -= pad;
  if (op.getExcludeOutside() && op.getMode() != ResizeMode::nearest) {
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (idx[j] < 0 || idx[j] >= in)
        coeffs[j] = 0;
      sum += coeffs[j];
    }
    if (sum != 0)
      for (double &c : coeffs)
        c /= sum;
  }
  for (int64_t j = 0; j < n; ++j) {
    int64_t clamped = std::clamp<int64_t>(idx[j], 0, in - 1);
    if (op.getMode() == ResizeMode::nearest) {
      if (coeffs[j] != 0) { // exactly one tap of nearest has weight 1
        t.index.push_back(clamped);
        t.weight.push_back(1);
      }
      continue;
    }
    t.index.push_back(clamped);
    t.weight.push_back(coeffs[j]);
  }
  return t;
}

namespace {

/// The tap tables of a resize's resampled dimensions, the inputs of its
/// linalg.generic. `tapCount[d]` = 0 marks an identity dimension (read at
/// the output index); the other entries say which generic operand holds
/// each table.
struct TapTables {
  SmallVector<int64_t> tapCount;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  /// Per dimension, per tap: the operand of the input indices and (not
  /// nearest) of the weights.
  SmallVector<SmallVector<size_t>> idxArg, wArg;
  /// Per dimension: the operand of the valid flags (tf_crop_and_resize out
  /// of the roi), where any output is out of it.
  SmallVector<std::optional<size_t>> validArg;
};

/// Whether TAPS read, for every output index O, input index O alone with
/// weight 1 (a dimension the resize leaves as it is).
bool isIdentityDimension(ArrayRef<ResizeTaps> taps, int64_t in, int64_t out) {
  bool identity = in == out;
  for (auto [o, t] : llvm::enumerate(taps)) {
    int64_t nonzero = 0;
    bool onlySelf = t.valid;
    for (auto [i, w] : llvm::zip(t.index, t.weight)) {
      if (w == 0)
        continue;
      ++nonzero;
      onlySelf &= i == int64_t(o) && w == 1.0;
    }
    identity &= onlySelf && nonzero == 1;
  }
  return identity;
}

/// The tables of OP (input type IN_TYPE, converted result type OUT_TYPE),
/// the weights in WEIGHT_TYPE, created as constants at REWRITER's point.
TapTables buildTapTables(ResizeOp op, RankedTensorType inType, RankedTensorType outType,
                         Type weightType, ConversionPatternRewriter &rewriter, Location loc) {
  int64_t rank = outType.getRank();
  bool isNearest = op.getMode() == ResizeMode::nearest;
  std::optional<ArrayRef<double>> roi = op.getRoi();
  MLIRContext *ctx = rewriter.getContext();
  TapTables tables;
  tables.tapCount.assign(rank, 0);
  tables.idxArg.resize(rank);
  tables.wArg.resize(rank);
  tables.validArg.resize(rank);
  auto addTable = [&](int64_t d, Type elemType,
                      ArrayRef<Attribute> values) -> size_t {
    auto type = RankedTensorType::get({int64_t(values.size())}, elemType);
    tables.inputs.push_back(arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(type, values)));
    tables.maps.push_back(AffineMap::get(rank, 0, getAffineDimExpr(d, ctx)));
    return tables.inputs.size() - 1;
  };
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = inType.getDimSize(d), out = outType.getDimSize(d);
    double rs = roi ? (*roi)[d] : 0.0, re = roi ? (*roi)[rank + d] : 1.0;
    SmallVector<ResizeTaps> taps;
    bool anyInvalid = false;
    for (int64_t o = 0; o < out; ++o) {
      taps.push_back(computeResizeTaps(op, o, in, out, op.getScales()[d], rs, re));
      anyInvalid |= !taps.back().valid;
    }
    if (isIdentityDimension(taps, in, out))
      continue;
    int64_t n = 0;
    for (const ResizeTaps &t : taps)
      n = std::max<int64_t>(n, t.index.size());
    tables.tapCount[d] = n;
    for (int64_t j = 0; j < n; ++j) {
      SmallVector<Attribute> idxVals, wVals;
      for (const ResizeTaps &t : taps) {
        bool has = j < int64_t(t.index.size());
        idxVals.push_back(rewriter.getI64IntegerAttr(has ? t.index[j] : 0));
        wVals.push_back(
            rewriter.getFloatAttr(weightType, has ? t.weight[j] : 0.0));
      }
      tables.idxArg[d].push_back(addTable(d, rewriter.getI64Type(), idxVals));
      if (!isNearest)
        tables.wArg[d].push_back(addTable(d, weightType, wVals));
    }
    if (anyInvalid) {
      SmallVector<Attribute> vals;
      for (const ResizeTaps &t : taps)
        vals.push_back(rewriter.getBoolAttr(t.valid));
      tables.validArg[d] = addTable(d, rewriter.getI1Type(), vals);
    }
  }
  return tables;
}

/// The generic's body: gathers the taps of every combination over the
/// resampled dimensions from INPUT (element kind K) and, unless nearest,
/// sums their weighted values in CK (clamped and converted back for
/// integers); outside a crop's roi, the extrapolation value.
void emitResizeBody(OpBuilder &b, Location l, ValueRange args, ResizeOp op, Value input,
                    const TapTables &tables, const ElemKind &k, const ElemKind &ck) {
  int64_t rank = int64_t(tables.tapCount.size());
  bool isNearest = op.getMode() == ResizeMode::nearest;
  double extrapolation = op.getExtrapolationValue().convertToDouble();
  // Identity dimensions read at the output index; resampled ones at
  // their taps' table entries.
  SmallVector<Value> base(rank);
  SmallVector<SmallVector<Value>> tapIndex(rank);
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!tables.tapCount[d]) {
      base[d] = linalg::IndexOp::create(b, l, d);
      continue;
    }
    dims.push_back(d);
    for (size_t arg : tables.idxArg[d])
      tapIndex[d].push_back(arith::IndexCastOp::create(
          b, l, b.getIndexType(), args[arg]));
  }
  // Enumerate every combination of taps over the resampled dims.
  SmallVector<int64_t> choice(dims.size(), 0);
  Value acc;
  while (true) {
    SmallVector<Value> coords(base);
    Value w;
    for (auto [j, d] : llvm::enumerate(dims)) {
      coords[d] = tapIndex[d][choice[j]];
      if (!isNearest) {
        Value wd = args[tables.wArg[d][choice[j]]];
        w = w ? Value(arith::MulFOp::create(b, l, w, wd)) : wd;
      }
    }
    Value v = tensor::ExtractOp::create(b, l, input, coords);
    if (isNearest) {
      acc = v;
    } else {
      v = castScalar(b, l, v, k, ck);
      Value term = w ? Value(arith::MulFOp::create(b, l, w, v)) : v;
      acc = acc ? Value(arith::AddFOp::create(b, l, acc, term)) : term;
    }
    // Next combination (odometer).
    int64_t j = int64_t(dims.size()) - 1;
    for (; j >= 0; --j) {
      if (++choice[j] < tables.tapCount[dims[j]])
        break;
      choice[j] = 0;
    }
    if (j < 0)
      break;
  }
  if (!isNearest && !k.isFloat) {
    unsigned width = k.type.getIntOrFloatBitWidth();
    double lo = k.isUnsigned ? 0.0 : -std::ldexp(1.0, width - 1);
    double hi = k.isUnsigned ? std::ldexp(1.0, width) - 1
                             : std::ldexp(1.0, width - 1) - 1;
    Value low = arith::MaximumFOp::create(b, l, acc, scalarConst(b, l, ck.type, lo));
    acc = arith::MinimumFOp::create(b, l, low, scalarConst(b, l, ck.type, hi));
    acc = castScalar(b, l, acc, ck, k);
  }
  Value valid;
  for (int64_t d = 0; d < rank; ++d)
    if (tables.validArg[d])
      valid = valid ? Value(arith::AndIOp::create(b, l, valid,
                                                  args[*tables.validArg[d]]))
                    : args[*tables.validArg[d]];
  if (valid) {
    Value ext = k.isBool ? intConst(b, l, k.type, extrapolation != 0)
                         : scalarConst(b, l, k.type, extrapolation);
    acc = arith::SelectOp::create(b, l, valid, acc, ext);
  }
  linalg::YieldOp::create(b, l, acc);
}

/// resize -> one linalg.generic over the result reading the tap tables of
/// the resampled dimensions (see the file comment); nearest reads one tap,
/// linear and cubic sum the weighted products over all tap combinations.
struct ResizeLowering : OpConversionPattern<ResizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ResizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    auto outType = convertedTensorType(*getTypeConverter(), op.getType());
    int64_t rank = outType.getRank();
    ElemKind k = elemKind(op.getType());
    // Integers interpolate in f32 and convert back like the reference's
    // astype (after clamping into the type's range).
    ElemKind ck = k;
    if (!k.isFloat) {
      ck.type = rewriter.getF32Type();
      ck.isFloat = true;
      ck.isUnsigned = ck.isBool = false;
    }
    TapTables tables = buildTapTables(op, inType, outType, ck.type, rewriter, loc);
    tables.maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    Value init = emptyTensor(rewriter, loc, outType.getShape(),
                             outType.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType}, tables.inputs, ValueRange{init}, tables.maps,
        parallelIterators(rank), [&](OpBuilder &b, Location l, ValueRange args) {
          emitResizeBody(b, l, args, op, input, tables, k, ck);
        });
    rewriter.replaceOp(op, generic->getResults());
    return success();
  }
};

} // namespace

void tcc::lowering::populateResizePatterns(const TypeConverter &tc,
                                           RewritePatternSet &patterns) {
  patterns.add<ResizeLowering>(tc, patterns.getContext());
}
