//===- Elementwise.cpp - elementwise tcc ops to linalg.generic ------------===//
//
// Every elementwise tcc op becomes one linalg.generic with identity maps whose
// body is the op's scalar semantics in arith / math (tcc has no implicit
// broadcasting, so there is nothing else to do). The scalar bodies carry the
// exact semantics stated in TccOps.td: NaN propagates through max / min /
// relu, compares are unordered except `ne`, round is half to even, and the
// numerically delicate activations (sigmoid, softplus, elu) never feed exp a
// large positive argument.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Patterns.h"

#include <cmath>

using namespace mlir;
using namespace tcc;
using namespace tcc::lowering;

namespace {

/// The scalar body of an elementwise op: `args` are the scalars of the
/// (converted) operands, `k` the kind of the last operand's element type.
template <typename OpTy>
Value scalarBody(OpTy op, OpBuilder &b, Location loc, ValueRange args,
                 const ElemKind &k);

Value fconst(OpBuilder &b, Location loc, const ElemKind &k, double v) {
  return scalarConst(b, loc, k.type, v);
}

#define TCC_BODY(OP)                                                           \
  template <>                                                                  \
  Value scalarBody<OP>([[maybe_unused]] OP op, OpBuilder & b, Location loc,    \
                       ValueRange args, [[maybe_unused]] const ElemKind &k)

// Unary float ops that map one-to-one onto the math / arith dialects.
#define TCC_MATH_BODY(OP, MATH)                                                \
  TCC_BODY(OP) { return MATH::create(b, loc, args[0]); }
TCC_MATH_BODY(ExpOp, math::ExpOp)
TCC_MATH_BODY(LogOp, math::LogOp)
TCC_MATH_BODY(SqrtOp, math::SqrtOp)
TCC_MATH_BODY(TanhOp, math::TanhOp)
TCC_MATH_BODY(ErfOp, math::ErfOp)
TCC_MATH_BODY(SinOp, math::SinOp)
TCC_MATH_BODY(CosOp, math::CosOp)
TCC_MATH_BODY(TanOp, math::TanOp)
TCC_MATH_BODY(AsinOp, math::AsinOp)
TCC_MATH_BODY(AcosOp, math::AcosOp)
TCC_MATH_BODY(AtanOp, math::AtanOp)
TCC_MATH_BODY(SinhOp, math::SinhOp)
TCC_MATH_BODY(CoshOp, math::CoshOp)
TCC_MATH_BODY(AsinhOp, math::AsinhOp)
TCC_MATH_BODY(AcoshOp, math::AcoshOp)
TCC_MATH_BODY(AtanhOp, math::AtanhOp)
TCC_MATH_BODY(FloorOp, math::FloorOp)
TCC_MATH_BODY(CeilOp, math::CeilOp)
// Half to even, as the op says (math.round would round half away from 0).
TCC_MATH_BODY(RoundOp, math::RoundEvenOp)
#undef TCC_MATH_BODY

TCC_BODY(NegOp) {
  if (k.isFloat)
    return arith::NegFOp::create(b, loc, args[0]);
  return arith::SubIOp::create(b, loc, intConst(b, loc, k.type, 0), args[0]);
}

TCC_BODY(AbsOp) {
  if (k.isFloat)
    return math::AbsFOp::create(b, loc, args[0]);
  if (k.isUnsigned)
    return args[0];
  // max(x, -x) rather than math.absi, which math-to-llvm does not lower;
  // |INT_MIN| wraps to INT_MIN either way.
  Value neg =
      arith::SubIOp::create(b, loc, intConst(b, loc, k.type, 0), args[0]);
  return arith::MaxSIOp::create(b, loc, args[0], neg);
}

TCC_BODY(SignOp) {
  Value x = args[0];
  if (k.isFloat) {
    // sign(NaN) = NaN; both zeros give +0, as tcc.sign's folder does.
    Value zero = fconst(b, loc, k, 0.0);
    Value pos =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    Value neg =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
    Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
    Value rest = arith::SelectOp::create(b, loc, nan, x, zero);
    Value negOrRest =
        arith::SelectOp::create(b, loc, neg, fconst(b, loc, k, -1.0), rest);
    return arith::SelectOp::create(b, loc, pos, fconst(b, loc, k, 1.0),
                                   negOrRest);
  }
  Value zero = intConst(b, loc, k.type, 0);
  Value one = intConst(b, loc, k.type, 1);
  if (k.isBool)
    return x;
  if (k.isUnsigned) {
    Value nz = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero);
    return arith::SelectOp::create(b, loc, nz, one, zero);
  }
  Value pos = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
  Value negOrZero =
      arith::SelectOp::create(b, loc, neg, intConst(b, loc, k.type, -1), zero);
  return arith::SelectOp::create(b, loc, pos, one, negOrZero);
}

