//===- LinalgPayload.cpp - a linalg op's body at one point of its loops ---===//

#include "passes/codegen/LinalgPayload.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

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
                                          ValueRange ivs, ValueRange known) {
  SmallVector<Value> outs;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    if (op.getBlock()->getArgument(init.getOperandNumber()).use_empty()) {
      outs.push_back(nullptr);
      continue;
    }
    if (i < known.size() && known[i]) {
      outs.push_back(known[i]);
      continue;
    }
    auto indices = affine::expandAffineMap(b, loc, maps[init.getOperandNumber()], ivs);
    outs.push_back(memref::LoadOp::create(b, loc, init.get(), *indices));
  }
  return outs;
}

SmallVector<linalg::FillOp> tcc::initFills(linalg::LinalgOp op) {
  SmallVector<linalg::FillOp> fills(op.getNumDpsInits());
  if (op.getNumReductionLoops() == 0 || !op.hasPureBufferSemantics())
    return fills;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    if (op.getMatchingBlockArgument(&init).use_empty())
      continue;
    // One element per parallel point: the map's results are exactly the
    // parallel loops, each once.
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (!map.isProjectedPermutation() || map.getNumResults() != op.getNumParallelLoops())
      continue;
    bool perPoint = true;
    for (unsigned r = 0; r < map.getNumResults(); ++r)
      perPoint &= iterators[map.getDimPosition(r)] == utils::IteratorType::parallel;
    if (!perPoint)
      continue;
    // The last op before OP that uses the buffer (directly or through a view).
    Value buffer = init.get();
    Operation *last = nullptr;
    for (Operation *user : buffer.getUsers()) {
      Operation *top = op->getBlock()->findAncestorOpInBlock(*user);
      if (!top || top == op.getOperation() || !top->isBeforeInBlock(op))
        continue;
      if (!last || last->isBeforeInBlock(top))
        last = top;
    }
    // The op must not read the buffer as an input too (the fill's values).
    auto viewsBuffer = [&](Value v) {
      while (true) {
        if (v == buffer)
          return true;
        auto view = v.getDefiningOp<ViewLikeOpInterface>();
        if (!view)
          return false;
        v = view.getViewSource();
      }
    };
    if (llvm::any_of(op.getDpsInputs(), viewsBuffer))
      continue;
    auto fill = dyn_cast_or_null<linalg::FillOp>(last);
    if (!fill || fill.getOutputs()[0] != buffer || fill->getNumResults() != 0 ||
        isa<ShapedType>(fill.getInputs()[0].getType()))
      continue;
    fills[i] = fill;
  }
  // A fill shared by two outputs writes one buffer: absorbed by neither.
  for (unsigned i = 0; i < fills.size(); ++i)
    for (unsigned j = i + 1; j < fills.size(); ++j)
      if (fills[i] && fills[i] == fills[j])
        fills[i] = fills[j] = nullptr;
  return fills;
}

SmallVector<Value> tcc::fillValues(ArrayRef<linalg::FillOp> fills) {
  SmallVector<Value> values;
  for (linalg::FillOp fill : fills)
    values.push_back(fill ? fill.getInputs()[0] : Value());
  return values;
}

void tcc::storeLinalgOutputs(OpBuilder &b, Location loc, linalg::LinalgOp op, ValueRange ivs,
                             ValueRange values) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (auto [init, v] : llvm::zip(op.getDpsInitsMutable(), values)) {
    auto indices = affine::expandAffineMap(b, loc, maps[init.getOperandNumber()], ivs);
    memref::StoreOp::create(b, loc, v, init.get(), *indices);
  }
}
