//===- SplitSharedFills.cpp - one fill per destination --------------------===//
//
// A shared zero accumulator is cheap on tensors and expensive on buffers: one
// fill, then a copy per writer. Duplicating the fill keeps every writer's
// destination its own, so bufferization writes in place and the library-call
// pass sees a fresh zero buffer (an overwriting product). The first writer
// in program order keeps the original fill and each later one gets its copy
// right before it: a copy placed at the original (CSE hoists a shared fill to
// its first use, often in the forward pass) would keep a backward product's
// buffer live from the forward pass on.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace tcc {
#define GEN_PASS_DEF_SPLITSHAREDFILLSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

struct SplitSharedFillsPass : tcc::impl::SplitSharedFillsPassBase<SplitSharedFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
      // Destination uses after the first get their own empty + fill.
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : fill.getResult(0).getUses())
        if (auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner()))
          if (dps.isDpsInit(&use))
            inits.push_back(&use);
      if (inits.size() < 2)
        continue;
      // Use lists are in no program order; the writers' ancestors in the
      // fill's block are.
      Block *block = fill->getBlock();
      auto position = [&](OpOperand *use) { return block->findAncestorOpInBlock(*use->getOwner()); };
      if (llvm::any_of(inits, [&](OpOperand *use) { return !position(use); }))
        continue;
      llvm::stable_sort(inits, [&](OpOperand *x, OpOperand *y) {
        return position(x)->isBeforeInBlock(position(y));
      });
      for (OpOperand *use : llvm::drop_begin(inits)) {
        OpBuilder b(position(use));
        Operation *newEmpty = b.clone(*empty);
        IRMapping map;
        map.map(empty.getResult(), newEmpty->getResult(0));
        Operation *newFill = b.clone(*fill, map);
        use->set(newFill->getResult(0));
      }
    }
  }
};

} // namespace
