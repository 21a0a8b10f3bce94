//===- GradientRules.cpp - the gradient of each differentiable tcc op -----===//
//
// One external model of DifferentiableOpInterface per op. Every rule builds
// tcc ops, so the backward pass goes through the same folding, fusion and
// code generation as the forward one. Shapes are static and broadcasting is
// explicit in the dialect (tcc.broadcast_in_dim), so elementwise rules never
// reduce: the reduction of a broadcast's gradient is the broadcast's rule.
//
// Conventions at ties and kinks, as PyTorch: relu'(0) = 0; max/min send the
// gradient to the first operand where the operands are equal; abs'(0) = 0.
//
//===----------------------------------------------------------------------===//

#include "passes/training/autodiff/GradientRules.h"
#include "passes/support/TccBuilders.h"
#include "passes/lowering/Patterns.h"

#include "dialects/TccOps.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace tcc;

namespace {

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// select(pred(x, y), g, 0).
Value gradWhere(OpBuilder &b, Location loc, CmpPredicate pred, Value x, Value y, Value g) {
  Value cond = CompareOp::create(b, loc, pred, x, y);
  return SelectOp::create(b, loc, cond, g, splat(b, loc, g, 0.0));
}

/// Sums G over AXES keeping them as size 1.
Value sumKeep(OpBuilder &b, Location loc, Value g, ArrayRef<int64_t> axes) {
  if (axes.empty())
    return g;
  return ReduceSumOp::create(b, loc, g, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
}

/// Broadcasts G (shaped like SHAPE with the reduced axes as size 1, or
/// without them) back to TYPE's shape: the gradient of a reduction.
Value expandTo(OpBuilder &b, Location loc, Value g, RankedTensorType type,
               ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept(type.getShape());
  for (int64_t a : axes)
    kept[a] = 1;
  auto keptType = RankedTensorType::get(kept, type.getElementType());
  if (tensorType(g) != keptType)
    g = ReshapeOp::create(b, loc, keptType, g);
  if (keptType == type)
    return g;
  SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  return BroadcastInDimOp::create(b, loc, type, g, b.getDenseI64ArrayAttr(dims));
}

/// Swaps the two innermost dimensions.
Value transposeInner(OpBuilder &b, Location loc, Value x) {
  int64_t rank = tensorType(x).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return TransposeOp::create(b, loc, x, b.getDenseI64ArrayAttr(perm));
}

/// The leading SHAPE corner of X (X unchanged if it has that shape).
Value cropTo(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> shape) {
  RankedTensorType t = tensorType(x);
  if (t.getShape() == shape)
    return x;
  SmallVector<int64_t> zeros(t.getRank(), 0), ones(t.getRank(), 1);
  return SliceOp::create(b, loc, RankedTensorType::get(shape, t.getElementType()), x,
                         b.getDenseI64ArrayAttr(zeros), b.getDenseI64ArrayAttr(ones));
}

/// The row-major multi-index of FLAT in SHAPE.
SmallVector<int64_t> unflatten(int64_t flat, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t j = int64_t(shape.size()) - 1; j >= 0; --j) {
    index[j] = flat % shape[j];
    flat /= shape[j];
  }
  return index;
}

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

//===----------------------------------------------------------------------===//
// The models
//===----------------------------------------------------------------------===//

/// The model for OP: RULE(builder, op, result grads, operand grads).
template <typename OpTy, typename Rule>
struct Gradient : DifferentiableOpInterface::ExternalModel<Gradient<OpTy, Rule>, OpTy> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    return Rule()(b, cast<OpTy>(op), resultGrads, operandGrads);
  }
};

/// Unary elementwise op whose derivative is F(builder, loc, x, y) (dy/dx).
template <typename OpTy, Value (*Derivative)(OpBuilder &, Location, Value, Value)>
struct UnaryRule {
  LogicalResult operator()(OpBuilder &b, OpTy op, ValueRange g,
                           SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    if (!isFloatTensor(op.getInput()))
      return op.emitOpError("has no gradient for integer operands");
    out.push_back(mul(b, loc, g[0], Derivative(b, loc, op.getInput(), op.getResult())));
    return success();
  }
};

Value dExp(OpBuilder &, Location, Value, Value y) { return y; }
Value dLog(OpBuilder &b, Location loc, Value x, Value) {
  return div(b, loc, splat(b, loc, x, 1.0), x);
}
Value dSqrt(OpBuilder &b, Location loc, Value, Value y) {
  return div(b, loc, splat(b, loc, y, 0.5), y);
}
Value dRsqrt(OpBuilder &b, Location loc, Value, Value y) { // -y^3 / 2
  Value half = splat(b, loc, y, -0.5);
  return mul(b, loc, half, mul(b, loc, y, mul(b, loc, y, y)));
}
Value dReciprocal(OpBuilder &b, Location loc, Value, Value y) { return neg(b, loc, mul(b, loc, y, y)); }
Value dTanh(OpBuilder &b, Location loc, Value, Value y) {
  Value one = splat(b, loc, y, 1.0);
  return sub(b, loc, one, mul(b, loc, y, y));
}
Value dSigmoid(OpBuilder &b, Location loc, Value, Value y) {
  return mul(b, loc, y, sub(b, loc, splat(b, loc, y, 1.0), y));
}
Value dErf(OpBuilder &b, Location loc, Value x, Value) { // 2/sqrt(pi) exp(-x^2)
  Value e = ExpOp::create(b, loc, neg(b, loc, mul(b, loc, x, x)));
  return mul(b, loc, splat(b, loc, x, 2.0 / std::sqrt(M_PI)), e);
}
Value dSin(OpBuilder &b, Location loc, Value x, Value) { return CosOp::create(b, loc, x); }
Value dCos(OpBuilder &b, Location loc, Value x, Value) { return neg(b, loc, SinOp::create(b, loc, x)); }
// Operands are built one statement at a time: the order in which C++ evaluates
// call arguments is unspecified, and with it the order of the ops.
Value dTan(OpBuilder &b, Location loc, Value, Value y) { // 1 + tan^2
  Value one = splat(b, loc, y, 1.0);
  Value square = mul(b, loc, y, y);
  return add(b, loc, one, square);
}
/// 1 - x^2 as (1 - x)(1 + x): no cancellation near |x| = 1, where asin, acos
/// and atanh have their steepest slopes.
Value oneMinusSquare(OpBuilder &b, Location loc, Value x) {
  Value one = splat(b, loc, x, 1.0);
  Value lo = sub(b, loc, one, x);
  Value hi = add(b, loc, one, x);
  return mul(b, loc, lo, hi);
}
Value dAsin(OpBuilder &b, Location loc, Value x, Value) { // 1 / sqrt(1 - x^2)
  return RsqrtOp::create(b, loc, oneMinusSquare(b, loc, x));
}
Value dAcos(OpBuilder &b, Location loc, Value x, Value) { // -1 / sqrt(1 - x^2)
  return neg(b, loc, dAsin(b, loc, x, Value()));
}
Value dAtan(OpBuilder &b, Location loc, Value x, Value) { // 1 / (1 + x^2)
  Value one = splat(b, loc, x, 1.0);
  Value square = mul(b, loc, x, x);
  Value denominator = add(b, loc, one, square);
  return div(b, loc, one, denominator);
}
Value dSinh(OpBuilder &b, Location loc, Value x, Value) { return CoshOp::create(b, loc, x); }
Value dCosh(OpBuilder &b, Location loc, Value x, Value) { return SinhOp::create(b, loc, x); }
Value dAsinh(OpBuilder &b, Location loc, Value x, Value) { // 1 / sqrt(x^2 + 1)
  Value square = mul(b, loc, x, x);
  Value one = splat(b, loc, x, 1.0);
  return RsqrtOp::create(b, loc, add(b, loc, square, one));
}
Value dAcosh(OpBuilder &b, Location loc, Value x, Value) { // 1 / sqrt((x - 1)(x + 1))
  Value one = splat(b, loc, x, 1.0);
  Value lo = sub(b, loc, x, one);
  Value hi = add(b, loc, x, one);
  return RsqrtOp::create(b, loc, mul(b, loc, lo, hi));
}
Value dAtanh(OpBuilder &b, Location loc, Value x, Value) { // 1 / (1 - x^2)
  Value one = splat(b, loc, x, 1.0);
  return div(b, loc, one, oneMinusSquare(b, loc, x));
}

struct NegRule {
  LogicalResult operator()(OpBuilder &b, NegOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    out.push_back(neg(b, op.getLoc(), g[0]));
    return success();
  }
};

struct ReluRule {
  LogicalResult operator()(OpBuilder &b, ReluOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    out.push_back(gradWhere(b, loc, CmpPredicate::gt, op.getInput(), splat(b, loc, g[0], 0.0), g[0]));
    return success();
  }
};

struct AbsRule {
  LogicalResult operator()(OpBuilder &b, AbsOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    out.push_back(mul(b, op.getLoc(), g[0], SignOp::create(b, op.getLoc(), op.getInput())));
    return success();
  }
};

