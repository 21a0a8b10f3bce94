//===- ImportElementwise.cpp - elementwise ONNX ops -----------------------===//
//
// Unary math, activations, binary arithmetic with (numpy or legacy)
// broadcasting, comparisons, logic, Where, Clip, Cast. Activations that are
// compositions (Selu, Celu, HardSwish, Mish, Softsign, PRelu, ...) are built
// from primitive tcc ops here; tcc keeps first-class ops only where a kernel
// or a gradient benefits (gelu, softplus, leaky_relu, elu, clamp).
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ImportContext.h"

#include <cfloat>
#include <cmath>

using namespace mlir;
using namespace tcc;
using namespace tcc::onnx_frontend;

namespace {

/// Checks that `v` is a float tensor (the op's type constraint).
LogicalResult requireFloat(NodeContext &ctx, Value v) {
  if (NodeContext::isFloat(v))
    return success();
  return ctx.error() << "expects a floating-point tensor, got "
                     << NodeContext::elementType(v),
         failure();
}

template <typename OpTy> LogicalResult floatUnary(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  ctx.setOutput(0, ctx.create<OpTy>(x));
  return success();
}

template <typename OpTy> LogicalResult numUnary(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (NodeContext::elementType(x).isInteger(1))
    return ctx.error() << "expects a numeric tensor, got a bool tensor",
           failure();
  ctx.setOutput(0, ctx.create<OpTy>(x));
  return success();
}

LogicalResult importNot(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (!NodeContext::elementType(x).isInteger(1))
    return ctx.error() << "expects a bool tensor", failure();
  ctx.setOutput(0, ctx.create<NotOp>(x));
  return success();
}

/// Two inputs of one element type, broadcast to one shape.
FailureOr<std::pair<Value, Value>> binaryOperands(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b)
    return failure();
  if (NodeContext::elementType(a) != NodeContext::elementType(b))
    return ctx.error() << "operands have different element types "
                       << NodeContext::elementType(a) << " and "
                       << NodeContext::elementType(b),
           failure();
  return ctx.broadcastBinary(a, b);
}

template <typename OpTy> LogicalResult binary(NodeContext &ctx) {
  auto ops = binaryOperands(ctx);
  if (failed(ops))
    return failure();
  ctx.setOutput(0, ctx.create<OpTy>(ops->first, ops->second));
  return success();
}

template <typename OpTy> LogicalResult logicBinary(NodeContext &ctx) {
  auto ops = binaryOperands(ctx);
  if (failed(ops))
    return failure();
  if (!NodeContext::elementType(ops->first).isInteger(1))
    return ctx.error() << "expects bool tensors", failure();
  ctx.setOutput(0, ctx.create<OpTy>(ops->first, ops->second));
  return success();
}

template <CmpPredicate P> LogicalResult compare(NodeContext &ctx) {
  auto ops = binaryOperands(ctx);
  if (failed(ops))
    return failure();
  ctx.setOutput(0, ctx.create<CompareOp>(P, ops->first, ops->second));
  return success();
}

/// Pow: since opset 12 the exponent may have another numeric type; it is
/// converted to the base's type (ONNX computes in the base's type).
LogicalResult importPow(NodeContext &ctx) {
  Value x = ctx.input(0), y = ctx.input(1);
  if (!x || !y)
    return failure();
  y = ctx.cast(y, NodeContext::elementType(x));
  auto ops = ctx.broadcastBinary(x, y);
  if (failed(ops))
    return failure();
  ctx.setOutput(0, ctx.create<PowOp>(ops->first, ops->second));
  return success();
}

