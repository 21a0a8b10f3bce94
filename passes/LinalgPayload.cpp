//===- LinalgPayload.cpp - a linalg op's body at one point of its loops ---===//

#include "passes/LinalgPayload.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

SmallVector<Value> tcc::emitLinalgPayload(OpBuilder &b, Location loc, linalg::LinalgOp op,
                                          ValueRange ivs, ValueRange outs) {
  SmallVector<Value> ins;
  Block *body = op.getBlock();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value v = in->get();
    if (body->getArgument(in->getOperandNumber()).use_empty() || !isa<MemRefType>(v.getType())) {
      ins.push_back(nullptr);
      continue;
    }
    auto indices = affine::expandAffineMap(b, loc, maps[in->getOperandNumber()], ivs);
    ins.push_back(memref::LoadOp::create(b, loc, v, *indices));
  }
  return cloneLinalgBody(b, loc, op, ivs, ins, outs);
}

SmallVector<Value> tcc::cloneLinalgBody(OpBuilder &b, Location loc, linalg::LinalgOp op,
                                        ValueRange ivs, ValueRange ins, ValueRange outs) {
  IRMapping map;
  Block *body = op.getBlock();
  for (auto [in, v] : llvm::zip(op.getDpsInputOperands(), ins)) {
    BlockArgument arg = body->getArgument(in->getOperandNumber());
    if (v)
      map.map(arg, v);
    else if (!isa<MemRefType>(in->get().getType()))
      map.map(arg, in->get()); // a scalar operand is the argument's value
  }
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable()))
    if (outs[i])
      map.map(body->getArgument(init.getOperandNumber()), outs[i]);
  for (Operation &o : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(o)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(o, map);
  }
  SmallVector<Value> results;
  for (Value v : body->getTerminator()->getOperands())
    results.push_back(map.lookupOrDefault(v));
  return results;
}

SmallVector<Value> tcc::loadLinalgOutputs(OpBuilder &b, Location loc, linalg::LinalgOp op,
                                          ValueRange ivs) {
  SmallVector<Value> outs;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (op.getBlock()->getArgument(init.getOperandNumber()).use_empty()) {
      outs.push_back(nullptr);
      continue;
    }
    auto indices = affine::expandAffineMap(b, loc, maps[init.getOperandNumber()], ivs);
    outs.push_back(memref::LoadOp::create(b, loc, init.get(), *indices));
  }
  return outs;
}

void tcc::storeLinalgOutputs(OpBuilder &b, Location loc, linalg::LinalgOp op, ValueRange ivs,
                             ValueRange values) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (auto [init, v] : llvm::zip(op.getDpsInitsMutable(), values)) {
    auto indices = affine::expandAffineMap(b, loc, maps[init.getOperandNumber()], ivs);
    memref::StoreOp::create(b, loc, v, init.get(), *indices);
  }
}