// 1 / sqrt(x), as the op says; math.rsqrt has no libm counterpart, and a
// later pass may still fuse the pair into a hardware rsqrt with refinement.
TCC_BODY(RsqrtOp) {
  Value one = fconst(b, loc, k, 1.0);
  return arith::DivFOp::create(b, loc, one, math::SqrtOp::create(b, loc, args[0]));
}

TCC_BODY(ReciprocalOp) {
  return arith::DivFOp::create(b, loc, fconst(b, loc, k, 1.0), args[0]);
}

TCC_BODY(SigmoidOp) {
  // With e = exp(-|x|) <= 1: sigmoid(x) = 1 / (1 + e) for x >= 0 and
  // e / (1 + e) for x < 0. Neither branch overflows, and the negative branch
  // keeps full relative precision for large negative x. NaN propagates.
  Value x = args[0];
  Value e = math::ExpOp::create(
      b, loc, arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, x)));
  Value one = fconst(b, loc, k, 1.0);
  Value den = arith::AddFOp::create(b, loc, one, e);
  Value pos = arith::DivFOp::create(b, loc, one, den);
  Value neg = arith::DivFOp::create(b, loc, e, den);
  Value isPos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                                      fconst(b, loc, k, 0.0));
  return arith::SelectOp::create(b, loc, isPos, pos, neg);
}

TCC_BODY(ReluOp) {
  if (k.isFloat) // maximumf propagates NaN: relu(NaN) = NaN.
    return arith::MaximumFOp::create(b, loc, args[0], fconst(b, loc, k, 0.0));
  if (k.isUnsigned)
    return args[0];
  return arith::MaxSIOp::create(b, loc, args[0], intConst(b, loc, k.type, 0));
}

TCC_BODY(SoftplusOp) {
  // max(x, 0) + log1p(exp(-|x|)): exp never sees a positive argument.
  Value x = args[0];
  Value relu = arith::MaximumFOp::create(b, loc, x, fconst(b, loc, k, 0.0));
  Value e = math::ExpOp::create(
      b, loc, arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, x)));
  return arith::AddFOp::create(b, loc, relu, math::Log1pOp::create(b, loc, e));
}

TCC_BODY(NotOp) {
  return arith::XOrIOp::create(b, loc, args[0], intConst(b, loc, k.type, 1));
}

TCC_BODY(GeluOp) {
  Value x = args[0];
  Value inner;
  if (op.getApproximate()) {
    // tanh(sqrt(2/pi) * (x + 0.044715 x^3))
    Value x3 =
        arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value poly = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, fconst(b, loc, k, 0.044715), x3));
    inner = math::TanhOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, fconst(b, loc, k, std::sqrt(2.0 / M_PI)),
                              poly));
  } else {
    inner = math::ErfOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, fconst(b, loc, k, M_SQRT1_2)));
  }
  Value onePlus = arith::AddFOp::create(b, loc, fconst(b, loc, k, 1.0), inner);
  Value half = arith::MulFOp::create(b, loc, fconst(b, loc, k, 0.5), x);
  return arith::MulFOp::create(b, loc, half, onePlus);
}

TCC_BODY(LeakyReluOp) {
  Value x = args[0];
  Value scaled = arith::MulFOp::create(
      b, loc, x, fconst(b, loc, k, op.getAlpha().convertToDouble()));
  Value nonNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                                       fconst(b, loc, k, 0.0));
  return arith::SelectOp::create(b, loc, nonNeg, x, scaled);
}

TCC_BODY(EluOp) {
  // alpha * expm1(min(x, 0)) for x <= 0: expm1 keeps precision near 0 and
  // min keeps exp's argument non-positive; NaN falls into this branch and
  // propagates through minimumf.
  Value x = args[0];
  Value zero = fconst(b, loc, k, 0.0);
  Value em1 =
      math::ExpM1Op::create(b, loc, arith::MinimumFOp::create(b, loc, x, zero));
  Value neg = arith::MulFOp::create(
      b, loc, em1, fconst(b, loc, k, op.getAlpha().convertToDouble()));
  Value pos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
  return arith::SelectOp::create(b, loc, pos, x, neg);
}

