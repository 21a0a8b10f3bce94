//===- TccFolds.cpp - folders and canonicalizations of tcc ops ------------===//
//
// Constant folding makes the shape subgraphs of exported models (Shape ->
// Gather -> Concat -> Reshape) disappear at import: the importer builds with
// createOrFold, so each op folds as soon as its operands are constants. Folds
// that would materialize a large non-splat tensor are refused (kFoldLimit).
//
//===----------------------------------------------------------------------===//

#include "dialects/TccOps.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APSInt.h"

#include <cmath>

using namespace mlir;
using namespace tcc;

/// Largest non-splat tensor (in elements) that a folder may create.
static constexpr int64_t kFoldLimit = 1 << 16;
/// Largest result (in elements) of a folded broadcast of a non-splat tensor:
/// enough for the shape subgraphs folding exists for.
static constexpr int64_t kBroadcastFoldLimit = 1 << 12;

static bool foldable(Type t) {
  // Checked: getNumElements() wraps on shapes built from hostile data.
  std::optional<int64_t> n =
      checkedNumElements(cast<RankedTensorType>(t).getShape());
  return n && *n <= kFoldLimit;
}

/// Whether an elementwise fold of `operands` into `t` may materialize: a
/// result computed from splats alone is a splat, whatever its size.
static bool foldable(Type t, ArrayRef<Attribute> operands) {
  return foldable(t) || llvm::all_of(operands, [](Attribute a) {
           auto d = dyn_cast_if_present<DenseElementsAttr>(a);
           return d && d.isSplat();
         });
}

static bool isUnsigned(Type t) {
  return getElementTypeOrSelf(t).isUnsignedInteger();
}

/// Whether `attr` is a splat constant equal to `value`.
static bool isSplat(Attribute attr, double value) {
  auto d = dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!d || !d.isSplat())
    return false;
  Type et = d.getElementType();
  if (isa<FloatType>(et))
    return d.getSplatValue<APFloat>().convertToDouble() == value;
  if (isa<IntegerType>(et))
    return d.getSplatValue<APInt>().getSExtValue() == int64_t(value);
  return false;
}

/// Rounds `v` into the semantics of `like`.
static APFloat toSemantics(double v, const APFloat &like) {
  APFloat out(v);
  bool lost;
  out.convert(like.getSemantics(), APFloat::rmNearestTiesToEven, &lost);
  return out;
}

static double toDouble(const APFloat &a) {
  APFloat d = a;
  bool lost;
  d.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return d.convertToDouble();
}

/// Folds a unary float op through a double-precision function.
static Attribute foldUnaryFloat(ArrayRef<Attribute> operands, Type type,
                                double (*fn)(double)) {
  if (!operands[0] || !foldable(type, operands))
    return {};
  return constFoldUnaryOp<FloatAttr, APFloat, void>(operands, [&](const APFloat &a) {
    return toSemantics(fn(toDouble(a)), a);
  });
}

//===----------------------------------------------------------------------===//
// Constants and unary ops
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

#define TCC_FOLD_FLOAT_UNARY(OP, FN)                                           \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldUnaryFloat(adaptor.getOperands(), getType(), FN);               \
  }

TCC_FOLD_FLOAT_UNARY(ExpOp, [](double x) { return std::exp(x); })
TCC_FOLD_FLOAT_UNARY(LogOp, [](double x) { return std::log(x); })
TCC_FOLD_FLOAT_UNARY(SqrtOp, [](double x) { return std::sqrt(x); })
TCC_FOLD_FLOAT_UNARY(RsqrtOp, [](double x) { return 1.0 / std::sqrt(x); })
TCC_FOLD_FLOAT_UNARY(ReciprocalOp, [](double x) { return 1.0 / x; })
TCC_FOLD_FLOAT_UNARY(TanhOp, [](double x) { return std::tanh(x); })
TCC_FOLD_FLOAT_UNARY(SigmoidOp, [](double x) { return 1.0 / (1.0 + std::exp(-x)); })
TCC_FOLD_FLOAT_UNARY(ErfOp, [](double x) { return std::erf(x); })
TCC_FOLD_FLOAT_UNARY(SoftplusOp, [](double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
})
TCC_FOLD_FLOAT_UNARY(SinOp, [](double x) { return std::sin(x); })
TCC_FOLD_FLOAT_UNARY(CosOp, [](double x) { return std::cos(x); })
TCC_FOLD_FLOAT_UNARY(TanOp, [](double x) { return std::tan(x); })
TCC_FOLD_FLOAT_UNARY(AsinOp, [](double x) { return std::asin(x); })
TCC_FOLD_FLOAT_UNARY(AcosOp, [](double x) { return std::acos(x); })
TCC_FOLD_FLOAT_UNARY(AtanOp, [](double x) { return std::atan(x); })
TCC_FOLD_FLOAT_UNARY(SinhOp, [](double x) { return std::sinh(x); })
TCC_FOLD_FLOAT_UNARY(CoshOp, [](double x) { return std::cosh(x); })
TCC_FOLD_FLOAT_UNARY(AsinhOp, [](double x) { return std::asinh(x); })
TCC_FOLD_FLOAT_UNARY(AcoshOp, [](double x) { return std::acosh(x); })
TCC_FOLD_FLOAT_UNARY(AtanhOp, [](double x) { return std::atanh(x); })
TCC_FOLD_FLOAT_UNARY(FloorOp, [](double x) { return std::floor(x); })
TCC_FOLD_FLOAT_UNARY(CeilOp, [](double x) { return std::ceil(x); })
TCC_FOLD_FLOAT_UNARY(RoundOp, [](double x) { return std::nearbyint(x); })
#undef TCC_FOLD_FLOAT_UNARY