/// Gradient-free ops whose result is piecewise constant: zero gradient.
template <typename OpTy>
struct ZeroRule {
  LogicalResult operator()(OpBuilder &b, OpTy op, ValueRange g, SmallVectorImpl<Value> &out) const {
    out.push_back(splat(b, op.getLoc(), op.getInput(), 0.0));
    return success();
  }
};

struct AddRule {
  LogicalResult operator()(OpBuilder &, AddOp, ValueRange g, SmallVectorImpl<Value> &out) const {
    out.append({g[0], g[0]});
    return success();
  }
};

struct SubRule {
  LogicalResult operator()(OpBuilder &b, SubOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    out.append({g[0], neg(b, op.getLoc(), g[0])});
    return success();
  }
};

struct MulRule {
  LogicalResult operator()(OpBuilder &b, MulOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    out.append({mul(b, loc, g[0], op.getRhs()), mul(b, loc, g[0], op.getLhs())});
    return success();
  }
};

struct DivRule { // x / y: (g / y, -g x / y^2 = -(g / y) * result)
  LogicalResult operator()(OpBuilder &b, DivOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    if (!isFloatTensor(op.getLhs()))
      return op.emitOpError("has no gradient for integer operands");
    Value gx = div(b, loc, g[0], op.getRhs());
    out.append({gx, neg(b, loc, mul(b, loc, gx, op.getResult()))});
    return success();
  }
};

struct PowRule { // x^y: (g y x^(y-1), g x^y log x)
  LogicalResult operator()(OpBuilder &b, PowOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    Value x = op.getLhs(), y = op.getRhs();
    if (!isFloatTensor(x))
      return op.emitOpError("has no gradient for integer operands");
    Value ym1 = sub(b, loc, y, splat(b, loc, y, 1.0));
    out.push_back(mul(b, loc, g[0], mul(b, loc, y, PowOp::create(b, loc, x, ym1))));
    out.push_back(mul(b, loc, g[0], mul(b, loc, op.getResult(), LogOp::create(b, loc, x))));
    return success();
  }
};

/// max / min: the gradient goes to the first operand where it wins or ties.
template <typename OpTy, CmpPredicate FirstWins>
struct ExtremumRule {
  LogicalResult operator()(OpBuilder &b, OpTy op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    Value cond = CompareOp::create(b, loc, FirstWins, op.getLhs(), op.getRhs());
    Value zero = splat(b, loc, g[0], 0.0);
    out.push_back(SelectOp::create(b, loc, cond, g[0], zero));
    out.push_back(SelectOp::create(b, loc, cond, zero, g[0]));
    return success();
  }
};

struct SelectRule {
  LogicalResult operator()(OpBuilder &b, SelectOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    Value zero = splat(b, loc, g[0], 0.0);
    out.push_back(Value());
    out.push_back(SelectOp::create(b, loc, op.getCond(), g[0], zero));
    out.push_back(SelectOp::create(b, loc, op.getCond(), zero, g[0]));
    return success();
  }
};

struct CastRule {
  LogicalResult operator()(OpBuilder &b, CastOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    if (!isFloatTensor(op.getInput()) || !isFloatTensor(op.getResult())) {
      out.push_back(Value());
      return success();
    }
    out.push_back(CastOp::create(b, op.getLoc(), op.getInput().getType(), g[0]));
    return success();
  }
};

/// broadcast_in_dim: sum the gradient over the repeated dimensions (those no
/// operand dimension maps to, and those the operand has as size 1).
struct BroadcastRule {
  LogicalResult operator()(OpBuilder &b, BroadcastInDimOp op, ValueRange g,
                           SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    RankedTensorType in = tensorType(op.getInput()), res = tensorType(op.getResult());
    ArrayRef<int64_t> dims = op.getDims();
    if (!llvm::is_sorted(dims))
      return op.emitOpError("gradient needs increasing dims");
    SmallVector<int64_t> repeated;
    SmallVector<bool> mapped(res.getRank(), false);
    for (auto [i, d] : llvm::enumerate(dims)) {
      mapped[d] = true;
      if (in.getDimSize(i) == 1 && res.getDimSize(d) != 1)
        repeated.push_back(d);
    }
    for (int64_t d = 0; d < res.getRank(); ++d)
      if (!mapped[d])
        repeated.push_back(d);
    llvm::sort(repeated);
    Value s = sumKeep(b, loc, g[0], repeated);
    if (tensorType(s) != in)
      s = ReshapeOp::create(b, loc, in, s);
    out.push_back(s);
    return success();
  }
};

struct ReshapeRule {
  LogicalResult operator()(OpBuilder &b, ReshapeOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    out.push_back(ReshapeOp::create(b, op.getLoc(), op.getInput().getType(), g[0]));
    return success();
  }
};

struct TransposeRule {
  LogicalResult operator()(OpBuilder &b, TransposeOp op, ValueRange g,
                           SmallVectorImpl<Value> &out) const {
    ArrayRef<int64_t> perm = op.getPerm();
    SmallVector<int64_t> inverse(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inverse[p] = int64_t(i);
    out.push_back(TransposeOp::create(b, op.getLoc(), g[0], b.getDenseI64ArrayAttr(inverse)));
    return success();
  }
};

/// reduce_sum / reduce_mean: the (scaled) gradient broadcast back.
template <typename OpTy, bool Mean>
struct ReduceRule {
  LogicalResult operator()(OpBuilder &b, OpTy op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    RankedTensorType in = tensorType(op.getInput());
    if (!isFloatTensor(op.getInput()))
      return op.emitOpError("has no gradient for integer operands");
    Value e = expandTo(b, loc, g[0], in, op.getAxes());
    if (Mean) {
      int64_t count = 1;
      for (int64_t a : op.getAxes())
        count *= in.getDimSize(a);
      e = mul(b, loc, e, splat(b, loc, e, 1.0 / double(count)));
    }
    out.push_back(e);
    return success();
  }
};

/// [B.., M, K] x [B.., K, N]: dA = g B^T, dB = A^T g.
struct MatmulRule {
  LogicalResult operator()(OpBuilder &b, MatmulOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    if (!isFloatTensor(op.getLhs()))
      return op.emitOpError("has no gradient for integer operands");
    out.push_back(MatmulOp::create(b, loc, g[0], transposeInner(b, loc, op.getRhs())));
    out.push_back(MatmulOp::create(b, loc, transposeInner(b, loc, op.getLhs()), g[0]));
    return success();
  }
};

/// softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g).
template <typename OpTy, bool Log>
struct SoftmaxRule {
  LogicalResult operator()(OpBuilder &b, OpTy op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    Value y = op.getResult();
    RankedTensorType type = tensorType(y);
    int64_t axis = op.getAxis();
    if (Log) {
      Value s = expandTo(b, loc, sumKeep(b, loc, g[0], {axis}), type, {axis});
      out.push_back(sub(b, loc, g[0], mul(b, loc, ExpOp::create(b, loc, y), s)));
    } else {
      Value s = expandTo(b, loc, sumKeep(b, loc, mul(b, loc, g[0], y), {axis}), type, {axis});
      out.push_back(mul(b, loc, y, sub(b, loc, g[0], s)));
    }
    return success();
  }
};

/// clamp: the gradient passes where min <= x <= max (as PyTorch's).
struct ClampRule {
  LogicalResult operator()(OpBuilder &b, ClampOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    Value x = op.getInput(), grad = g[0];
    if (auto lo = op.getMin())
      grad = gradWhere(b, loc, CmpPredicate::ge, x, splat(b, loc, x, lo->convertToDouble()), grad);
    if (auto hi = op.getMax())
      grad = gradWhere(b, loc, CmpPredicate::le, x, splat(b, loc, x, hi->convertToDouble()), grad);
    out.push_back(grad);
    return success();
  }
};

/// slice: the gradient put back at the sliced positions, zeros elsewhere.
/// tcc.pad has no interior padding, so along a dimension of stride s > 1
/// each element of g is followed by s - 1 zeros ([n] -> [n, 1], padded to
/// [n, s], -> [n * s]); a negative stride is the positive one over g
/// reversed (a stride -1 slice), starting at the last sliced position. One
/// pad then moves the first element to its start, and what lies past the
/// input (at most s - 1 trailing zeros) is cut off.
struct SliceRule {
  LogicalResult operator()(OpBuilder &b, SliceOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    RankedTensorType in = tensorType(op.getInput()), res = tensorType(op.getResult());
    if (res.getNumElements() == 0) {
      out.push_back(splat(b, loc, op.getInput(), 0.0));
      return success();
    }
    int64_t rank = in.getRank();
    Type et = in.getElementType();
    auto constantPad = [&](Value v, ArrayRef<int64_t> low, ArrayRef<int64_t> high) -> Value {
      return PadOp::create(b, loc, v, b.getDenseI64ArrayAttr(low), b.getDenseI64ArrayAttr(high),
                           PadModeAttr::get(b.getContext(), PadMode::constant),
                           b.getF64FloatAttr(0.0));
    };
    Value grad = g[0];
    SmallVector<int64_t> low(op.getStart()), high(rank);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t s = op.getStride()[d], n = res.getDimSize(d);
      SmallVector<int64_t> shape(tensorType(grad).getShape());
      if (s < 0) {
        SmallVector<int64_t> start(rank, 0), step(rank, 1);
        start[d] = n - 1;
        step[d] = -1;
        grad = SliceOp::create(b, loc, tensorType(grad), grad, b.getDenseI64ArrayAttr(start),
                               b.getDenseI64ArrayAttr(step));
        low[d] += (n - 1) * s;
        s = -s;
      }
      if (s > 1) {
        SmallVector<int64_t> split(shape), lo(rank + 1, 0), hi(rank + 1, 0);
        split.insert(split.begin() + d + 1, 1);
        hi[d + 1] = s - 1;
        grad = ReshapeOp::create(b, loc, RankedTensorType::get(split, et), grad);
        grad = constantPad(grad, lo, hi);
        shape[d] = n * s;
        grad = ReshapeOp::create(b, loc, RankedTensorType::get(shape, et), grad);
      }
      high[d] = std::max<int64_t>(0, in.getDimSize(d) - low[d] - shape[d]);
    }
    out.push_back(cropTo(b, loc, constantPad(grad, low, high), in.getShape()));
    return success();
  }
};

