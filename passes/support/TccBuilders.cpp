//===- TccBuilders.cpp - short builders of tcc ops on tensors -------------===//

#include "passes/support/TccBuilders.h"

#include "dialects/TccOps.h"

using namespace mlir;

Value tcc::splat(OpBuilder &b, Location loc, RankedTensorType type, double v) {
  return ConstantOp::create(b, loc, type,
                            DenseElementsAttr::get(type, FloatAttr::get(type.getElementType(), v)));
}

Value tcc::splat(OpBuilder &b, Location loc, Value like, double v) {
  return splat(b, loc, cast<RankedTensorType>(like.getType()), v);
}

Value tcc::add(OpBuilder &b, Location loc, Value x, Value y) { return AddOp::create(b, loc, x, y); }
Value tcc::sub(OpBuilder &b, Location loc, Value x, Value y) { return SubOp::create(b, loc, x, y); }
Value tcc::mul(OpBuilder &b, Location loc, Value x, Value y) { return MulOp::create(b, loc, x, y); }
Value tcc::div(OpBuilder &b, Location loc, Value x, Value y) { return DivOp::create(b, loc, x, y); }
Value tcc::neg(OpBuilder &b, Location loc, Value x) { return NegOp::create(b, loc, x); }