/// Folds a unary op defined on floats and integers alike.
template <typename FloatFn, typename IntFn>
static OpFoldResult foldUnaryNum(ArrayRef<Attribute> operands, Type type,
                                 FloatFn ffn, IntFn ifn) {
  if (!operands[0] || !foldable(type, operands))
    return {};
  if (isa<FloatType>(getElementTypeOrSelf(type)))
    return constFoldUnaryOp<FloatAttr, APFloat, void>(operands, [&](const APFloat &a) {
      return toSemantics(ffn(toDouble(a)), a);
    });
  bool u = isUnsigned(type);
  return constFoldUnaryOp<IntegerAttr, APInt, void>(
      operands, [&](const APInt &a) { return ifn(a, u); });
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return foldUnaryNum(
      adaptor.getOperands(), getType(), [](double x) { return -x; },
      [](const APInt &a, bool) { return -a; });
}

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  return foldUnaryNum(
      adaptor.getOperands(), getType(), [](double x) { return std::fabs(x); },
      [](const APInt &a, bool u) { return u ? a : a.abs(); });
}

OpFoldResult SignOp::fold(FoldAdaptor adaptor) {
  return foldUnaryNum(
      adaptor.getOperands(), getType(),
      [](double x) { return std::isnan(x) ? x : double((x > 0) - (x < 0)); },
      [](const APInt &a, bool u) {
        if (a.isZero())
          return a;
        if (!u && a.isNegative())
          return APInt::getAllOnes(a.getBitWidth());
        return APInt(a.getBitWidth(), 1);
      });
}

OpFoldResult ReluOp::fold(FoldAdaptor adaptor) {
  return foldUnaryNum(
      adaptor.getOperands(), getType(),
      [](double x) { return x > 0 || std::isnan(x) ? x : 0.0; },
      [](const APInt &a, bool u) {
        return (!u && a.isNegative()) ? APInt(a.getBitWidth(), 0) : a;
      });
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NotOp>())
    return inner.getInput();
  return constFoldUnaryOp<IntegerAttr, APInt, void>(adaptor.getOperands(),
                                       [](const APInt &a) { return ~a; });
}

OpFoldResult ClampOp::fold(FoldAdaptor adaptor) {
  if (!getMin() && !getMax())
    return getInput();
  double lo = getMin() ? getMin()->convertToDouble() : -INFINITY;
  double hi = getMax() ? getMax()->convertToDouble() : INFINITY;
  return foldUnaryNum(
      adaptor.getOperands(), getType(),
      [&](double x) { return std::isnan(x) ? x : std::min(std::max(x, lo), hi); },
      [&](const APInt &a, bool u) {
        double v = u ? double(a.getZExtValue()) : double(a.getSExtValue());
        v = std::min(std::max(v, lo), hi);
        return APInt(a.getBitWidth(), uint64_t(int64_t(v)), !u);
      });
}

/// Whether every value of FROM converts to TO and back unchanged (a float
/// widening, or an integer widening of the same signedness).
static bool castRoundTrips(Type from, Type to) {
  if (auto f = dyn_cast<FloatType>(from))
    if (auto t = dyn_cast<FloatType>(to))
      return llvm::APFloat::isRepresentableBy(f.getFloatSemantics(), t.getFloatSemantics());
  auto f = dyn_cast<IntegerType>(from), t = dyn_cast<IntegerType>(to);
  return f && t && f.getWidth() > 1 && t.getWidth() > f.getWidth() &&
         f.isUnsigned() == t.isUnsigned();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // cast(cast(x, wider), type(x)) = x when the widening loses nothing.
  if (auto inner = getInput().getDefiningOp<CastOp>())
    if (inner.getInput().getType() == getType() &&
        castRoundTrips(getType().getElementType(), inner.getType().getElementType()))
      return inner.getInput();
  auto in = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!in || (!in.isSplat() && !foldable(getType())))
    return {};
  Type from = in.getElementType(), to = getType().getElementType();
  auto convert = [&](Attribute a) -> Attribute {
    // Go through double or int64; exact for every integer and float that
    // shape computations produce.
    if (auto f = dyn_cast<FloatAttr>(a)) {
      double v = f.getValueAsDouble();
      if (auto ft = dyn_cast<FloatType>(to))
        return FloatAttr::get(ft, v);
      auto it = cast<IntegerType>(to);
      if (it.getWidth() == 1)
        return IntegerAttr::get(it, v != 0.0);
      // NaN, infinities and values out of the type's range have no defined
      // result: leave them to the runtime.
      APSInt r(it.getWidth(), it.isUnsigned());
      bool exact;
      if (f.getValue().convertToInteger(r, APFloat::rmTowardZero, &exact) &
          APFloat::opInvalidOp)
        return {};
      return IntegerAttr::get(it, r);
    }
    auto i = cast<IntegerAttr>(a);
    bool u = cast<IntegerType>(from).isUnsigned() ||
             cast<IntegerType>(from).getWidth() == 1;
    APInt v = i.getValue();
    if (auto ft = dyn_cast<FloatType>(to))
      return FloatAttr::get(ft, u ? double(v.getZExtValue())
                                  : double(v.getSExtValue()));
    auto it = cast<IntegerType>(to);
    if (it.getWidth() == 1)
      return IntegerAttr::get(it, !v.isZero());
    return IntegerAttr::get(it, u ? v.zextOrTrunc(it.getWidth())
                                  : v.sextOrTrunc(it.getWidth()));
  };
  SmallVector<Attribute> out;
  for (Attribute a : in.isSplat() ? SmallVector<Attribute>{in.getSplatValue<Attribute>()}
                                  : SmallVector<Attribute>(in.getValues<Attribute>())) {
    Attribute c = convert(a);
    if (!c)
      return {};
    out.push_back(c);
  }
  if (in.isSplat())
    return DenseElementsAttr::get(getType(), out[0]);
  return DenseElementsAttr::get(getType(), out);
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