/// Variadic Sum / Max / Min / Mean: numpy broadcasting since opset 8, equal
/// shapes before (the broadcast check reports a mismatch either way).
template <typename OpTy, bool IsMean = false>
LogicalResult variadic(NodeContext &ctx) {
  SmallVector<Value> xs;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    Value v = ctx.input(i);
    if (!v)
      return failure();
    if (!xs.empty() &&
        NodeContext::elementType(v) != NodeContext::elementType(xs[0]))
      return ctx.error() << "inputs have different element types", failure();
    xs.push_back(v);
  }
  if (xs.empty())
    return ctx.error() << "needs at least one input", failure();
  if (ctx.opset < 8)
    for (Value v : xs)
      if (NodeContext::shape(v) != NodeContext::shape(xs[0]))
        return ctx.error() << "inputs must have one shape before opset 8",
               failure();
  auto all = ctx.broadcastAll(xs);
  if (failed(all))
    return failure();
  Value acc = (*all)[0];
  for (Value v : ArrayRef<Value>(*all).drop_front())
    acc = ctx.create<OpTy>(acc, v);
  if (IsMean) {
    if (failed(requireFloat(ctx, acc)))
      return failure();
    acc = ctx.create<DivOp>(acc, ctx.splatLike(acc, double(xs.size())));
  }
  ctx.setOutput(0, acc);
  return success();
}

LogicalResult importWhere(NodeContext &ctx) {
  Value c = ctx.input(0), x = ctx.input(1), y = ctx.input(2);
  if (!c || !x || !y)
    return failure();
  if (!NodeContext::elementType(c).isInteger(1))
    return ctx.error() << "the condition must be a bool tensor", failure();
  if (NodeContext::elementType(x) != NodeContext::elementType(y))
    return ctx.error() << "the two branches have different element types",
           failure();
  auto all = ctx.broadcastAll({c, x, y});
  if (failed(all))
    return failure();
  ctx.setOutput(0, ctx.create<SelectOp>((*all)[0], (*all)[1], (*all)[2]));
  return success();
}

/// IsNaN: x != x (a float compares unequal to itself only when NaN).
LogicalResult importIsNaN(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  ctx.setOutput(0, ctx.create<CompareOp>(CmpPredicate::ne, x, x));
  return success();
}

/// IsInf: x == +inf (detect_positive, default 1) or x == -inf
/// (detect_negative, default 1).
LogicalResult importIsInf(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  bool positive = ctx.getInt("detect_positive", 1) != 0;
  bool negative = ctx.getInt("detect_negative", 1) != 0;
  auto is = [&](double inf) {
    return ctx.create<CompareOp>(CmpPredicate::eq, x, ctx.splatLike(x, inf));
  };
  Value result;
  if (positive && negative)
    result = ctx.create<OrOp>(is(INFINITY), is(-INFINITY));
  else if (positive || negative)
    result = is(positive ? INFINITY : -INFINITY);
  else // neither: false everywhere (inf never equals NaN).
    result = ctx.create<CompareOp>(CmpPredicate::eq, x, ctx.splatLike(x, NAN));
  ctx.setOutput(0, result);
  return success();
}

/// Mod: the remainder of A / B. With fmod = 1 (C's fmod; required for
/// floats by ONNX, and what PyTorch's exporters write for torch.fmod) it
/// has the sign of A: A - trunc(A / B) * B. With fmod = 0 (Python's %,
/// torch.remainder: integers, and floats from PyTorch's exporters) it has
/// the sign of B: A - floor(A / B) * B. Integer division truncates in tcc,
/// so the integer forms are exact; the float forms round A / B once (what
/// PyTorch's own remainder computes). The gradient follows from the parts:
/// dA = g, dB = -g * trunc(A / B) (floor and sign have none).
LogicalResult importMod(NodeContext &ctx) {
  auto ops = binaryOperands(ctx);
  if (failed(ops))
    return failure();
  auto [a, b] = *ops;
  bool fmod = ctx.getInt("fmod", 0) != 0;
  Type et = NodeContext::elementType(a);
  if (!isa<FloatType>(et) && !isa<IntegerType>(et))
    return ctx.error() << "expects numeric tensors, got " << et, failure();
  if (isa<IntegerType>(et) && et.isInteger(1))
    return ctx.error() << "expects numeric tensors, got bool", failure();
  Value quotient = ctx.create<DivOp>(a, b);
  if (isa<FloatType>(et)) {
    // trunc(q) = sign(q) * floor(|q|); floor(q) for Python's form.
    Value whole = fmod ? ctx.create<MulOp>(ctx.create<SignOp>(quotient),
                                           ctx.create<FloorOp>(ctx.create<AbsOp>(quotient)))
                       : ctx.create<FloorOp>(quotient);
    ctx.setOutput(0, ctx.create<SubOp>(a, ctx.create<MulOp>(whole, b)));
    return success();
  }
  // Integers: the truncating remainder, then for Python's form B added
  // where the remainder is nonzero and its sign differs from B's.
  Value r = ctx.create<SubOp>(a, ctx.create<MulOp>(quotient, b));
  if (fmod || cast<IntegerType>(et).isUnsigned()) {
    ctx.setOutput(0, r);
    return success();
  }
  Value zero = ctx.splatLike(r, 0.0);
  Value nonzero = ctx.create<CompareOp>(CmpPredicate::ne, r, zero);
  Value signsDiffer = ctx.create<XorOp>(ctx.create<CompareOp>(CmpPredicate::lt, r, zero),
                                        ctx.create<CompareOp>(CmpPredicate::lt, b, zero));
  Value adjust = ctx.create<AndOp>(nonzero, signsDiffer);
  ctx.setOutput(0, ctx.create<SelectOp>(adjust, ctx.create<AddOp>(r, b), r));
  return success();
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

LogicalResult importLeakyRelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  ctx.setOutput(0, ctx.create<LeakyReluOp>(
                       x, ctx.b.getF64FloatAttr(ctx.getFloat("alpha", 0.01))));
  return success();
}

