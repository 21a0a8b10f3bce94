//===- Common.cpp - helpers shared by the tcc -> linalg patterns ----------===//
//
// The type converter and the small builders that every pattern file uses.
// Scalar semantics that several ops share (NaN-propagating max, division that
// never traps, tcc.cast's conversion rules, index wrapping) live here once.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Patterns.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;

namespace tcc::lowering {

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

SignlessTypeConverter::SignlessTypeConverter() {
  addConversion([](Type t) { return t; });
  addConversion([](IntegerType t) -> Type {
    if (t.isUnsigned())
      return IntegerType::get(t.getContext(), t.getWidth());
    return t;
  });
  addConversion([this](RankedTensorType t) -> Type {
    Type e = convertType(t.getElementType());
    if (!e)
      return {};
    return RankedTensorType::get(t.getShape(), e, t.getEncoding());
  });
}

ElemKind elemKind(Type tccType) {
  Type t = getElementTypeOrSelf(tccType);
  ElemKind k;
  if (isa<FloatType>(t)) {
    k.type = t;
    k.isFloat = true;
    return k;
  }
  auto it = cast<IntegerType>(t);
  k.type = IntegerType::get(t.getContext(), it.getWidth());
  k.isBool = it.getWidth() == 1;
  // i1 behaves as unsigned: true is 1, not -1, when it is widened or
  // converted to a float.
  k.isUnsigned = it.isUnsigned() || k.isBool;
  return k;
}

RankedTensorType convertedTensorType(const TypeConverter &tc, Type t) {
  return cast<RankedTensorType>(tc.convertType(t));
}

//===----------------------------------------------------------------------===//
// Constants and scalar helpers
//===----------------------------------------------------------------------===//

Value scalarConst(OpBuilder &b, Location loc, Type type, double v) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, v));
  if (type.isIndex())
    return indexConst(b, loc, int64_t(v));
  return intConst(b, loc, type, int64_t(v));
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value intConst(OpBuilder &b, Location loc, Type type, int64_t v) {
  if (type.isIndex())
    return indexConst(b, loc, v);
  unsigned w = cast<IntegerType>(type).getWidth();
  APInt value(w, uint64_t(v), /*isSigned=*/true, /*implicitTrunc=*/true);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

Value lowestValue(OpBuilder &b, Location loc, const ElemKind &k) {
  if (k.isFloat)
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(
            k.type, APFloat::getInf(cast<FloatType>(k.type).getFloatSemantics(),
                                    /*Negative=*/true)));
  unsigned w = k.type.getIntOrFloatBitWidth();
  APInt v = k.isUnsigned ? APInt::getMinValue(w) : APInt::getSignedMinValue(w);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(k.type, v));
}

Value highestValue(OpBuilder &b, Location loc, const ElemKind &k) {
  if (k.isFloat)
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(
            k.type, APFloat::getInf(cast<FloatType>(k.type).getFloatSemantics(),
                                    /*Negative=*/false)));
  unsigned w = k.type.getIntOrFloatBitWidth();
  APInt v = k.isUnsigned ? APInt::getMaxValue(w) : APInt::getSignedMaxValue(w);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(k.type, v));
}

Value addScalar(OpBuilder &b, Location loc, const ElemKind &k, Value x,
                Value y) {
  if (k.isFloat)
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

Value mulScalar(OpBuilder &b, Location loc, const ElemKind &k, Value x,
                Value y) {
  if (k.isFloat)
    return arith::MulFOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}

Value maxScalar(OpBuilder &b, Location loc, const ElemKind &k, Value x,
                Value y) {
  if (k.isFloat)
    return arith::MaximumFOp::create(b, loc, x, y);
  if (k.isUnsigned)
    return arith::MaxUIOp::create(b, loc, x, y);
  return arith::MaxSIOp::create(b, loc, x, y);
}

Value minScalar(OpBuilder &b, Location loc, const ElemKind &k, Value x,
                Value y) {
  if (k.isFloat)
    return arith::MinimumFOp::create(b, loc, x, y);
  if (k.isUnsigned)
    return arith::MinUIOp::create(b, loc, x, y);
  return arith::MinSIOp::create(b, loc, x, y);
}

Value divScalar(OpBuilder &b, Location loc, const ElemKind &k, Value x,
                Value y) {
  if (k.isFloat)
    return arith::DivFOp::create(b, loc, x, y);
  // Integer division by zero (and INT_MIN / -1) is undefined in LLVM and
  // traps on x86; a compiled model must not crash on data, so the divisor is
  // made safe and x / 0 is defined as 0 (what numpy returns).
  Value zero = intConst(b, loc, k.type, 0);
  Value one = intConst(b, loc, k.type, 1);
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, zero);
  Value unsafe = isZero;
  if (!k.isUnsigned) {
    Value minusOne = intConst(b, loc, k.type, -1);
    unsigned w = k.type.getIntOrFloatBitWidth();
    Value intMin = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(k.type, APInt::getSignedMinValue(w)));
    Value isMin = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, intMin);
    Value isMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, minusOne);
    Value overflow = arith::AndIOp::create(b, loc, isMin, isMinusOne);
    unsafe = arith::OrIOp::create(b, loc, isZero, overflow);
  }
  Value safeY = arith::SelectOp::create(b, loc, unsafe, one, y);
  Value q = k.isUnsigned ? Value(arith::DivUIOp::create(b, loc, x, safeY))
                         : Value(arith::DivSIOp::create(b, loc, x, safeY));
  return arith::SelectOp::create(b, loc, isZero, zero, q);
}