/// Folds a binary op with separate float and integer rules; the integer rule
/// receives whether the type is unsigned and may refuse (division by zero).
template <typename FloatFn, typename IntFn>
static OpFoldResult foldBinaryNum(ArrayRef<Attribute> operands, Type type,
                                  FloatFn ffn, IntFn ifn) {
  if (!operands[0] || !operands[1] || !foldable(type, operands))
    return {};
  if (isa<FloatType>(getElementTypeOrSelf(type)))
    return constFoldBinaryOp<FloatAttr, APFloat, void>(
        operands, [&](const APFloat &a, const APFloat &b) {
          return toSemantics(ffn(toDouble(a), toDouble(b)), a);
        });
  bool u = isUnsigned(type);
  return constFoldBinaryOpConditional<IntegerAttr, APInt, void>(
      operands, [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return ifn(a, b, u);
      });
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (isSplat(adaptor.getRhs(), 0))
    return getLhs();
  if (isSplat(adaptor.getLhs(), 0))
    return getRhs();
  return foldBinaryNum(
      adaptor.getOperands(), getType(), [](double a, double b) { return a + b; },
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a + b;
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isSplat(adaptor.getRhs(), 0))
    return getLhs();
  return foldBinaryNum(
      adaptor.getOperands(), getType(), [](double a, double b) { return a - b; },
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a - b;
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplat(adaptor.getRhs(), 1))
    return getLhs();
  if (isSplat(adaptor.getLhs(), 1))
    return getRhs();
  return foldBinaryNum(
      adaptor.getOperands(), getType(), [](double a, double b) { return a * b; },
      [](const APInt &a, const APInt &b, bool) -> std::optional<APInt> {
        return a * b;
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplat(adaptor.getRhs(), 1))
    return getLhs();
  return foldBinaryNum(
      adaptor.getOperands(), getType(), [](double a, double b) { return a / b; },
      [](const APInt &a, const APInt &b, bool u) -> std::optional<APInt> {
        if (b.isZero())
          return std::nullopt;
        return u ? a.udiv(b) : a.sdiv(b);
      });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (isSplat(adaptor.getRhs(), 1))
    return getLhs();
  return foldBinaryNum(
      adaptor.getOperands(), getType(),
      [](double a, double b) { return std::pow(a, b); },
      [](const APInt &a, const APInt &b, bool u) -> std::optional<APInt> {
        if (!u && b.isNegative())
          return std::nullopt;
        // Square-and-multiply over every bit of the exponent: wraps exactly
        // like repeated multiplication, however large the exponent.
        APInt r(a.getBitWidth(), 1), base = a;
        for (unsigned i = 0, e = b.getActiveBits(); i < e; ++i) {
          if (b[i])
            r *= base;
          base *= base;
        }
        return r;
      });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBinaryNum(
      adaptor.getOperands(), getType(),
      [](double a, double b) { return std::isnan(a) || a > b ? a : b; },
      [](const APInt &a, const APInt &b, bool u) -> std::optional<APInt> {
        return (u ? a.ugt(b) : a.sgt(b)) ? a : b;
      });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBinaryNum(
      adaptor.getOperands(), getType(),
      [](double a, double b) { return std::isnan(a) || a < b ? a : b; },
      [](const APInt &a, const APInt &b, bool u) -> std::optional<APInt> {
        return (u ? a.ult(b) : a.slt(b)) ? a : b;
      });
}

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return constFoldBinaryOp<IntegerAttr, APInt, void>(
      adaptor.getOperands(), [](const APInt &a, const APInt &b) { return a & b; });
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return constFoldBinaryOp<IntegerAttr, APInt, void>(
      adaptor.getOperands(), [](const APInt &a, const APInt &b) { return a | b; });
}

OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  return constFoldBinaryOp<IntegerAttr, APInt, void>(
      adaptor.getOperands(), [](const APInt &a, const APInt &b) { return a ^ b; });
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  if (!adaptor.getLhs() || !adaptor.getRhs() ||
      !foldable(getType(), adaptor.getOperands()))
    return {};
  CmpPredicate p = getPredicate();
  auto decide = [p](int c, bool unordered) {
    if (unordered)
      return p == CmpPredicate::ne;
    switch (p) {
    case CmpPredicate::eq: return c == 0;
    case CmpPredicate::ne: return c != 0;
    case CmpPredicate::lt: return c < 0;
    case CmpPredicate::le: return c <= 0;
    case CmpPredicate::gt: return c > 0;
    case CmpPredicate::ge: return c >= 0;
    }
    return false;
  };
  Type resultType = getType();
  if (isa<FloatType>(getElementTypeOrSelf(getLhs().getType())))
    return constFoldBinaryOp<FloatAttr, APFloat, void, IntegerAttr>(
        adaptor.getOperands(), resultType,
        [&](const APFloat &a, const APFloat &b) {
          APFloat::cmpResult r = a.compare(b);
          int c = r == APFloat::cmpLessThan ? -1
                  : r == APFloat::cmpGreaterThan ? 1 : 0;
          return APInt(1, decide(c, r == APFloat::cmpUnordered));
        });
  bool u = isUnsigned(getLhs().getType());
  return constFoldBinaryOp<IntegerAttr, APInt, void, IntegerAttr>(
      adaptor.getOperands(), resultType, [&](const APInt &a, const APInt &b) {
        int c = a == b ? 0 : (u ? (a.ult(b) ? -1 : 1) : (a.slt(b) ? -1 : 1));
        return APInt(1, decide(c, false));
      });
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  if (getOnTrue() == getOnFalse())
    return getOnTrue();
  auto cond = dyn_cast_if_present<DenseElementsAttr>(adaptor.getCond());
  if (!cond)
    return {};
  if (cond.isSplat())
    return cond.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
  auto t = dyn_cast_if_present<DenseElementsAttr>(adaptor.getOnTrue());
  auto f = dyn_cast_if_present<DenseElementsAttr>(adaptor.getOnFalse());
  if (!t || !f || !foldable(getType()))
    return {};
  SmallVector<Attribute> out;
  auto tv = t.getValues<Attribute>(), fv = f.getValues<Attribute>();
  for (auto [i, c] : llvm::enumerate(cond.getValues<bool>()))
    out.push_back(c ? tv[i] : fv[i]);
  return DenseElementsAttr::get(getType(), out);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// Row-major strides of `shape`.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Builds a constant of `type` whose element at each result index is the
/// input element at `sourceIndex(resultMultiIndex)`.
template <typename Fn>
static Attribute gatherConstant(DenseElementsAttr in, RankedTensorType type,
                                Fn sourceIndex) {
  if (in.isSplat())
    return DenseElementsAttr::get(type, in.getSplatValue<Attribute>());
  if (!foldable(type))
    return {};
  auto values = in.getValues<Attribute>();
  SmallVector<Attribute> out;
  int64_t n = type.getNumElements();
  SmallVector<int64_t> idx(type.getRank(), 0);
  out.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = sourceIndex(ArrayRef<int64_t>(idx));
    if (src < 0)
      return {};
    out.push_back(values[src]);
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      if (++idx[d] < type.getDimSize(d))
        break;
      idx[d] = 0;
    }
  }
  return DenseElementsAttr::get(type, out);
}

OpFoldResult BroadcastInDimOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto in = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!in)
    return {};
  // Repeating a non-splat constant into a large one only costs: the table
  // is emitted and compiled into every artifact and read from memory at run
  // time, where the broadcast itself fuses into its consumers for free (the
  // max_pool gradient's per-window positions, [N, C, O...] from an [O...]
  // plane, were 27.8 MB of googlenet's object code).
  if (!in.isSplat() && getType().getNumElements() > kBroadcastFoldLimit)
    return {};
  auto inType = getInput().getType();
  SmallVector<int64_t> inStrides = stridesOf(inType.getShape());
  ArrayRef<int64_t> dims = getDims();
  return gatherConstant(in, getType(), [&](ArrayRef<int64_t> idx) {
    int64_t src = 0;
    for (auto [i, d] : llvm::enumerate(dims))
      if (inType.getDimSize(i) != 1)
        src += idx[d] * inStrides[i];
    return src;
  });
}

namespace {
/// broadcast_in_dim(broadcast_in_dim(x)) -> broadcast_in_dim(x).
struct ComposeBroadcasts : OpRewritePattern<BroadcastInDimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastInDimOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<BroadcastInDimOp>();
    if (!inner)
      return failure();
    SmallVector<int64_t> dims;
    for (int64_t d : inner.getDims())
      dims.push_back(op.getDims()[d]);
    rewriter.replaceOpWithNewOp<BroadcastInDimOp>(op, op.getType(),
                                                  inner.getInput(), dims);
    return success();
  }
};
} // namespace

void BroadcastInDimOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                   MLIRContext *context) {
  results.add<ComposeBroadcasts>(context);
}

namespace {
/// matmul(x [B..., M, K], broadcast_in_dim(w [K, N]) over the batch)
///   -> reshape(matmul(reshape(x, [B... * M, K]), w), [B..., M, N]):
/// one matrix product instead of B small ones, no broadcast copy of the
/// weight, and (through autodiff) one product for its gradient instead of B
/// products summed. The shape of every dense layer that ONNX writes as
/// MatMul of a [batch, tokens, d] activation with a 2-D weight.
struct MatmulOfBroadcastWeight : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    auto broadcast = op.getRhs().getDefiningOp<BroadcastInDimOp>();
    auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
    int64_t rank = lhsType.getRank();
    if (!broadcast || rank < 3)
      return failure();
    auto wType = cast<RankedTensorType>(broadcast.getInput().getType());
    auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
    if (wType.getRank() != 2 || broadcast.getDims() != ArrayRef<int64_t>{rank - 2, rank - 1} ||
        wType.getShape() != rhsType.getShape().take_back(2))
      return failure();
    int64_t rows = lhsType.getNumElements() / lhsType.getDimSize(rank - 1);
    Type et = lhsType.getElementType();
    Location loc = op.getLoc();
    Value flat = ReshapeOp::create(
        rewriter, loc, RankedTensorType::get({rows, lhsType.getDimSize(rank - 1)}, et), op.getLhs());
    Value product = MatmulOp::create(rewriter, loc, flat, broadcast.getInput());
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), product);
    return success();
  }
};
} // namespace

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<MatmulOfBroadcastWeight>(context);
}