/// pad (constant, non-negative amounts): the gradient's interior.
struct PadRule {
  LogicalResult operator()(OpBuilder &b, PadOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    if (op.getMode() != PadMode::constant ||
        llvm::any_of(op.getLow(), [](int64_t v) { return v < 0; }) ||
        llvm::any_of(op.getHigh(), [](int64_t v) { return v < 0; }))
      return op.emitOpError("gradient of reflect / edge / negative padding is not implemented yet");
    SmallVector<int64_t> stride(op.getLow().size(), 1);
    out.push_back(SliceOp::create(b, op.getLoc(), op.getInput().getType(), g[0],
                                  b.getDenseI64ArrayAttr(op.getLow()),
                                  b.getDenseI64ArrayAttr(stride)));
    return success();
  }
};

/// concat: each operand's part of the gradient.
struct ConcatRule {
  LogicalResult operator()(OpBuilder &b, ConcatOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    int64_t axis = op.getAxis(), offset = 0;
    for (Value in : op.getInputs()) {
      RankedTensorType t = tensorType(in);
      SmallVector<int64_t> start(t.getRank(), 0), stride(t.getRank(), 1);
      start[axis] = offset;
      offset += t.getDimSize(axis);
      out.push_back(SliceOp::create(b, op.getLoc(), t, g[0], b.getDenseI64ArrayAttr(start),
                                    b.getDenseI64ArrayAttr(stride)));
    }
    return success();
  }
};

/// gather along AXIS: the gradient slices added into zeros at the gathered
/// indices (scatter-add, in index order: deterministic; negative indices
/// wrap as in the forward). For axis 0 (an embedding lookup) g [S.., B..]
/// is scattered into [X, B..] directly; along another axis the gathered
/// axis goes to the front: g [A.., S.., B..] -> [S.., A.., B..] is
/// scattered into [X, A.., B..], which is transposed back to [A.., X, B..].
struct GatherRule {
  LogicalResult operator()(OpBuilder &b, GatherOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    RankedTensorType in = tensorType(op.getInput());
    RankedTensorType idx = tensorType(op.getIndices());
    int64_t axis = op.getAxis(), rank = in.getRank(), idxRank = idx.getRank();
    SmallVector<int64_t> idxShape(idx.getShape());
    idxShape.push_back(1);
    Value indices = ReshapeOp::create(b, loc, RankedTensorType::get(idxShape, idx.getElementType()),
                                      op.getIndices());
    Value updates = g[0];
    // toFront: [A.., X, B..] -> [X, A.., B..]; S.. moves likewise in g.
    SmallVector<int64_t> toFront = {axis}, gToFront, frontShape = {in.getDimSize(axis)};
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis) {
        toFront.push_back(d);
        frontShape.push_back(in.getDimSize(d));
      }
    if (axis != 0) {
      for (int64_t d = 0; d < idxRank; ++d)
        gToFront.push_back(axis + d);
      for (int64_t d = 0; d < tensorType(g[0]).getRank(); ++d)
        if (d < axis || d >= axis + idxRank)
          gToFront.push_back(d);
      updates = TransposeOp::create(b, loc, updates, b.getDenseI64ArrayAttr(gToFront));
    }
    auto frontType = RankedTensorType::get(frontShape, in.getElementType());
    Value zeros = splat(b, loc, frontType, 0.0);
    Value dx = ScatterNdOp::create(b, loc, frontType, zeros, indices, updates, ScatterReduction::add);
    if (axis != 0) {
      SmallVector<int64_t> back(rank);
      for (auto [i, p] : llvm::enumerate(toFront))
        back[p] = int64_t(i);
      dx = TransposeOp::create(b, loc, dx, b.getDenseI64ArrayAttr(back));
    }
    out.push_back(dx);
    out.push_back(Value());
    return success();
  }
};

/// The filter gradient of a convolution of X [N, C, D...] in GROUP groups by
/// a filter of FILTER's type [F, C/G, K...] (stride s, dilation d, X padded
/// by (pl, ph)), given the gradient G [N, F, O...] of its result: one
/// tcc.conv_backward_filter, which code generation can hand to a library's
/// backward-weights convolution whole.
Value convFilterGradient(OpBuilder &b, Location loc, Value x, Value g, RankedTensorType filter,
                         int64_t group, ArrayRef<int64_t> s, ArrayRef<int64_t> d,
                         ArrayRef<int64_t> pl, ArrayRef<int64_t> ph) {
  return ConvBackwardFilterOp::create(b, loc, x, g, b.getDenseI64ArrayAttr(filter.getShape().drop_front(2)),
                                      b.getDenseI64ArrayAttr(s), b.getDenseI64ArrayAttr(d),
                                      b.getDenseI64ArrayAttr(pl), b.getDenseI64ArrayAttr(ph),
                                      b.getI64IntegerAttr(group));
}

/// conv in G groups, with x padded by (pl, ph), stride s, dilation d:
///   dX = conv_transpose(g, w) in G groups with the same stride, dilation
///        and pads (w [F, C/G, K...] is conv_transpose's [in, out/G, K...]
///        filter layout for that direction), and output_padding = the input
///        rows the forward windows never reached;
///   dW = conv_backward_filter(x, g).
struct ConvRule {
  LogicalResult operator()(OpBuilder &b, ConvOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    Value x = op.getInput(), w = op.getFilter();
    RankedTensorType xt = tensorType(x), wt = tensorType(w);
    int64_t spatial = xt.getRank() - 2;
    ArrayRef<int64_t> s = op.getStrides(), d = op.getDilations(), pl = op.getPadLow(),
                      ph = op.getPadHigh();
    SmallVector<int64_t> outputPadding;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t span = xt.getDimSize(2 + i) + pl[i] + ph[i] - d[i] * (wt.getDimSize(2 + i) - 1) - 1;
      outputPadding.push_back(span % s[i]);
    }
    out.push_back(ConvTransposeOp::create(
        b, loc, g[0], w, b.getDenseI64ArrayAttr(s), b.getDenseI64ArrayAttr(d),
        b.getDenseI64ArrayAttr(pl), b.getDenseI64ArrayAttr(ph),
        b.getDenseI64ArrayAttr(outputPadding), op.getGroupAttr()));
    out.push_back(convFilterGradient(b, loc, x, g[0], wt, op.getGroup(), s, d, pl, ph));
    return success();
  }
};

/// conv_transpose of x [N, C, D...] by w [C, M/G, K...] in G groups is the
/// input gradient of a convolution from M to C channels in G groups by w
/// (whose layout is conv's [F, C/G, K...] for that convolution) with the
/// same stride, dilation and pads, so its own gradients are that
/// convolution's forward and filter gradient with the roles of input and
/// result swapped:
///   dX = conv(g, w) in G groups, cut to x's extent (output_padding >=
///        stride leaves rows no input row reached);
///   dW = conv_backward_filter(g, x).
/// output_padding needs no special case: conv(g, w) reads g over its whole
/// extent, the output_padding rows included, where the forward wrote.
struct ConvTransposeRule {
  LogicalResult operator()(OpBuilder &b, ConvTransposeOp op, ValueRange g,
                           SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    Value x = op.getInput(), w = op.getFilter();
    ArrayRef<int64_t> s = op.getStrides(), d = op.getDilations(), pl = op.getPadLow(),
                      ph = op.getPadHigh();
    Value dx = ConvOp::create(b, loc, g[0], w, b.getDenseI64ArrayAttr(s), b.getDenseI64ArrayAttr(d),
                              b.getDenseI64ArrayAttr(pl), b.getDenseI64ArrayAttr(ph),
                              op.getGroupAttr());
    out.push_back(cropTo(b, loc, dx, tensorType(x).getShape()));
    out.push_back(convFilterGradient(b, loc, g[0], x, tensorType(w), op.getGroup(), s, d, pl, ph));
    return success();
  }
};