Value elu(NodeContext &ctx, Value x, double alpha) {
  return ctx.create<EluOp>(x, ctx.b.getF64FloatAttr(alpha));
}

LogicalResult importElu(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  ctx.setOutput(0, elu(ctx, x, ctx.getFloat("alpha", 1.0)));
  return success();
}

/// selu(x) = gamma * elu(x, alpha).
LogicalResult importSelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  double alpha = ctx.getFloat("alpha", 1.67326319217681884765625);
  double gamma = ctx.getFloat("gamma", 1.05070102214813232421875);
  ctx.setOutput(0, ctx.create<MulOp>(elu(ctx, x, alpha),
                                     ctx.splatLike(x, gamma)));
  return success();
}

/// celu(x) = alpha * elu(x / alpha, 1).
LogicalResult importCelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  double alpha = ctx.getFloat("alpha", 1.0);
  if (alpha == 0.0)
    return ctx.error() << "alpha must not be zero", failure();
  Value scaled = ctx.create<DivOp>(x, ctx.splatLike(x, alpha));
  ctx.setOutput(0, ctx.create<MulOp>(elu(ctx, scaled, 1.0),
                                     ctx.splatLike(x, alpha)));
  return success();
}

Value hardSigmoid(NodeContext &ctx, Value x, double alpha, double beta) {
  Value lin = ctx.create<AddOp>(ctx.create<MulOp>(x, ctx.splatLike(x, alpha)),
                                ctx.splatLike(x, beta));
  return ctx.create<ClampOp>(lin, ctx.b.getF64FloatAttr(0.0),
                             ctx.b.getF64FloatAttr(1.0));
}

LogicalResult importHardSigmoid(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  ctx.setOutput(0, hardSigmoid(ctx, x, ctx.getFloat("alpha", 0.2),
                               ctx.getFloat("beta", 0.5)));
  return success();
}

/// hard_swish(x) = x * hard_sigmoid(x, 1/6, 1/2).
LogicalResult importHardSwish(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  ctx.setOutput(0, ctx.create<MulOp>(x, hardSigmoid(ctx, x, 1.0 / 6, 0.5)));
  return success();
}

/// thresholded_relu(x) = x > alpha ? x : 0.
LogicalResult importThresholdedRelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  Value above = ctx.create<CompareOp>(
      CmpPredicate::gt, x, ctx.splatLike(x, ctx.getFloat("alpha", 1.0)));
  ctx.setOutput(0, ctx.create<SelectOp>(above, x, ctx.splatLike(x, 0.0)));
  return success();
}

/// softsign(x) = x / (1 + |x|).
LogicalResult importSoftsign(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  Value denom = ctx.create<AddOp>(ctx.splatLike(x, 1.0), ctx.create<AbsOp>(x));
  ctx.setOutput(0, ctx.create<DivOp>(x, denom));
  return success();
}