namespace {
/// transpose(matmul(a, b)) over the last two dimensions
///   -> matmul(transpose(b), transpose(a)):
/// the product computed in the layout its readers want, the transposes left
/// to the product's operands (where a library call takes them as flags and
/// transpose(transpose(x)) folds away). The shape autodiff gives a weight
/// read as `x @ w.T`: its gradient `(x.T @ dy).T` becomes `dy.T @ x`, and
/// the optimizer reads it contiguously. The same sums of the same products.
struct TransposeOfMatmul : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto product = op.getInput().getDefiningOp<MatmulOp>();
    ArrayRef<int64_t> perm = op.getPerm();
    int64_t rank = int64_t(perm.size());
    if (!product || !product->hasOneUse() || rank < 2 || perm[rank - 2] != rank - 1 ||
        perm[rank - 1] != rank - 2)
      return failure();
    for (int64_t i = 0; i < rank - 2; ++i)
      if (perm[i] != i)
        return failure();
    Location loc = op.getLoc();
    Value b = TransposeOp::create(rewriter, loc, product.getRhs(), perm);
    Value a = TransposeOp::create(rewriter, loc, product.getLhs(), perm);
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), b, a);
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<TransposeOfMatmul>(context);
}

namespace {
/// concat(a, concat(b, c)) -> concat(a, b, c) along one axis: the inner
/// concatenation would be a buffer of its own, copied once more into the
/// outer one (the gradient of a three-way Split, a GPT's q, k and v, is
/// built pairwise).
struct FlattenConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op, PatternRewriter &rewriter) const override {
    SmallVector<Value> inputs;
    bool nested = false;
    for (Value in : op.getInputs()) {
      auto inner = in.getDefiningOp<ConcatOp>();
      if (inner && inner.getAxis() == op.getAxis()) {
        llvm::append_range(inputs, inner.getInputs());
        nested = true;
      } else {
        inputs.push_back(in);
      }
    }
    if (!nested)
      return failure();
    rewriter.replaceOpWithNewOp<ConcatOp>(op, op.getType(), inputs, op.getAxisAttr());
    return success();
  }
};
} // namespace

void ConcatOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<FlattenConcat>(context);
}

namespace {
/// The splat float value of V if it is a constant splat.
std::optional<APFloat> splatFloat(Value v) {
  DenseElementsAttr d;
  if (!matchPattern(v, m_Constant(&d)) || !d.isSplat() || !isa<FloatType>(d.getElementType()))
    return std::nullopt;
  return d.getSplatValue<APFloat>();
}

/// x / c -> x * (1 / c) for a float constant c whose inverse is exact (a
/// power of two): the same result, and a multiplication is several times
/// cheaper than a division. Other constants stay (their inverse rounds).
struct DivByExactInverse : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp op, PatternRewriter &rewriter) const override {
    std::optional<APFloat> c = splatFloat(op.getRhs());
    APFloat inverse(0.0);
    if (!c || !c->getExactInverse(&inverse))
      return failure();
    auto type = cast<RankedTensorType>(op.getRhs().getType());
    Value k = ConstantOp::create(rewriter, op.getLoc(), type,
                                 DenseElementsAttr::get(type, FloatAttr::get(type.getElementType(), inverse)));
    rewriter.replaceOpWithNewOp<MulOp>(op, op.getLhs(), k);
    return success();
  }
};

/// Whether V is a float splat constant equal to VALUE rounded to V's
/// element type.
bool isSplatOfRounded(Value v, double value) {
  std::optional<APFloat> c = splatFloat(v);
  if (!c)
    return false;
  APFloat want(value);
  bool lost = false;
  want.convert(c->getSemantics(), APFloat::rmNearestTiesToEven, &lost);
  return c->bitwiseIsEqual(want);
}

/// The other operand of a commutative binary OP when one of its operands
/// is a splat of VALUE (isSplatOfRounded), else null.
template <typename OpTy>
Value otherThanSplat(OpTy op, double value) {
  if (!op)
    return Value();
  if (isSplatOfRounded(op.getRhs(), value))
    return op.getLhs();
  if (isSplatOfRounded(op.getLhs(), value))
    return op.getRhs();
  return Value();
}

/// 0.5 x (1 + erf(x / sqrt 2)), written as elementwise ops, -> gelu(x). The
/// form PyTorch 1.13 exports F.gelu and nn.GELU as, and Hugging Face's
/// `x * 0.5 * (1 + erf(x / sqrt(2)))`: the three factors in any order and
/// grouping, the inner scaling as a division by sqrt 2 or a multiplication
/// by 1 / sqrt 2, each intermediate read by nothing else. gelu computes the
/// scaling as x * (1 / sqrt 2), as PyTorch's own kernel does, where the
/// exported division rounds differently in the last place of erf's
/// argument. Why: the division costs a vdivps per vector in the forward and
/// in the backward, and makes x / sqrt 2 too expensive to recompute, so the
/// forward writes it for the backward to read (a tensor the size of the MLP's
/// hidden activations, written and read once per step); gpt4's bf16 step
/// took 3.5% longer with it at 1 thread, 2% at 2 (Xeon with AMX).
struct GeluFromErf : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(getElementTypeOrSelf(op.getType())))
      return failure();
    // The three factors: one operand of OP is itself a product read only here.
    for (auto [grouped, single] : {std::pair(op.getLhs(), op.getRhs()),
                                   std::pair(op.getRhs(), op.getLhs())}) {
      auto inner = grouped.getDefiningOp<MulOp>();
      if (!inner || !grouped.hasOneUse())
        continue;
      Value factors[] = {inner.getLhs(), inner.getRhs(), single};
      if (Value x = geluInput(factors)) {
        rewriter.replaceOpWithNewOp<GeluOp>(op, op.getType(), x, /*approximate=*/false);
        return success();
      }
    }
    return failure();
  }