/// conv_backward_filter dW = F(x, g) of x [N, C, D...] and g [N, M, O...] is
/// bilinear: given the gradient gW [M, C/G, K...] of dW,
///   dx = conv_transpose(g, gW) in G groups with the same stride, dilation
///        and pads, its output_padding making the result x's extent D;
///   dg = conv(x, gW), cut to g's extent O (the windows may fit more often).
struct ConvBackwardFilterRule {
  LogicalResult operator()(OpBuilder &b, ConvBackwardFilterOp op, ValueRange g,
                           SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    Value x = op.getInput(), dy = op.getGrad();
    RankedTensorType xt = tensorType(x), gt = tensorType(dy);
    ArrayRef<int64_t> k = op.getKernel(), s = op.getStrides(), d = op.getDilations(),
                      pl = op.getPadLow(), ph = op.getPadHigh();
    SmallVector<int64_t> outputPadding;
    for (size_t i = 0; i < k.size(); ++i)
      outputPadding.push_back(xt.getDimSize(2 + i) + pl[i] + ph[i] -
                              s[i] * (gt.getDimSize(2 + i) - 1) - d[i] * (k[i] - 1) - 1);
    out.push_back(ConvTransposeOp::create(
        b, loc, dy, g[0], b.getDenseI64ArrayAttr(s), b.getDenseI64ArrayAttr(d),
        b.getDenseI64ArrayAttr(pl), b.getDenseI64ArrayAttr(ph),
        b.getDenseI64ArrayAttr(outputPadding), op.getGroupAttr()));
    Value dg = ConvOp::create(b, loc, x, g[0], b.getDenseI64ArrayAttr(s), b.getDenseI64ArrayAttr(d),
                              b.getDenseI64ArrayAttr(pl), b.getDenseI64ArrayAttr(ph),
                              op.getGroupAttr());
    out.push_back(cropTo(b, loc, dg, gt.getShape()));
    return success();
  }
};

/// Where the windows of a pooling op read its input [N, C, D...] (as the
/// lowering reads it: padded by pad_low before and, past pad_high where
/// ceil_mode windows hang over, by what the windows reach after). For output
/// position o (row-major over the output's O...) and kernel offset k
/// (row-major over the kernel), window element o*s - pl + k*d is at
/// position[o * kernelSize + k] of a row-major [D...] plane, or at `padding`
/// (= the plane's size, one past it) where it lies outside the input.
template <typename OpTy>
struct PoolWindows {
  RankedTensorType xt, yt;
  int64_t spatial, plane = 1, outPlane = 1, kernelSize = 1, padding;
  SmallVector<int64_t> reach, position;

  explicit PoolWindows(OpTy op)
      : xt(tensorType(op.getInput())), yt(tensorType(op.getResult())), spatial(xt.getRank() - 2) {
    ArrayRef<int64_t> k = op.getKernel(), s = op.getStrides(), d = op.getDilations(),
                      pl = op.getPadLow();
    for (int64_t i = 0; i < spatial; ++i) {
      plane *= xt.getDimSize(2 + i);
      outPlane *= yt.getDimSize(2 + i);
      kernelSize *= k[i];
      int64_t last = (yt.getDimSize(2 + i) - 1) * s[i] + d[i] * (k[i] - 1) + 1;
      reach.push_back(std::max<int64_t>(0, last - xt.getDimSize(2 + i) - pl[i]));
    }
    padding = plane;
    ArrayRef<int64_t> in = xt.getShape().drop_front(2), out = yt.getShape().drop_front(2);
    for (int64_t o = 0; o < outPlane; ++o) {
      SmallVector<int64_t> oi = unflatten(o, out);
      for (int64_t kk = 0; kk < kernelSize; ++kk) {
        SmallVector<int64_t> ki = unflatten(kk, k);
        int64_t flat = 0;
        bool inside = true;
        for (int64_t j = 0; j < spatial; ++j) {
          int64_t pos = oi[j] * s[j] - pl[j] + ki[j] * d[j];
          inside &= pos >= 0 && pos < in[j];
          flat = flat * in[j] + pos;
        }
        position.push_back(inside ? flat : padding);
      }
    }
  }

  /// A [N, C, O...] tensor of element type ET from per-output values (a
  /// constant [O...] broadcast over batch and channels).
  Value perOutput(OpBuilder &b, Location loc, Type et, ArrayRef<Attribute> values) const {
    auto planeType = RankedTensorType::get(yt.getShape().drop_front(2), et);
    Value c = ConstantOp::create(b, loc, planeType, DenseElementsAttr::get(planeType, values));
    auto full = RankedTensorType::get(yt.getShape(), et);
    return BroadcastInDimOp::create(b, loc, full, c,
                                    b.getDenseI64ArrayAttr(llvm::to_vector(llvm::seq<int64_t>(2, yt.getRank()))));
  }

  /// Adds UPDATES [N, C, P] at the plane positions INDICES [N, C, P] of a
  /// zero [N, C, D...]; positions equal to `padding` land in an extra
  /// element that is cut off. scatter-add runs in index order, so this is
  /// deterministic.
  Value scatterAdd(OpBuilder &b, Location loc, Value indices, Value updates) const {
    Type et = xt.getElementType();
    int64_t n = xt.getDimSize(0), c = xt.getDimSize(1);
    auto withPadding = RankedTensorType::get({n, c, plane + 1}, et);
    Value zeros = splat(b, loc, withPadding, 0.0);
    Value sum = ScatterElementsOp::create(b, loc, withPadding, zeros, indices, updates,
                                          b.getI64IntegerAttr(2),
                                          ScatterReductionAttr::get(b.getContext(), ScatterReduction::add));
    sum = cropTo(b, loc, sum, {n, c, plane});
    return ReshapeOp::create(b, loc, xt, sum);
  }
};

/// max_pool, any windows (overlapping, padded, dilated, ceil_mode): each
/// window's gradient goes to ONE element, PyTorch's: the first maximum in
/// the window (row-major over the kernel); padding never wins. The winner's
/// position is found with tcc ops by walking the kernel offsets in order,
/// each a strided slice of the padded input (the values the window sees at
/// that offset), taking an element only if it is strictly greater than the
/// best so far; which offsets are padding, and which is a window's first
/// real one, is known at compile time. The gradient is then a scatter-add
/// of g at the winners. This is the adjoint of the lowering for any
/// geometry, costs kernel-size elementwise passes over the output plus one
/// pass over it to scatter, and needs no float equality with the result.
struct MaxPoolRule {
  LogicalResult operator()(OpBuilder &b, MaxPoolOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    if (!isFloatTensor(op.getInput()))
      return op.emitOpError("has no gradient for integer operands");
    PoolWindows<MaxPoolOp> w(op);
    RankedTensorType yt = w.yt;
    ArrayRef<int64_t> k = op.getKernel(), s = op.getStrides(), d = op.getDilations();
    // The padded input; its padding value is never read as a candidate.
    SmallVector<int64_t> low = {0, 0}, high = {0, 0};
    llvm::append_range(low, op.getPadLow());
    llvm::append_range(high, w.reach);
    Value xp = op.getInput();
    if (llvm::any_of(low, [](int64_t v) { return v != 0; }) ||
        llvm::any_of(high, [](int64_t v) { return v != 0; }))
      xp = PadOp::create(b, loc, xp, b.getDenseI64ArrayAttr(low), b.getDenseI64ArrayAttr(high),
                         PadModeAttr::get(b.getContext(), PadMode::constant), b.getF64FloatAttr(0.0));
    Type i64 = b.getI64Type(), i1 = b.getI1Type();
    // A window's first real offset: -1 if the window is all padding.
    SmallVector<int64_t> first(w.outPlane, -1);
    for (int64_t o = 0; o < w.outPlane; ++o)
      for (int64_t kk = w.kernelSize - 1; kk >= 0; --kk)
        if (w.position[o * w.kernelSize + kk] != w.padding)
          first[o] = kk;
    // A constant mask over the output plane, or null where it is all true.
    auto mask = [&](function_ref<bool(int64_t)> pred, bool &none) -> Value {
      SmallVector<Attribute> bits;
      bool all = true;
      none = true;
      for (int64_t o = 0; o < w.outPlane; ++o) {
        bool v = pred(o);
        all &= v;
        none &= !v;
        bits.push_back(b.getBoolAttr(v));
      }
      return all ? Value() : w.perOutput(b, loc, i1, bits);
    };
    Value best, winner;
    for (int64_t kk = 0; kk < w.kernelSize; ++kk) {
      SmallVector<int64_t> start = {0, 0}, stride = {1, 1}, offset = unflatten(kk, k);
      for (int64_t i = 0; i < w.spatial; ++i) {
        start.push_back(offset[i] * d[i]);
        stride.push_back(s[i]);
      }
      Value v = SliceOp::create(b, loc, yt, xp, b.getDenseI64ArrayAttr(start),
                                b.getDenseI64ArrayAttr(stride));
      SmallVector<Attribute> positions;
      for (int64_t o = 0; o < w.outPlane; ++o)
        positions.push_back(b.getI64IntegerAttr(w.position[o * w.kernelSize + kk]));
      Value at = w.perOutput(b, loc, i64, positions);
      if (kk == 0) {
        // Windows whose first real offset is later take it there.
        best = v;
        winner = at;
        continue;
      }
      bool noFirst, noLater;
      Value isFirst = mask([&](int64_t o) { return first[o] == kk; }, noFirst);
      Value isLater = mask([&](int64_t o) {
        return first[o] >= 0 && first[o] < kk && w.position[o * w.kernelSize + kk] != w.padding;
      }, noLater);
      if (noFirst && noLater)
        continue;
      if (!noFirst && !isFirst) {
        // Every window's first real element is here (one window, or windows
        // that all start in the padding): it is the candidate, whatever came
        // before was padding.
        best = v;
        winner = at;
        continue;
      }
      Value take = noLater ? Value() : CompareOp::create(b, loc, CmpPredicate::gt, v, best);
      if (!noLater && isLater)
        take = AndOp::create(b, loc, take, isLater);
      if (!noFirst)
        take = take ? Value(OrOp::create(b, loc, take, isFirst)) : isFirst;
      best = SelectOp::create(b, loc, take, v, best);
      winner = SelectOp::create(b, loc, take, at, winner);
    }
    int64_t n = yt.getDimSize(0), c = yt.getDimSize(1);
    Value indices = ReshapeOp::create(b, loc, RankedTensorType::get({n, c, w.outPlane}, i64), winner);
    Value updates = ReshapeOp::create(
        b, loc, RankedTensorType::get({n, c, w.outPlane}, yt.getElementType()), g[0]);
    out.push_back(w.scatterAdd(b, loc, indices, updates));
    return success();
  }
};