Value castScalar(OpBuilder &b, Location loc, Value v, const ElemKind &from,
                 const ElemKind &to) {
  Type toType = to.type;
  if (from.isFloat && to.isFloat) {
    unsigned fw = from.type.getIntOrFloatBitWidth();
    unsigned tw = toType.getIntOrFloatBitWidth();
    if (from.type == toType)
      return v;
    if (fw < tw)
      return arith::ExtFOp::create(b, loc, toType, v);
    if (fw > tw)
      return arith::TruncFOp::create(b, loc, toType, v);
    // Same width, different format (f16 <-> bf16): go through f32, which
    // holds both exactly; the final truncation rounds to nearest even.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return arith::TruncFOp::create(b, loc, toType, wide);
  }
  if (from.isFloat) {
    if (to.isBool) {
      // x != 0; NaN is unordered and therefore "not equal": true.
      Value zero = scalarConst(b, loc, from.type, 0.0);
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v, zero);
    }
    // Truncation toward zero; out-of-range values have no defined result.
    if (to.isUnsigned)
      return arith::FPToUIOp::create(b, loc, toType, v);
    return arith::FPToSIOp::create(b, loc, toType, v);
  }
  if (to.isFloat) {
    if (from.isUnsigned)
      return arith::UIToFPOp::create(b, loc, toType, v);
    return arith::SIToFPOp::create(b, loc, toType, v);
  }
  // Integer to integer.
  if (to.isBool) {
    if (from.isBool)
      return v;
    Value zero = intConst(b, loc, from.type, 0);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
  }
  unsigned fw = from.type.getIntOrFloatBitWidth();
  unsigned tw = toType.getIntOrFloatBitWidth();
  if (fw == tw)
    return v;
  if (fw > tw)
    return arith::TruncIOp::create(b, loc, toType, v);
  if (from.isUnsigned)
    return arith::ExtUIOp::create(b, loc, toType, v);
  return arith::ExtSIOp::create(b, loc, toType, v);
}

Value wrapAndClampIndex(OpBuilder &b, Location loc, Value idx, int64_t size) {
  Value i =
      idx.getType().isIndex()
          ? idx
          : Value(arith::IndexCastOp::create(b, loc, b.getIndexType(), idx));
  Value zero = indexConst(b, loc, 0);
  Value n = indexConst(b, loc, size);
  Value isNeg =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
  Value wrapped = arith::SelectOp::create(
      b, loc, isNeg, arith::AddIOp::create(b, loc, i, n), i);
  Value lo = arith::MaxSIOp::create(b, loc, wrapped, zero);
  return arith::MinSIOp::create(
      b, loc, lo, indexConst(b, loc, std::max<int64_t>(size - 1, 0)));
}

//===----------------------------------------------------------------------===//
// Tensors and linalg
//===----------------------------------------------------------------------===//

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> v) {
  SmallVector<OpFoldResult> out;
  for (int64_t x : v)
    out.push_back(b.getIndexAttr(x));
  return out;
}

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value copyThroughMap(OpBuilder &b, Location loc, Value in, AffineMap read,
                     ArrayRef<int64_t> shape) {
  Value init = emptyTensor(b, loc, shape, cast<RankedTensorType>(in.getType()).getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{in}, ValueRange{init},
             SmallVector<AffineMap>{read, b.getMultiDimIdentityMap(shape.size())},
             parallelIterators(shape.size()),
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      ->getResult(0);
}

Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Value scalar) {
  Value empty = emptyTensor(b, loc, shape, scalar.getType());
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{empty})
      .getResult(0);
}

/// Reassociation that collapses all of `rank` dimensions into one.
static SmallVector<ReassociationIndices> allInOne(int64_t rank) {
  ReassociationIndices all;
  for (int64_t i = 0; i < rank; ++i)
    all.push_back(i);
  return {all};
}

Value reshapeTo(OpBuilder &b, Location loc, Value v, RankedTensorType type) {
  auto src = cast<RankedTensorType>(v.getType());
  if (src == type)
    return v;
  ArrayRef<int64_t> from = src.getShape(), to = type.getShape();
  // A tensor without elements has no data to move.
  if (src.getNumElements() == 0)
    return emptyTensor(b, loc, to, type.getElementType());
  if (src.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, type, v,
                                         ArrayRef<ReassociationIndices>{});
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, v,
                                           ArrayRef<ReassociationIndices>{});
  if (type.getRank() < src.getRank())
    if (auto r = getReassociationIndicesForCollapse(from, to))
      return tensor::CollapseShapeOp::create(b, loc, type, v, *r);
  if (type.getRank() > src.getRank())
    if (auto r = getReassociationIndicesForCollapse(to, from))
      return tensor::ExpandShapeOp::create(b, loc, type, v, *r);
  // No single reassociation (e.g. 2x3 -> 3x2): go through 1-D.
  auto flatType =
      RankedTensorType::get({src.getNumElements()}, src.getElementType());
  Value flat = v;
  if (src.getRank() != 1)
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, v,
                                           allInOne(src.getRank()));
  if (type.getRank() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       allInOne(type.getRank()));
}

SmallVector<utils::IteratorType> parallelIterators(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

Value mapElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                     ValueRange inputs, ScalarFn fn) {
  unsigned rank = resultType.getRank();
  Value init =
      emptyTensor(b, loc, resultType.getShape(), resultType.getElementType());
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps,
      parallelIterators(rank),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value r = fn(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, r);
      });
  return generic.getResult(0);
}

AffineMap dropDimsMap(MLIRContext *ctx, unsigned rank,
                      ArrayRef<int64_t> dropped) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < rank; ++d)
    if (!llvm::is_contained(dropped, int64_t(d)))
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

SmallVector<int64_t> dropDims(ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> dropped) {
  SmallVector<int64_t> out;
  for (auto [d, s] : llvm::enumerate(shape))
    if (!llvm::is_contained(dropped, int64_t(d)))
      out.push_back(s);
  return out;
}

} // namespace tcc::lowering