private:
  /// X when FACTORS are 0.5, x and 1 + erf(x / sqrt 2) in some order.
  static Value geluInput(ArrayRef<Value> factors) {
    for (unsigned h = 0; h < 3; ++h) {
      if (!isSplatOfRounded(factors[h], 0.5))
        continue;
      for (unsigned s = 0; s < 3; ++s) {
        if (s == h)
          continue;
        Value x = factors[3 - h - s];
        Value sum = factors[s];
        if (!sum.hasOneUse())
          continue;
        Value erfValue = otherThanSplat(sum.getDefiningOp<AddOp>(), 1.0);
        auto erf = erfValue ? erfValue.getDefiningOp<ErfOp>() : ErfOp();
        if (!erf || !erfValue.hasOneUse() || !erf.getInput().hasOneUse())
          continue;
        Value scaled = erf.getInput();
        Value in = otherThanSplat(scaled.getDefiningOp<MulOp>(), M_SQRT1_2);
        if (auto div = scaled.getDefiningOp<DivOp>(); div && isSplatOfRounded(div.getRhs(), M_SQRT2))
          in = div.getLhs();
        if (in == x)
          return x;
      }
    }
    return Value();
  }
};

/// pow(x, 2) -> x * x for floats (correctly rounded either way).
struct PowOfTwo : OpRewritePattern<PowOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PowOp op, PatternRewriter &rewriter) const override {
    std::optional<APFloat> c = splatFloat(op.getRhs());
    if (!c || !c->isExactlyValue(2.0))
      return failure();
    rewriter.replaceOpWithNewOp<MulOp>(op, op.getLhs(), op.getLhs());
    return success();
  }
};
} // namespace

namespace {
/// conv(x, w) whose filter has taps that only ever meet padding -> conv(x,
/// slice(w)) over the taps that meet the input, with the padding reduced to
/// match (the same output shape and the same sums: the dropped taps add
/// products with padding zeros). A 3x3 convolution on a 1x1 map (the last
/// stage of a CNN on small images: resnet18's layer4 at 32x32) is a 1x1
/// convolution, a stride-2 3x3 on a 2x2 map a 2x2 one. Through autodiff the
/// dropped taps' filter gradient is a zero pad of the small one instead of
/// a backward-weights convolution over them; the input gradient is the
/// small convolution's.
struct DropPaddingOnlyTaps : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp op, PatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(op.getInput().getType());
    auto w = cast<RankedTensorType>(op.getFilter().getType());
    auto out = cast<RankedTensorType>(op.getType());
    if (!in.hasStaticShape() || !w.hasStaticShape() || !out.hasStaticShape())
      return failure();
    int64_t spatial = in.getRank() - 2;
    ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
    SmallVector<int64_t> low(op.getPadLow()), high(op.getPadHigh());
    SmallVector<int64_t> start(w.getRank(), 0), shape(w.getShape());
    bool smaller = false;
    for (int64_t d = 0; d < spatial; ++d) {
      int64_t size = in.getDimSize(d + 2), taps = w.getDimSize(d + 2), outs = out.getDimSize(d + 2);
      int64_t s = strides[d], dil = dilations[d];
      // Tap k meets the input when some output o reads o*s + k*dil - low in
      // [0, size): the used taps are a contiguous range [first, last].
      int64_t first = taps, last = -1;
      for (int64_t k = 0; k < taps; ++k)
        for (int64_t o = 0; o < outs; ++o) {
          int64_t i = o * s + k * dil - low[d];
          if (i >= 0 && i < size) {
            first = std::min(first, k);
            last = std::max(last, k);
            break;
          }
        }
      if (last < first)
        return failure(); // every output of the dimension is padding alone
      int64_t newLow = low[d] - first * dil, newHigh = high[d] - (taps - 1 - last) * dil;
      if (newLow < 0 || newHigh < 0)
        return failure();
      if (first == 0 && last == taps - 1)
        continue;
      smaller = true;
      start[d + 2] = first;
      shape[d + 2] = last - first + 1;
      low[d] = newLow;
      high[d] = newHigh;
    }
    if (!smaller)
      return failure();
    Location loc = op.getLoc();
    SmallVector<int64_t> ones(w.getRank(), 1);
    Value filter = SliceOp::create(rewriter, loc, RankedTensorType::get(shape, w.getElementType()),
                                   op.getFilter(), rewriter.getDenseI64ArrayAttr(start),
                                   rewriter.getDenseI64ArrayAttr(ones));
    auto conv = ConvOp::create(rewriter, loc, op.getInput(), filter, op.getStridesAttr(),
                               op.getDilationsAttr(), rewriter.getDenseI64ArrayAttr(low),
                               rewriter.getDenseI64ArrayAttr(high), op.getGroupAttr());
    // The output extent (size + low + high - dil*(taps-1) - 1) / s + 1 is
    // unchanged: what the padding loses, the filter's extent loses too.
    conv->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, conv.getResult());
    return success();
  }
};
} // namespace

void ConvOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<DropPaddingOnlyTaps>(context);
}

namespace {
/// A constant zero pad with one use, or null.
PadOp zeroPad(Value v) {
  auto pad = v.getDefiningOp<PadOp>();
  if (!pad || !v.hasOneUse() || pad.getMode() != PadMode::constant ||
      pad.getValue().convertToDouble() != 0.0)
    return nullptr;
  return pad;
}

/// pad(a) + pad(b), zero pads: pad(a + b) when they pad alike, and
/// pad(concat(a, b)) when they differ along one axis only, where a's
/// values end right where b's begin. The gradient of a split (of slices
/// that tile a tensor: attention's q, k, v; an LSTM's gates) is the sum of
/// one such pad per part: a concatenation, one pass, instead of a zero-
/// filled copy of the whole tensor per part and their sums. The values are
/// the sum's (x + 0 = x), except that a -0 part stays -0 in the
/// concatenation where the sum made it +0.
struct AddOfZeroPads : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    PadOp a = zeroPad(op.getLhs()), b = zeroPad(op.getRhs());
    if (!a || !b || a.getType() != b.getType())
      return failure();
    int64_t rank = cast<RankedTensorType>(a.getType()).getRank();
    SmallVector<int64_t> differ;
    for (int64_t d = 0; d < rank; ++d)
      if (a.getLow()[d] != b.getLow()[d] || a.getHigh()[d] != b.getHigh()[d])
        differ.push_back(d);
    Location loc = op.getLoc();
    auto repad = [&](Value v, ArrayRef<int64_t> low, ArrayRef<int64_t> high) {
      if (llvm::all_of(low, [](int64_t x) { return x == 0; }) &&
          llvm::all_of(high, [](int64_t x) { return x == 0; }))
        return rewriter.replaceOp(op, v);
      rewriter.replaceOpWithNewOp<PadOp>(op, op.getType(), v, rewriter.getDenseI64ArrayAttr(low),
                                         rewriter.getDenseI64ArrayAttr(high), a.getModeAttr(),
                                         a.getValueAttr());
    };
    if (differ.empty()) {
      repad(AddOp::create(rewriter, loc, a.getInput(), b.getInput()), a.getLow(), a.getHigh());
      return success();
    }
    if (differ.size() != 1)
      return failure();
    int64_t d = differ.front();
    if (b.getLow()[d] < a.getLow()[d])
      std::swap(a, b);
    if (a.getLow()[d] + cast<RankedTensorType>(a.getInput().getType()).getDimSize(d) !=
        b.getLow()[d])
      return failure(); // a gap or an overlap between the two
    Value parts[] = {a.getInput(), b.getInput()};
    Value joined = ConcatOp::create(rewriter, loc, ValueRange(parts), d);
    SmallVector<int64_t> low(a.getLow()), high(b.getHigh());
    repad(joined, low, high);
    return success();
  }
};
} // namespace

void AddOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<AddOfZeroPads>(context);
}

void MulOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<GeluFromErf>(context);
}

void DivOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<DivByExactInverse>(context);
}

void PowOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<PowOfTwo>(context);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  if (auto in = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return in.reshape(getType());
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  // transpose(transpose(x, q), p) = transpose(x, q o p): result dimension i
  // is x's dimension q[p[i]].
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t p : getPerm())
      composed.push_back(inner.getPerm()[p]);
    getInputMutable().assign(inner.getInput());
    setPerm(composed);
    if (llvm::equal(composed, llvm::seq<int64_t>(0, int64_t(composed.size()))))
      return getInput();
    return getResult();
  }
  ArrayRef<int64_t> perm = getPerm();
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= int64_t(i) == p;
  if (identity)
    return getInput();
  auto in = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!in)
    return {};
  SmallVector<int64_t> inStrides = stridesOf(getInput().getType().getShape());
  return gatherConstant(in, getType(), [&](ArrayRef<int64_t> idx) {
    int64_t src = 0;
    for (auto [i, p] : llvm::enumerate(perm))
      src += idx[i] * inStrides[p];
    return src;
  });
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1)
    return getInputs()[0];
  if (!foldable(getType()))
    return {};
  SmallVector<DenseElementsAttr> ins;
  for (Attribute a : adaptor.getInputs()) {
    auto d = dyn_cast_if_present<DenseElementsAttr>(a);
    if (!d)
      return {};
    ins.push_back(d);
  }
  int64_t axis = getAxis();
  SmallVector<Attribute> out;
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (DenseElementsAttr in : ins) {
      auto t = cast<RankedTensorType>(in.getType());
      int64_t inner = t.getNumElements() / std::max<int64_t>(outer, 1);
      auto values = in.getValues<Attribute>();
      for (int64_t i = 0; i < inner; ++i)
        out.push_back(in.isSplat() ? in.getSplatValue<Attribute>()
                                   : values[o * inner + i]);
    }
  return DenseElementsAttr::get(getType(), out);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() &&
      llvm::all_of(getStart(), [](int64_t s) { return s == 0; }) &&
      llvm::all_of(getStride(), [](int64_t s) { return s == 1; }))
    return getInput();
  auto in = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!in)
    return {};
  SmallVector<int64_t> inStrides = stridesOf(getInput().getType().getShape());
  ArrayRef<int64_t> start = getStart(), stride = getStride();
  return gatherConstant(in, getType(), [&](ArrayRef<int64_t> idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += (start[d] + idx[d] * stride[d]) * inStrides[d];
    return src;
  });
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto in = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  auto indices = dyn_cast_if_present<DenseElementsAttr>(adaptor.getIndices());
  if (!in || !indices)
    return {};
  auto inType = getInput().getType();
  int64_t axis = getAxis(), axisSize = inType.getDimSize(axis);
  int64_t idxRank = getIndices().getType().getRank();
  SmallVector<int64_t> idxValues;
  for (const APInt &v : indices.getValues<APInt>()) {
    // Out of range: leave it for the runtime to report, even when the input
    // is a splat and every index would read the same value.
    if (v.getSExtValue() < -axisSize || v.getSExtValue() >= axisSize)
      return {};
    idxValues.push_back(v.getSExtValue());
  }
  SmallVector<int64_t> inStrides = stridesOf(inType.getShape());
  SmallVector<int64_t> idxStrides =
      stridesOf(getIndices().getType().getShape());
  return gatherConstant(in, getType(), [&](ArrayRef<int64_t> idx) -> int64_t {
    int64_t flat = 0;
    for (int64_t k = 0; k < idxRank; ++k)
      flat += idx[axis + k] * idxStrides[k];
    int64_t i = idxValues[flat];
    if (i < 0)
      i += axisSize;
    int64_t src = i * inStrides[axis];
    for (int64_t d = 0; d < axis; ++d)
      src += idx[d] * inStrides[d];
    for (int64_t d = axis + 1; d < inType.getRank(); ++d)
      src += idx[d - 1 + idxRank] * inStrides[d];
    return src;
  });
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