/// avg_pool, any windows: each window element inside the input gets
/// g / divisor, the divisor being the lowering's (AvgPoolLowering): per
/// spatial dimension, the window elements inside the input, or inside the
/// input and its explicit padding with count_include_pad (never the part of
/// a ceil_mode window past pad_high), at least 1, multiplied over the
/// dimensions. The adjoint is a scatter-add of g / divisor, repeated over the
/// kernel, at the window elements' positions (padding lands in the discarded
/// element): one pass over output x kernel, the forward's cost.
struct AvgPoolRule {
  LogicalResult operator()(OpBuilder &b, AvgPoolOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    if (!isFloatTensor(op.getInput()))
      return op.emitOpError("has no gradient for integer operands");
    PoolWindows<AvgPoolOp> w(op);
    RankedTensorType yt = w.yt;
    Type et = yt.getElementType();
    // 1 / divisor per output position, row-major over O...
    SmallVector<SmallVector<int64_t>> divisors;
    for (int64_t j = 0; j < w.spatial; ++j)
      divisors.push_back(lowering::avgPoolDivisors(op, j));
    SmallVector<Attribute> scale;
    for (int64_t o = 0; o < w.outPlane; ++o) {
      SmallVector<int64_t> oi = unflatten(o, yt.getShape().drop_front(2));
      int64_t divisor = 1;
      for (int64_t j = 0; j < w.spatial; ++j)
        divisor *= divisors[j][oi[j]];
      scale.push_back(FloatAttr::get(et, 1.0 / double(divisor)));
    }
    Value share = mul(b, loc, g[0], w.perOutput(b, loc, et, scale));
    // [N, C, O...] -> [N, C, O, 1] -> [N, C, O, K] -> [N, C, O * K]
    int64_t n = yt.getDimSize(0), c = yt.getDimSize(1), p = w.outPlane * w.kernelSize;
    share = ReshapeOp::create(b, loc, RankedTensorType::get({n, c, w.outPlane, 1}, et), share);
    share = BroadcastInDimOp::create(b, loc, RankedTensorType::get({n, c, w.outPlane, w.kernelSize}, et),
                                     share, b.getDenseI64ArrayAttr({0, 1, 2, 3}));
    share = ReshapeOp::create(b, loc, RankedTensorType::get({n, c, p}, et), share);
    auto posType = RankedTensorType::get({p}, b.getI64Type());
    Value positions = ConstantOp::create(
        b, loc, posType, DenseElementsAttr::get(posType, ArrayRef<int64_t>(w.position)));
    positions = BroadcastInDimOp::create(b, loc, RankedTensorType::get({n, c, p}, b.getI64Type()),
                                         positions, b.getDenseI64ArrayAttr({2}));
    out.push_back(w.scatterAdd(b, loc, positions, share));
    return success();
  }
};

/// layer_norm over axes [axis, rank): with xhat = (x - mean) rstd and
/// dxhat = g scale, dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
/// (means over the normalized axes); dscale = sum(g xhat), dbias = sum(g)
/// over the leading axes.
struct LayerNormRule {
  LogicalResult operator()(OpBuilder &b, LayerNormOp op, ValueRange g,
                           SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    if ((g[1] && !matchZero(g[1])) || (g[2] && !matchZero(g[2])))
      return op.emitOpError("gradient through the mean / inv_std_dev results is not implemented");
    Value x = op.getInput(), scale = op.getScale();
    RankedTensorType xt = tensorType(x);
    int64_t rank = xt.getRank(), axis = op.getAxis();
    if (tensorType(scale).getShape() != xt.getShape().drop_front(axis))
      return op.emitOpError("gradient needs a scale shaped like the normalized dimensions");
    SmallVector<int64_t> normAxes = llvm::to_vector(llvm::seq<int64_t>(axis, rank));
    SmallVector<int64_t> leadAxes = llvm::to_vector(llvm::seq<int64_t>(0, axis));
    SmallVector<int64_t> trailing = llvm::to_vector(llvm::seq<int64_t>(axis, rank));
    int64_t n = 1;
    for (int64_t a : normAxes)
      n *= xt.getDimSize(a);
    Value mean = expandTo(b, loc, op.getMean(), xt, normAxes);
    Value rstd = expandTo(b, loc, op.getInvStdDev(), xt, normAxes);
    Value xhat = mul(b, loc, sub(b, loc, x, mean), rstd);
    Value scaleFull = BroadcastInDimOp::create(b, loc, xt, scale, b.getDenseI64ArrayAttr(trailing));
    Value dxhat = mul(b, loc, g[0], scaleFull);
    auto meanN = [&](Value v) {
      Value s = expandTo(b, loc, sumKeep(b, loc, v, normAxes), xt, normAxes);
      return mul(b, loc, s, splat(b, loc, s, 1.0 / double(n)));
    };
    Value centered = sub(b, loc, dxhat, meanN(dxhat));
    Value inner = sub(b, loc, centered, mul(b, loc, xhat, meanN(mul(b, loc, dxhat, xhat))));
    out.push_back(mul(b, loc, rstd, inner));
    // Parameter gradients: sums over the leading axes, reshaped to the scale.
    auto sumLead = [&](Value v) -> Value {
      Value s = sumKeep(b, loc, v, leadAxes);
      if (tensorType(s) != tensorType(scale))
        s = ReshapeOp::create(b, loc, scale.getType(), s);
      return s;
    };
    out.push_back(sumLead(mul(b, loc, g[0], xhat)));
    if (op.getBias())
      out.push_back(sumLead(g[0]));
    return success();
  }

  /// A zero constant (what autodiff passes for results the loss ignores).
  static bool matchZero(Value v) {
    auto c = v.getDefiningOp<ConstantOp>();
    auto dense = c ? dyn_cast<DenseElementsAttr>(c.getValue()) : nullptr;
    return dense && dense.isSplat() && dense.getSplatValue<APFloat>().isZero();
  }
};

/// Per-channel views of a batch norm's input x [N, C, ...]: the reduced
/// axes {0, 2, 3, ...}, their element count, a [C] tensor broadcast to x's
/// shape, a sum over the reduced axes back to [C], and 1/sqrt(var + eps).
struct ChannelAxes {
  OpBuilder &b;
  Location loc;
  RankedTensorType xt;
  Type channelType;
  SmallVector<int64_t> axes = {0};
  int64_t count;

