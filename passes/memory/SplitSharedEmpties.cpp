//===- SplitSharedEmpties.cpp - a bounded number of writers per empty ------===//
//
// CSE merges the `tensor.empty` destinations of one shape into one value, and
// one-shot bufferization puts every writer that it bufferizes in place into
// that value's alias set. Its analysis compares each read of an alias set
// with each of its writes, for every decision, so a chain of n in-place ops
// on one empty costs n^3 (1000 unfused Relus: 95 s). An empty with more
// writers than any model of the repository has (the LSTM's 385) gives each
// run of consecutive writers its own copy, which bounds the alias sets, and
// so the analysis is linear in the function; in the result, the first writer
// of each run starts a new buffer instead of perhaps reusing the previous
// run's. Functions below the threshold are not touched.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tcc-split-shared-empties"

namespace tcc {
#define GEN_PASS_DEF_SPLITSHAREDEMPTIESPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

struct SplitSharedEmptiesPass
    : tcc::impl::SplitSharedEmptiesPassBase<SplitSharedEmptiesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp e) { empties.push_back(e); });
    // Positions of the ops in each block that holds an empty, computed once.
    DenseMap<Block *, DenseMap<Operation *, unsigned>> positions;
    for (tensor::EmptyOp empty : empties) {
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : empty.getResult().getUses())
        if (auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner()))
          if (dps.isDpsInit(&use))
            inits.push_back(&use);
      if (inits.size() <= maxWriters)
        continue;
      unsigned run = std::max(1u, unsigned(runLength));
      LLVM_DEBUG(llvm::dbgs() << "the empty at " << empty.getLoc() << " has " << inits.size()
                              << " writers: " << (inits.size() - 1) / run
                              << " copies, one per run of " << run << "\n");
      Block *block = empty->getBlock();
      auto [it, inserted] = positions.try_emplace(block);
      if (inserted)
        for (auto [i, op] : llvm::enumerate(*block))
          it->second[&op] = i;
      const DenseMap<Operation *, unsigned> &position = it->second;
      auto top = [&](OpOperand *use) { return block->findAncestorOpInBlock(*use->getOwner()); };
      // Writers in program order (uses are listed in no particular order).
      llvm::stable_sort(inits, [&](OpOperand *a, OpOperand *b) {
        unsigned pa = position.lookup(top(a)), pb = position.lookup(top(b));
        return pa != pb ? pa < pb : a->getOperandNumber() < b->getOperandNumber();
      });
      for (size_t first = run; first < inits.size(); first += run) {
        OpBuilder b(top(inits[first]));
        Value fresh = b.clone(*empty)->getResult(0);
        for (size_t i = first; i < std::min<size_t>(first + run, inits.size()); ++i)
          inits[i]->set(fresh);
      }
    }
  }
};

} // namespace