/// mish(x) = x * tanh(softplus(x)).
LogicalResult importMish(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  ctx.setOutput(0, ctx.create<MulOp>(
                       x, ctx.create<TanhOp>(ctx.create<SoftplusOp>(x))));
  return success();
}

/// prelu(x, slope) = x < 0 ? slope * x : x, slope broadcast onto x.
LogicalResult importPRelu(NodeContext &ctx) {
  Value x = ctx.input(0), slope = ctx.input(1);
  if (!x || !slope)
    return failure();
  if (NodeContext::elementType(x) != NodeContext::elementType(slope))
    return ctx.error() << "x and slope have different element types",
           failure();
  // Before opset 7 a 1-D slope of channel size applies per channel (dim 1).
  if (ctx.opset < 7 && NodeContext::rank(slope) == 1 &&
      NodeContext::rank(x) >= 2 &&
      NodeContext::shape(slope)[0] == NodeContext::shape(x)[1] &&
      NodeContext::shape(slope)[0] != 1) {
    SmallVector<int64_t> s(NodeContext::rank(x) - 1, 1);
    s[0] = NodeContext::shape(slope)[0];
    slope = ctx.reshape(slope, s);
  }
  auto target = ctx.broadcastShape({NodeContext::shape(x), NodeContext::shape(slope)});
  if (failed(target))
    return failure();
  if (ArrayRef<int64_t>(*target) != NodeContext::shape(x))
    return ctx.error() << "slope must broadcast to the shape of x", failure();
  slope = ctx.broadcastTo(slope, *target);
  Value neg = ctx.create<CompareOp>(CmpPredicate::lt, x, ctx.splatLike(x, 0.0));
  ctx.setOutput(0, ctx.create<SelectOp>(neg, ctx.create<MulOp>(slope, x), x));
  return success();
}

LogicalResult importGelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x)))
    return failure();
  std::string mode = ctx.getString("approximate", "none");
  if (mode != "none" && mode != "tanh")
    return ctx.error() << "approximate must be 'none' or 'tanh', got '" << mode
                       << "'",
           failure();
  ctx.setOutput(0, ctx.create<GeluOp>(x, mode == "tanh"));
  return success();
}

/// Clip: bounds are attributes before opset 11 and optional inputs after.
/// Constant bounds become a tcc.clamp; run-time bounds become max / min.
LogicalResult importClip(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  std::optional<double> lo, hi;
  Value loV, hiV;
  if (ctx.opset < 11) {
    lo = ctx.getFloat("min", -FLT_MAX);
    hi = ctx.getFloat("max", FLT_MAX);
  } else {
    for (unsigned i : {1u, 2u}) {
      if (!ctx.hasInput(i))
        continue;
      StringRef what = i == 1 ? "min" : "max";
      // A constant bound (also a float initializer) is read, not made a
      // parameter: it becomes an attribute of tcc.clamp.
      if (DenseElementsAttr c = ctx.constantInput(i)) {
        if (c.getNumElements() != 1)
          return ctx.error() << what << " must be a scalar", failure();
        auto vals = ctx.floatsInput(i, what);
        if (failed(vals))
          return failure();
        (i == 1 ? lo : hi) = (*vals)[0];
        continue;
      }
      Value bound = ctx.input(i);
      if (!bound)
        return failure();
      if (NodeContext::type(bound).getNumElements() != 1)
        return ctx.error() << what << " must be a scalar", failure();
      (i == 1 ? loV : hiV) =
          ctx.reshape(ctx.cast(bound, NodeContext::elementType(x)), {});
    }
  }
  Value y = x;
  if (lo || hi)
    y = ctx.create<ClampOp>(y, lo ? ctx.b.getF64FloatAttr(*lo) : FloatAttr(),
                            hi ? ctx.b.getF64FloatAttr(*hi) : FloatAttr());
  if (loV)
    y = ctx.create<MaxOp>(y, ctx.broadcastTo(loV, NodeContext::shape(x)));
  if (hiV)
    y = ctx.create<MinOp>(y, ctx.broadcastTo(hiV, NodeContext::shape(x)));
  ctx.setOutput(0, y);
  return success();
}