  ChannelAxes(OpBuilder &b, Location loc, Value x, Value channelLike)
      : b(b), loc(loc), xt(tensorType(x)), channelType(channelLike.getType()),
        count(xt.getDimSize(0)) {
    for (int64_t d = 2; d < xt.getRank(); ++d) {
      axes.push_back(d);
      count *= xt.getDimSize(d);
    }
  }
  Value full(Value perChannel) const {
    return BroadcastInDimOp::create(b, loc, xt, perChannel, b.getDenseI64ArrayAttr({1}));
  }
  /// The per-channel sum of V, accumulated in batchNormAccumulatorType.
  Value sum(Value v) const {
    auto vt = tensorType(v);
    Type et = vt.getElementType(), acc = batchNormAccumulatorType(et);
    if (acc == et)
      return ReshapeOp::create(b, loc, channelType, sumKeep(b, loc, v, axes));
    Value s = sumKeep(b, loc, CastOp::create(b, loc, vt.clone(acc), v), axes);
    s = CastOp::create(b, loc, tensorType(s).clone(et), s);
    return ReshapeOp::create(b, loc, channelType, s);
  }
  Value rstd(Value var, APFloat eps) const {
    return RsqrtOp::create(b, loc, add(b, loc, var, splat(b, loc, var, eps.convertToDouble())));
  }
};

/// batch_norm_training over axes {0, 2, 3, ...} per channel (axis 1), with
/// batch statistics: dx = scale rstd (g - mean(g) - xhat mean(g xhat)),
/// dscale = sum(g xhat), dbias = sum(g). The statistics results feed only
/// the running-statistics update, which carries no gradient.
struct BatchNormTrainingRule {
  LogicalResult operator()(OpBuilder &b, BatchNormTrainingOp op, ValueRange g,
                           SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    if ((g[1] && !LayerNormRule::matchZero(g[1])) || (g[2] && !LayerNormRule::matchZero(g[2])))
      return op.emitOpError("gradient through the batch statistics results is not implemented");
    Value x = op.getInput();
    ChannelAxes c(b, loc, x, op.getScale());
    Value rstdFull = c.full(c.rstd(op.getBatchVariance(), op.getEpsilon()));
    Value xhat = mul(b, loc, sub(b, loc, x, c.full(op.getBatchMean())), rstdFull);
    auto meanC = [&](Value v) {
      Value m = c.full(c.sum(v));
      return mul(b, loc, m, splat(b, loc, m, 1.0 / double(c.count)));
    };
    Value centered = sub(b, loc, g[0], meanC(g[0]));
    Value inner = sub(b, loc, centered, mul(b, loc, xhat, meanC(mul(b, loc, g[0], xhat))));
    out.push_back(mul(b, loc, mul(b, loc, c.full(op.getScale()), rstdFull), inner));
    out.push_back(c.sum(mul(b, loc, g[0], xhat)));
    out.push_back(c.sum(g[0]));
    return success();
  }
};

/// cumsum: each input element feeds every later (earlier, reversed)
/// output: the gradient is the cumulative sum of g in the other direction.
struct CumSumRule {
  LogicalResult operator()(OpBuilder &b, CumSumOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    if (!isFloatTensor(op.getInput()))
      return op.emitOpError("has no gradient for integer operands");
    out.push_back(CumSumOp::create(b, op.getLoc(), op.getType(), g[0], op.getAxisAttr(),
                                   op.getExclusiveAttr(), b.getBoolAttr(!op.getReverse())));
    return success();
  }
};

/// gather_elements: the gradient added back at the gathered positions.
struct GatherElementsRule {
  LogicalResult operator()(OpBuilder &b, GatherElementsOp op, ValueRange g,
                           SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    Value zeros = splat(b, loc, op.getInput(), 0.0);
    out.push_back(ScatterElementsOp::create(b, loc, op.getInput().getType(), zeros,
                                            op.getIndices(), g[0], op.getAxisAttr(),
                                            ScatterReductionAttr::get(b.getContext(),
                                                                      ScatterReduction::add)));
    out.push_back(Value());
    return success();
  }
};

/// reduce_max / reduce_min: the gradient shared equally by the elements
/// equal to the extremum (as PyTorch's amax / amin).
template <typename OpTy>
struct ExtremumReduceRule {
  LogicalResult operator()(OpBuilder &b, OpTy op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    Value x = op.getInput();
    if (!isFloatTensor(x))
      return op.emitOpError("has no gradient for integer operands");
    RankedTensorType xt = tensorType(x);
    ArrayRef<int64_t> axes = op.getAxes();
    Value hit = CompareOp::create(b, loc, CmpPredicate::eq, x, expandTo(b, loc, op.getResult(), xt, axes));
    Value one = splat(b, loc, x, 1.0);
    Value ones = SelectOp::create(b, loc, hit, one, splat(b, loc, x, 0.0));
    Value count = expandTo(b, loc, sumKeep(b, loc, ones, axes), xt, axes);
    Value share = div(b, loc, expandTo(b, loc, g[0], xt, axes), count);
    out.push_back(SelectOp::create(b, loc, hit, share, splat(b, loc, x, 0.0)));
    return success();
  }
};

/// batch_norm_inference: y = (x - mean) scale rsqrt(var + eps) + bias, all
/// per channel (axis 1); every operand gets its gradient.
struct BatchNormInferenceRule {
  LogicalResult operator()(OpBuilder &b, BatchNormInferenceOp op, ValueRange g,
                           SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    Value x = op.getInput(), scale = op.getScale();
    ChannelAxes c(b, loc, x, scale);
    Value r = c.rstd(op.getVariance(), op.getEpsilon());
    Value centered = sub(b, loc, x, c.full(op.getMean()));
    Value sr = mul(b, loc, scale, r); // per channel
    Value sumG = c.sum(g[0]), sumGC = c.sum(mul(b, loc, g[0], centered));
    Value r3 = mul(b, loc, r, mul(b, loc, r, r));
    out.push_back(mul(b, loc, g[0], c.full(sr)));                              // x
    out.push_back(mul(b, loc, sumGC, r));                                      // scale
    out.push_back(sumG);                                                       // bias
    out.push_back(neg(b, loc, mul(b, loc, sumG, sr)));                         // mean
    Value scaled = mul(b, loc, sumGC, scale);
    out.push_back(mul(b, loc, scaled, mul(b, loc, splat(b, loc, r3, -0.5), r3))); // variance
    return success();
  }
};

/// Where a scatter writes: GATHER(v) reads an input-shaped V at every
/// update's position (a value shaped like the updates), SCATTER(init, v, r)
/// scatters an updates-shaped V into INIT with reduction R at the same
/// positions (indices wrapped and clamped as the forward's).
struct ScatterSites {
  function_ref<Value(Value)> gather;
  function_ref<Value(Value, Value, ScatterReduction)> scatter;
};

/// The gradients (input, indices, updates) of a scatter of updates U into X
/// with reduction R giving Y, with G the gradient of Y:
///   none  dX = g with the written elements zeroed, dU = g at U's positions
///         (a repeated position, undefined in ONNX, where the lowering keeps
///         the last write, gives the gradient to every repeat);
///   add   dX = g, dU = g at U's positions;
///   max / min (as PyTorch's scatter_reduce amax / amin with include_self):
///         the gradient of each result element is shared equally by the
///         candidates equal to it, the input element and the updates
///         written there: with count = their number (a scatter-add of the
///         updates' hits into the input's), dX = g / count where X hits and
///         dU = (g / count at U's position) where U hits;
///   mul   dX = g * (the product of the updates written to each element, a
///         scatter-mul into ones); dU_j = g x prod_{k != j} U_k at U_j's
///         position, zero-safe as reduce_prod's rule: with P the product of
///         the non-zero updates at that position and Z their count of
///         zeros, prod_{k != j} U_k is P / U_j if Z = 0, P at the one zero
///         if Z = 1, and 0 otherwise.
void scatterGradients(OpBuilder &b, Location loc, ScatterReduction r, Value x, Value u, Value y,
                      Value g, const ScatterSites &at, SmallVectorImpl<Value> &out) {
  Value zeroX = splat(b, loc, x, 0.0), oneX = splat(b, loc, x, 1.0);
  Value zeroU = splat(b, loc, u, 0.0), oneU = splat(b, loc, u, 1.0);
  Value dx, du;
  switch (r) {
  case ScatterReduction::none:
    dx = at.scatter(g, zeroU, ScatterReduction::none);
    du = at.gather(g);
    break;
  case ScatterReduction::add:
    dx = g;
    du = at.gather(g);
    break;
  case ScatterReduction::max:
  case ScatterReduction::min: {
    Value hitX = CompareOp::create(b, loc, CmpPredicate::eq, x, y);
    Value hitU = CompareOp::create(b, loc, CmpPredicate::eq, u, at.gather(y));
    Value countX = SelectOp::create(b, loc, hitX, oneX, zeroX);
    Value countU = SelectOp::create(b, loc, hitU, oneU, zeroU);
    Value count = at.scatter(countX, countU, ScatterReduction::add);
    Value share = div(b, loc, g, count);
    dx = SelectOp::create(b, loc, hitX, share, zeroX);
    du = SelectOp::create(b, loc, hitU, at.gather(share), zeroU);
    break;
  }
  case ScatterReduction::mul: {
    dx = mul(b, loc, g, at.scatter(oneX, u, ScatterReduction::mul));
    Value isZero = CompareOp::create(b, loc, CmpPredicate::eq, u, zeroU);
    Value nonZero = SelectOp::create(b, loc, isZero, oneU, u);
    Value p = at.gather(at.scatter(oneX, nonZero, ScatterReduction::mul));
    Value z = at.gather(at.scatter(zeroX, SelectOp::create(b, loc, isZero, oneU, zeroU),
                                   ScatterReduction::add));
    Value none = CompareOp::create(b, loc, CmpPredicate::eq, z, zeroU);
    Value single = CompareOp::create(b, loc, CmpPredicate::eq, z, oneU);
    Value atZero = SelectOp::create(b, loc, single, SelectOp::create(b, loc, isZero, p, zeroU), zeroU);
    Value others = SelectOp::create(b, loc, none, div(b, loc, p, nonZero), atZero);
    du = mul(b, loc, at.gather(mul(b, loc, g, x)), others);
    break;
  }
  }
  out.append({dx, Value(), du});
}