TCC_BODY(ClampOp) {
  Value x = args[0];
  std::optional<double> lo, hi;
  if (op.getMin())
    lo = op.getMin()->convertToDouble();
  if (op.getMax())
    hi = op.getMax()->convertToDouble();
  if (k.isFloat) {
    // maximumf / minimumf: a NaN input stays NaN.
    if (lo)
      x = arith::MaximumFOp::create(b, loc, x, fconst(b, loc, k, *lo));
    if (hi)
      x = arith::MinimumFOp::create(b, loc, x, fconst(b, loc, k, *hi));
    return x;
  }
  // Integer bounds: the smallest integer >= lo and the largest <= hi, within
  // the type's range (a bound outside the range clamps nothing).
  unsigned w = k.type.getIntOrFloatBitWidth();
  double tmin = k.isUnsigned ? 0.0 : -std::ldexp(1.0, w - 1);
  double tmax =
      k.isUnsigned ? std::ldexp(1.0, w) - 1 : std::ldexp(1.0, w - 1) - 1;
  auto bound = [&](double v) {
    if (v >= tmax)
      return k.isUnsigned ? APInt::getMaxValue(w) : APInt::getSignedMaxValue(w);
    if (v <= tmin)
      return k.isUnsigned ? APInt::getMinValue(w) : APInt::getSignedMinValue(w);
    if (k.isUnsigned)
      return APInt(w, uint64_t(v));
    return APInt(w, uint64_t(int64_t(v)), /*isSigned=*/true,
                 /*implicitTrunc=*/true);
  };
  if (lo && std::ceil(*lo) > tmin) {
    Value c = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(k.type, bound(std::ceil(*lo))));
    x = maxScalar(b, loc, k, x, c);
  }
  if (hi && std::floor(*hi) < tmax) {
    Value c = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(k.type, bound(std::floor(*hi))));
    x = minScalar(b, loc, k, x, c);
  }
  return x;
}

TCC_BODY(CastOp) {
  return castScalar(b, loc, args[0], k, elemKind(op.getType()));
}

TCC_BODY(AddOp) { return addScalar(b, loc, k, args[0], args[1]); }
TCC_BODY(MulOp) { return mulScalar(b, loc, k, args[0], args[1]); }
TCC_BODY(SubOp) {
  if (k.isFloat)
    return arith::SubFOp::create(b, loc, args[0], args[1]);
  return arith::SubIOp::create(b, loc, args[0], args[1]);
}
TCC_BODY(DivOp) { return divScalar(b, loc, k, args[0], args[1]); }
TCC_BODY(MaxOp) { return maxScalar(b, loc, k, args[0], args[1]); }
TCC_BODY(MinOp) { return minScalar(b, loc, k, args[0], args[1]); }
TCC_BODY(AndOp) { return arith::AndIOp::create(b, loc, args[0], args[1]); }
TCC_BODY(OrOp) { return arith::OrIOp::create(b, loc, args[0], args[1]); }
TCC_BODY(XorOp) { return arith::XOrIOp::create(b, loc, args[0], args[1]); }

/// x^e for integers by square-and-multiply over the bits of e: wraps exactly
/// like repeated multiplication (the folder's rule). A negative signed
/// exponent gives the real result truncated toward zero: 1 for x = 1, +-1
/// for x = -1, 0 otherwise (also for x = 0, where it would be infinite).
Value integerPow(OpBuilder &b, Location loc, const ElemKind &k, Value x,
                 Value e) {
  Type t = k.type;
  Value one = intConst(b, loc, t, 1);
  if (k.isBool) // x^e is x unless e is 0.
    return arith::SelectOp::create(b, loc, e, x, one);
  unsigned w = t.getIntOrFloatBitWidth();
  Value lower = indexConst(b, loc, 0);
  Value upper = indexConst(b, loc, w);
  Value step = indexConst(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, step, ValueRange{one, x, e},
      [&](OpBuilder &lb, Location l, Value, ValueRange it) {
        Value bit = arith::TruncIOp::create(lb, l, lb.getI1Type(), it[2]);
        Value r = arith::SelectOp::create(
            lb, l, bit, arith::MulIOp::create(lb, l, it[0], it[1]), it[0]);
        Value base = arith::MulIOp::create(lb, l, it[1], it[1]);
        Value rest =
            arith::ShRUIOp::create(lb, l, it[2], intConst(lb, l, t, 1));
        scf::YieldOp::create(lb, l, ValueRange{r, base, rest});
      });
  Value r = loop.getResult(0);
  if (k.isUnsigned)
    return r;
  Value zero = intConst(b, loc, t, 0);
  Value minusOne = intConst(b, loc, t, -1);
  Value odd = arith::TruncIOp::create(b, loc, b.getI1Type(), e);
  Value ofMinusOne = arith::SelectOp::create(b, loc, odd, minusOne, one);
  Value isOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, one);
  Value isMinusOne =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, minusOne);
  Value negResult = arith::SelectOp::create(
      b, loc, isOne, one,
      arith::SelectOp::create(b, loc, isMinusOne, ofMinusOne, zero));
  Value negExp =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, e, zero);
  return arith::SelectOp::create(b, loc, negExp, negResult, r);
}

TCC_BODY(PowOp) {
  if (k.isFloat)
    return math::PowFOp::create(b, loc, args[0], args[1]);
  return integerPow(b, loc, k, args[0], args[1]);
}