LogicalResult importCast(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (!ctx.hasAttr("to"))
    return ctx.error() << "the 'to' attribute is required", failure();
  int64_t to = ctx.getInt("to", 0);
  Type et = convertElementType(ctx.b.getContext(), int32_t(to));
  if (!et)
    return ctx.error() << "cannot cast to " << onnxTypeName(int32_t(to))
                       << ", which tcc does not support",
           failure();
  ctx.setOutput(0, ctx.cast(x, et));
  return success();
}

LogicalResult importCastLike(NodeContext &ctx) {
  Value x = ctx.input(0), like = ctx.input(1);
  if (!x || !like)
    return failure();
  ctx.setOutput(0, ctx.cast(x, NodeContext::elementType(like)));
  return success();
}

LogicalResult importIdentity(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  ctx.setOutput(0, x);
  return success();
}

} // namespace

void tcc::onnx_frontend::registerElementwiseHandlers(HandlerTable &t) {
  t["Exp"] = floatUnary<ExpOp>;
  t["Log"] = floatUnary<LogOp>;
  t["Sqrt"] = floatUnary<SqrtOp>;
  t["Reciprocal"] = floatUnary<ReciprocalOp>;
  t["Tanh"] = floatUnary<TanhOp>;
  t["Sigmoid"] = floatUnary<SigmoidOp>;
  t["Erf"] = floatUnary<ErfOp>;
  t["Sin"] = floatUnary<SinOp>;
  t["Cos"] = floatUnary<CosOp>;
  t["Tan"] = floatUnary<TanOp>;
  t["Asin"] = floatUnary<AsinOp>;
  t["Acos"] = floatUnary<AcosOp>;
  t["Atan"] = floatUnary<AtanOp>;
  t["Sinh"] = floatUnary<SinhOp>;
  t["Cosh"] = floatUnary<CoshOp>;
  t["Asinh"] = floatUnary<AsinhOp>;
  t["Acosh"] = floatUnary<AcoshOp>;
  t["Atanh"] = floatUnary<AtanhOp>;
  t["Floor"] = floatUnary<FloorOp>;
  t["Ceil"] = floatUnary<CeilOp>;
  t["Round"] = floatUnary<RoundOp>;
  t["Softplus"] = floatUnary<SoftplusOp>;
  t["Neg"] = numUnary<NegOp>;
  t["Abs"] = numUnary<AbsOp>;
  t["Sign"] = numUnary<SignOp>;
  t["Relu"] = numUnary<ReluOp>;
  t["Not"] = importNot;
  t["Add"] = binary<AddOp>;
  t["Sub"] = binary<SubOp>;
  t["Mul"] = binary<MulOp>;
  t["Div"] = binary<DivOp>;
  t["Pow"] = importPow;
  t["And"] = logicBinary<AndOp>;
  t["Or"] = logicBinary<OrOp>;
  t["Xor"] = logicBinary<XorOp>;
  t["Equal"] = compare<CmpPredicate::eq>;
  t["IsNaN"] = importIsNaN;
  t["IsInf"] = importIsInf;
  t["Mod"] = importMod;
  t["Less"] = compare<CmpPredicate::lt>;
  t["LessOrEqual"] = compare<CmpPredicate::le>;
  t["Greater"] = compare<CmpPredicate::gt>;
  t["GreaterOrEqual"] = compare<CmpPredicate::ge>;
  t["Max"] = variadic<MaxOp>;
  t["Min"] = variadic<MinOp>;
  t["Sum"] = variadic<AddOp>;
  t["Mean"] = variadic<AddOp, /*IsMean=*/true>;
  t["Where"] = importWhere;
  t["LeakyRelu"] = importLeakyRelu;
  t["Elu"] = importElu;
  t["Selu"] = importSelu;
  t["Celu"] = importCelu;
  t["HardSigmoid"] = importHardSigmoid;
  t["HardSwish"] = importHardSwish;
  t["ThresholdedRelu"] = importThresholdedRelu;
  t["Softsign"] = importSoftsign;
  t["Mish"] = importMish;
  t["PRelu"] = importPRelu;
  t["Gelu"] = importGelu;
  t["Clip"] = importClip;
  t["Cast"] = importCast;
  t["CastLike"] = importCastLike;
  t["Identity"] = importIdentity;
}