/// scatter_elements: scatterGradients, reading with gather_elements.
struct ScatterElementsRule {
  LogicalResult operator()(OpBuilder &b, ScatterElementsOp op, ValueRange g,
                           SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    auto gather = [&](Value v) -> Value {
      return GatherElementsOp::create(b, loc, op.getUpdates().getType(), v, op.getIndices(),
                                      op.getAxisAttr());
    };
    auto scatter = [&](Value init, Value v, ScatterReduction r) -> Value {
      return ScatterElementsOp::create(b, loc, init.getType(), init, op.getIndices(), v,
                                       op.getAxisAttr(), ScatterReductionAttr::get(b.getContext(), r));
    };
    scatterGradients(b, loc, op.getReduction(), op.getInput(), op.getUpdates(), op.getResult(), g[0],
                     {gather, scatter}, out);
    return success();
  }
};

/// scatter_nd: scatterGradients, reading with buildGatherNd.
struct ScatterNdRule {
  LogicalResult operator()(OpBuilder &b, ScatterNdOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    auto gather = [&](Value v) -> Value {
      return buildGatherNd(b, loc, v, op.getIndices());
    };
    auto scatter = [&](Value init, Value v, ScatterReduction r) -> Value {
      return ScatterNdOp::create(b, loc, tensorType(init), init, op.getIndices(), v, r);
    };
    scatterGradients(b, loc, op.getReduction(), op.getInput(), op.getUpdates(), op.getResult(), g[0],
                     {gather, scatter}, out);
    return success();
  }
};

/// dropout: the identity without RNG state; in training, g where the mask
/// kept the element, times 1 / (1 - ratio), and zero elsewhere.
struct DropoutRule {
  LogicalResult operator()(OpBuilder &b, DropoutOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    if (!op.getRng()) {
      out.push_back(g[0]);
      return success();
    }
    double scale = 1.0 / (1.0 - op.getRatio().convertToDouble());
    Value scaled = mul(b, loc, g[0], splat(b, loc, g[0], scale));
    out.append({SelectOp::create(b, loc, op.getMask(), scaled, splat(b, loc, g[0], 0.0)), Value()});
    return success();
  }
};

/// nll_loss (classes on dimension 1): each counted position contributes
/// -weight[t] * G to input[n, t, d..], with G = g (none), g (sum) or
/// g / sum of the counted weights (mean).
struct NllLossRule {
  LogicalResult operator()(OpBuilder &b, NllLossOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    if (op.getWeight() && isa<BlockArgument>(op.getWeight()))
      return op.emitOpError("gradient with respect to class weights is not implemented");
    Value input = op.getInput(), target = op.getTarget();
    RankedTensorType it = tensorType(input), tt = tensorType(target);
    int64_t rank = it.getRank();
    Type et = it.getElementType();
    // Per-position weight, zero where the target is ignored.
    auto posType = RankedTensorType::get(tt.getShape(), et);
    Value w = op.getWeight()
                  ? Value(GatherOp::create(b, loc, posType, op.getWeight(), target,
                                           b.getI64IntegerAttr(0)))
                  : splat(b, loc, posType, 1.0);
    if (auto ignore = op.getIgnoreIndex()) {
      auto ignoreType = RankedTensorType::get(tt.getShape(), tt.getElementType());
      Value ii = ConstantOp::create(b, loc, ignoreType,
                                    DenseElementsAttr::get(ignoreType, IntegerAttr::get(
                                        tt.getElementType(), *ignore)));
      Value counted = CompareOp::create(b, loc, CmpPredicate::ne, target, ii);
      w = SelectOp::create(b, loc, counted, w, splat(b, loc, w, 0.0));
    }
    Value coef;
    switch (op.getReduction()) {
    case LossReduction::none:
      coef = mul(b, loc, w, g[0]);
      break;
    case LossReduction::sum:
      coef = mul(b, loc, w, BroadcastInDimOp::create(b, loc, posType, g[0], b.getDenseI64ArrayAttr({})));
      break;
    case LossReduction::mean: {
      auto axes = llvm::to_vector(llvm::seq<int64_t>(0, tt.getRank()));
      Value total = ReduceSumOp::create(b, loc, w, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
      Value scale = div(b, loc, g[0], total);
      coef = mul(b, loc, w, BroadcastInDimOp::create(b, loc, posType, scale, b.getDenseI64ArrayAttr({})));
      break;
    }
    }
    // -coef at input[n, target[n, d..], d..].
    SmallVector<int64_t> positionDims = {0};
    for (int64_t d = 2; d < rank; ++d)
      positionDims.push_back(d);
    Value hit = buildLabelMatch(b, loc, target, it, 1);
    Value spread = BroadcastInDimOp::create(b, loc, it, neg(b, loc, coef),
                                            b.getDenseI64ArrayAttr(positionDims));
    out.push_back(SelectOp::create(b, loc, hit, spread, splat(b, loc, input, 0.0)));
    out.push_back(Value());
    if (op.getWeight())
      out.push_back(Value());
    return success();
  }
};

/// reduce_prod, zero-safe: with p the product of the non-zero elements of
/// a reduced group and z its count of zeros, d/dx_i is p / x_i when z = 0,
/// p at the one zero when z = 1 (0 elsewhere), and 0 when z >= 2.
struct ReduceProdRule {
  LogicalResult operator()(OpBuilder &b, ReduceProdOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    Value x = op.getInput();
    if (!isFloatTensor(x))
      return op.emitOpError("has no gradient for integer operands");
    RankedTensorType xt = tensorType(x);
    ArrayRef<int64_t> axes = op.getAxes();
    Value zero = splat(b, loc, x, 0.0), one = splat(b, loc, x, 1.0);
    Value isZero = CompareOp::create(b, loc, CmpPredicate::eq, x, zero);
    Value nonZero = SelectOp::create(b, loc, isZero, one, x);
    Value prod = expandTo(b, loc,
                          ReduceProdOp::create(b, loc, nonZero, b.getDenseI64ArrayAttr(axes),
                                               b.getBoolAttr(true)),
                          xt, axes);
    Value zeros = expandTo(b, loc, sumKeep(b, loc, SelectOp::create(b, loc, isZero, one, zero), axes),
                           xt, axes);
    Value none = CompareOp::create(b, loc, CmpPredicate::eq, zeros, zero);
    Value single = CompareOp::create(b, loc, CmpPredicate::eq, zeros, one);
    Value atZero = SelectOp::create(b, loc, single, SelectOp::create(b, loc, isZero, prod, zero), zero);
    Value d = SelectOp::create(b, loc, none, div(b, loc, prod, nonZero), atZero);
    out.push_back(mul(b, loc, expandTo(b, loc, g[0], xt, axes), d));
    return success();
  }
};

/// Row O of resize's interpolation matrix along one dimension: the weight of
/// each input element in output O (the lowering's taps), zero where
/// tf_crop_and_resize extrapolates (a constant).
SmallVector<double> resizeRow(ResizeOp op, int64_t o, int64_t in, int64_t outSize, double scale,
                              double roiStart, double roiEnd) {
  SmallVector<double> row(in, 0.0);
  lowering::ResizeTaps taps =
      lowering::computeResizeTaps(op, o, in, outSize, scale, roiStart, roiEnd);
  if (taps.valid)
    for (auto [i, w] : llvm::zip(taps.index, taps.weight))
      row[i] += w;
  return row;
}

/// Applies M [out, in] to G along AXIS (of size out): the result has size
/// in there, result[.., i, ..] = sum_o M[o, i] g[.., o, ..]. AXIS goes
/// last, the rest flattens to rows, and one matmul by M does it.
Value applyAlongAxis(OpBuilder &b, Location loc, Value g, int64_t axis, Value m) {
  RankedTensorType gt = tensorType(g);
  int64_t rank = gt.getRank(), out = gt.getDimSize(axis), in = tensorType(m).getDimSize(1);
  Type et = gt.getElementType();
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  bool moved = axis != rank - 1;
  if (moved)
    g = TransposeOp::create(b, loc, g, b.getDenseI64ArrayAttr(perm));
  SmallVector<int64_t> shape(tensorType(g).getShape());
  int64_t rows = gt.getNumElements() / out;
  Value flat = ReshapeOp::create(b, loc, RankedTensorType::get({rows, out}, et), g);
  Value r = MatmulOp::create(b, loc, flat, m);
  shape.back() = in;
  r = ReshapeOp::create(b, loc, RankedTensorType::get(shape, et), r);
  if (!moved)
    return r;
  SmallVector<int64_t> inverse(rank);
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = int64_t(i);
  return TransposeOp::create(b, loc, r, b.getDenseI64ArrayAttr(inverse));
}

/// resize: the lowering samples each dimension with its own fixed taps and
/// multiplies the per-dimension weights (nearest: one tap of weight 1;
/// tf_crop_and_resize: a constant wherever any dimension extrapolates), so
/// y = (M_0 x M_1 x ...) x for per-dimension [out, in] matrices M_d, and
/// dX = g with M_d^T applied along each resampled dimension d in turn (the
/// order does not matter). M_d is computed here as the lowering computes its
/// taps; dimensions the lowering passes through are skipped.
struct ResizeRule {
  LogicalResult operator()(OpBuilder &b, ResizeOp op, ValueRange g, SmallVectorImpl<Value> &out) const {
    Location loc = op.getLoc();
    if (!isFloatTensor(op.getInput()))
      return op.emitOpError("has no gradient for integer operands");
    RankedTensorType xt = tensorType(op.getInput()), yt = tensorType(op.getResult());
    int64_t rank = xt.getRank();
    std::optional<ArrayRef<double>> roi = op.getRoi();
    Value grad = g[0];
    for (int64_t d = 0; d < rank; ++d) {
      int64_t in = xt.getDimSize(d), outSize = yt.getDimSize(d);
      double rs = roi ? (*roi)[d] : 0.0, re = roi ? (*roi)[rank + d] : 1.0;
      SmallVector<Attribute> m;
      bool identity = in == outSize;
      for (int64_t o = 0; o < outSize; ++o) {
        SmallVector<double> row = resizeRow(op, o, in, outSize, op.getScales()[d], rs, re);
        for (int64_t i = 0; i < in; ++i) {
          identity &= row[i] == (i == o ? 1.0 : 0.0);
          m.push_back(FloatAttr::get(xt.getElementType(), row[i]));
        }
      }
      if (identity)
        continue;
      auto mType = RankedTensorType::get({outSize, in}, xt.getElementType());
      Value mat = ConstantOp::create(b, loc, mType, DenseElementsAttr::get(mType, m));
      grad = applyAlongAxis(b, loc, grad, d, mat);
    }
    out.push_back(grad);
    return success();
  }
};

template <typename OpTy, typename Rule>
void attach(MLIRContext *ctx) {
  OpTy::template attachInterface<Gradient<OpTy, Rule>>(*ctx);
}

} // namespace