TCC_BODY(CompareOp) {
  Value x = args[0], y = args[1];
  if (k.isFloat) {
    // Ordered predicates are false on NaN; `ne` is unordered, so true.
    arith::CmpFPredicate p;
    switch (op.getPredicate()) {
    case CmpPredicate::eq:
      p = arith::CmpFPredicate::OEQ;
      break;
    case CmpPredicate::ne:
      p = arith::CmpFPredicate::UNE;
      break;
    case CmpPredicate::lt:
      p = arith::CmpFPredicate::OLT;
      break;
    case CmpPredicate::le:
      p = arith::CmpFPredicate::OLE;
      break;
    case CmpPredicate::gt:
      p = arith::CmpFPredicate::OGT;
      break;
    case CmpPredicate::ge:
      p = arith::CmpFPredicate::OGE;
      break;
    }
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  bool u = k.isUnsigned;
  arith::CmpIPredicate p;
  switch (op.getPredicate()) {
  case CmpPredicate::eq:
    p = arith::CmpIPredicate::eq;
    break;
  case CmpPredicate::ne:
    p = arith::CmpIPredicate::ne;
    break;
  case CmpPredicate::lt:
    p = u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
    break;
  case CmpPredicate::le:
    p = u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
    break;
  case CmpPredicate::gt:
    p = u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
    break;
  case CmpPredicate::ge:
    p = u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
    break;
  }
  return arith::CmpIOp::create(b, loc, p, x, y);
}

TCC_BODY(SelectOp) {
  return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
}

#undef TCC_BODY

/// One linalg.generic per elementwise op; the element kind comes from the
/// last operand (the value operand of select, the input of cast).
template <typename OpTy>
struct ElementwiseLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType =
        convertedTensorType(*this->getTypeConverter(), op.getType());
    ElemKind k = elemKind(op->getOperand(op->getNumOperands() - 1).getType());
    Value r =
        mapElementwise(rewriter, op.getLoc(), resultType, adaptor.getOperands(),
                       [&](OpBuilder &b, Location loc, ValueRange args) {
                         return scalarBody<OpTy>(op, b, loc, args, k);
                       });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// tcc.constant -> arith.constant; unsigned data is reinterpreted bit for bit
/// as signless.
struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = convertedTensorType(*getTypeConverter(), op.getType());
    Attribute value = op.getValue();
    if (type != op.getType()) {
      auto dense = dyn_cast<DenseElementsAttr>(value);
      if (!dense)
        return rewriter.notifyMatchFailure(
            op, "an unsigned constant must be a dense elements attribute");
      value = dense.bitcast(type.getElementType());
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type,
                                                   cast<TypedAttr>(value));
    return success();
  }
};

} // namespace

void tcc::lowering::populateElementwisePatterns(const TypeConverter &tc,
                                                RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ConstantLowering>(tc, ctx);
  patterns.add<ElementwiseLowering<NegOp>, ElementwiseLowering<AbsOp>,
               ElementwiseLowering<SignOp>, ElementwiseLowering<ExpOp>,
               ElementwiseLowering<LogOp>, ElementwiseLowering<SqrtOp>,
               ElementwiseLowering<RsqrtOp>, ElementwiseLowering<ReciprocalOp>,
               ElementwiseLowering<TanhOp>, ElementwiseLowering<SigmoidOp>,
               ElementwiseLowering<ReluOp>, ElementwiseLowering<ErfOp>,
               ElementwiseLowering<SoftplusOp>, ElementwiseLowering<SinOp>,
               ElementwiseLowering<CosOp>, ElementwiseLowering<FloorOp>,
               ElementwiseLowering<TanOp>, ElementwiseLowering<AsinOp>,
               ElementwiseLowering<AcosOp>, ElementwiseLowering<AtanOp>,
               ElementwiseLowering<SinhOp>, ElementwiseLowering<CoshOp>,
               ElementwiseLowering<AsinhOp>, ElementwiseLowering<AcoshOp>,
               ElementwiseLowering<AtanhOp>,
               ElementwiseLowering<CeilOp>, ElementwiseLowering<RoundOp>,
               ElementwiseLowering<NotOp>, ElementwiseLowering<GeluOp>,
               ElementwiseLowering<LeakyReluOp>, ElementwiseLowering<EluOp>,
               ElementwiseLowering<ClampOp>, ElementwiseLowering<CastOp>,
               ElementwiseLowering<AddOp>, ElementwiseLowering<SubOp>,
               ElementwiseLowering<MulOp>, ElementwiseLowering<DivOp>,
               ElementwiseLowering<PowOp>, ElementwiseLowering<MaxOp>,
               ElementwiseLowering<MinOp>, ElementwiseLowering<AndOp>,
               ElementwiseLowering<OrOp>, ElementwiseLowering<XorOp>,
               ElementwiseLowering<CompareOp>, ElementwiseLowering<SelectOp>>(
      tc, ctx);
}