enum class ReduceKind { Sum, Mean, Max, Min, Prod };

/// Folds a reduction: identity over no axes, else computes constant inputs
/// in double (floats) or int64 (integers).
template <typename Op>
static OpFoldResult foldReduce(Op op, Attribute input, ReduceKind kind) {
  if (op.getAxes().empty() && op.getInput().getType() == op.getType())
    return op.getInput();
  auto in = dyn_cast_if_present<DenseElementsAttr>(input);
  if (!in || !foldable(op.getInput().getType()))
    return {};
  auto inType = op.getInput().getType();
  auto outType = op.getType();
  bool isFloat = isa<FloatType>(inType.getElementType());
  if (!isFloat && isUnsigned(inType))
    return {};
  int64_t n = inType.getNumElements(), outN = outType.getNumElements();
  double init = kind == ReduceKind::Prod  ? 1.0
                : kind == ReduceKind::Max ? -INFINITY
                : kind == ReduceKind::Min ? INFINITY
                                          : 0.0;
  SmallVector<double> acc(outN, init);
  SmallVector<int64_t> count(outN, 0);
  SmallVector<double> values;
  if (isFloat)
    for (const APFloat &v : in.getValues<APFloat>())
      values.push_back(toDouble(v));
  else
    for (const APInt &v : in.getValues<APInt>())
      values.push_back(double(v.getSExtValue()));
  SmallVector<int64_t> keptShape =
      reducedShape(inType.getShape(), op.getAxes(), /*keepDims=*/true);
  SmallVector<int64_t> outStrides = stridesOf(keptShape);
  SmallVector<int64_t> idx(inType.getRank(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (int64_t d = 0; d < inType.getRank(); ++d)
      if (keptShape[d] != 1 || inType.getDimSize(d) == 1)
        o += idx[d] * outStrides[d];
    double v = values[in.isSplat() ? 0 : i];
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean: acc[o] += v; break;
    case ReduceKind::Prod: acc[o] *= v; break;
    // NaN propagates, as in the folders of tcc.max and tcc.min.
    case ReduceKind::Max:
      acc[o] = std::isnan(acc[o]) || acc[o] >= v ? acc[o] : v;
      break;
    case ReduceKind::Min:
      acc[o] = std::isnan(acc[o]) || acc[o] <= v ? acc[o] : v;
      break;
    }
    ++count[o];
    for (int64_t d = inType.getRank() - 1; d >= 0; --d) {
      if (++idx[d] < inType.getDimSize(d))
        break;
      idx[d] = 0;
    }
  }
  SmallVector<Attribute> out;
  Type et = outType.getElementType();
  for (int64_t i = 0; i < outN; ++i) {
    // An integer max, min or mean over no elements has no value to fold to.
    if (!isFloat && count[i] == 0 && kind != ReduceKind::Sum &&
        kind != ReduceKind::Prod)
      return {};
    double v = kind == ReduceKind::Mean ? acc[i] / double(count[i]) : acc[i];
    if (isFloat)
      out.push_back(FloatAttr::get(et, v));
    else
      out.push_back(IntegerAttr::get(et, int64_t(v)));
  }
  return DenseElementsAttr::get(outType, out);
}

OpFoldResult ReduceSumOp::fold(FoldAdaptor a) {
  return foldReduce(*this, a.getInput(), ReduceKind::Sum);
}
OpFoldResult ReduceMeanOp::fold(FoldAdaptor a) {
  return foldReduce(*this, a.getInput(), ReduceKind::Mean);
}
OpFoldResult ReduceMaxOp::fold(FoldAdaptor a) {
  return foldReduce(*this, a.getInput(), ReduceKind::Max);
}
OpFoldResult ReduceMinOp::fold(FoldAdaptor a) {
  return foldReduce(*this, a.getInput(), ReduceKind::Min);
}
OpFoldResult ReduceProdOp::fold(FoldAdaptor a) {
  return foldReduce(*this, a.getInput(), ReduceKind::Prod);
}