Value tcc::buildLabelMatch(OpBuilder &b, Location loc, Value labels, RankedTensorType scores,
                           int64_t classAxis) {
  RankedTensorType lt = tensorType(labels);
  int64_t classes = scores.getDimSize(classAxis);
  auto classType = RankedTensorType::get({classes}, lt.getElementType());
  SmallVector<APInt> ids;
  for (int64_t c = 0; c < classes; ++c)
    ids.push_back(APInt(lt.getElementTypeBitWidth(), uint64_t(c)));
  auto full = RankedTensorType::get(scores.getShape(), lt.getElementType());
  Value classIds = BroadcastInDimOp::create(
      b, loc, full, ConstantOp::create(b, loc, classType, DenseElementsAttr::get(classType, ids)),
      b.getDenseI64ArrayAttr({classAxis}));
  SmallVector<int64_t> labelDims;
  for (int64_t d = 0; d < scores.getRank(); ++d)
    if (d != classAxis)
      labelDims.push_back(d);
  Value labelsFull = BroadcastInDimOp::create(b, loc, full, labels, b.getDenseI64ArrayAttr(labelDims));
  return CompareOp::create(b, loc, CmpPredicate::eq, classIds, labelsFull);
}

void tcc::registerGradientRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TccDialect *) {
    attach<NegOp, NegRule>(ctx);
    attach<AbsOp, AbsRule>(ctx);
    attach<ExpOp, UnaryRule<ExpOp, dExp>>(ctx);
    attach<LogOp, UnaryRule<LogOp, dLog>>(ctx);
    attach<SqrtOp, UnaryRule<SqrtOp, dSqrt>>(ctx);
    attach<RsqrtOp, UnaryRule<RsqrtOp, dRsqrt>>(ctx);
    attach<ReciprocalOp, UnaryRule<ReciprocalOp, dReciprocal>>(ctx);
    attach<TanhOp, UnaryRule<TanhOp, dTanh>>(ctx);
    attach<SigmoidOp, UnaryRule<SigmoidOp, dSigmoid>>(ctx);
    attach<ErfOp, UnaryRule<ErfOp, dErf>>(ctx);
    attach<SinOp, UnaryRule<SinOp, dSin>>(ctx);
    attach<CosOp, UnaryRule<CosOp, dCos>>(ctx);
    attach<TanOp, UnaryRule<TanOp, dTan>>(ctx);
    attach<AsinOp, UnaryRule<AsinOp, dAsin>>(ctx);
    attach<AcosOp, UnaryRule<AcosOp, dAcos>>(ctx);
    attach<AtanOp, UnaryRule<AtanOp, dAtan>>(ctx);
    attach<SinhOp, UnaryRule<SinhOp, dSinh>>(ctx);
    attach<CoshOp, UnaryRule<CoshOp, dCosh>>(ctx);
    attach<AsinhOp, UnaryRule<AsinhOp, dAsinh>>(ctx);
    attach<AcoshOp, UnaryRule<AcoshOp, dAcosh>>(ctx);
    attach<AtanhOp, UnaryRule<AtanhOp, dAtanh>>(ctx);
    attach<ReluOp, ReluRule>(ctx);
    attach<SignOp, ZeroRule<SignOp>>(ctx);
    attach<FloorOp, ZeroRule<FloorOp>>(ctx);
    attach<CeilOp, ZeroRule<CeilOp>>(ctx);
    attach<RoundOp, ZeroRule<RoundOp>>(ctx);
    attach<AddOp, AddRule>(ctx);
    attach<SubOp, SubRule>(ctx);
    attach<MulOp, MulRule>(ctx);
    attach<DivOp, DivRule>(ctx);
    attach<PowOp, PowRule>(ctx);
    attach<MaxOp, ExtremumRule<MaxOp, CmpPredicate::ge>>(ctx);
    attach<MinOp, ExtremumRule<MinOp, CmpPredicate::le>>(ctx);
    attach<SelectOp, SelectRule>(ctx);
    attach<CastOp, CastRule>(ctx);
    attach<BroadcastInDimOp, BroadcastRule>(ctx);
    attach<ReshapeOp, ReshapeRule>(ctx);
    attach<TransposeOp, TransposeRule>(ctx);
    attach<ReduceSumOp, ReduceRule<ReduceSumOp, false>>(ctx);
    attach<ReduceMeanOp, ReduceRule<ReduceMeanOp, true>>(ctx);
    attach<MatmulOp, MatmulRule>(ctx);
    attach<SoftmaxOp, SoftmaxRule<SoftmaxOp, false>>(ctx);
    attach<LogSoftmaxOp, SoftmaxRule<LogSoftmaxOp, true>>(ctx);
    attach<ClampOp, ClampRule>(ctx);
    attach<SliceOp, SliceRule>(ctx);
    attach<PadOp, PadRule>(ctx);
    attach<ConcatOp, ConcatRule>(ctx);
    attach<GatherOp, GatherRule>(ctx);
    attach<ConvOp, ConvRule>(ctx);
    attach<ConvTransposeOp, ConvTransposeRule>(ctx);
    attach<ConvBackwardFilterOp, ConvBackwardFilterRule>(ctx);
    attach<MaxPoolOp, MaxPoolRule>(ctx);
    attach<AvgPoolOp, AvgPoolRule>(ctx);
    attach<LayerNormOp, LayerNormRule>(ctx);
    attach<BatchNormTrainingOp, BatchNormTrainingRule>(ctx);
    attach<CumSumOp, CumSumRule>(ctx);
    attach<GatherElementsOp, GatherElementsRule>(ctx);
    attach<ReduceMaxOp, ExtremumReduceRule<ReduceMaxOp>>(ctx);
    attach<ReduceMinOp, ExtremumReduceRule<ReduceMinOp>>(ctx);
    attach<BatchNormInferenceOp, BatchNormInferenceRule>(ctx);
    attach<ScatterElementsOp, ScatterElementsRule>(ctx);
    attach<ScatterNdOp, ScatterNdRule>(ctx);
    attach<NllLossOp, NllLossRule>(ctx);
    attach<DropoutOp, DropoutRule>(ctx);
    attach<ReduceProdOp, ReduceProdRule>(ctx);
    attach<ResizeOp, ResizeRule>(ctx);
  });
}
