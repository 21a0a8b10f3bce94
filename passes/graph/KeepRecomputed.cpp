//===- KeepRecomputed.cpp - recomputed ops stay apart through CSE ---------===//
//
// tcc-rematerialize marks its clones in their locations; this pass copies
// the mark into an attribute, which CSE compares (locations it ignores).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/TccNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

namespace tcc {
#define GEN_PASS_DEF_KEEPRECOMPUTEDPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// The clone number in LOC: fused<{tcc.recomputed = N}>[...], at any depth
/// (fusion nests the locations of the ops it merges).
Attribute recomputedMark(Location loc) {
  Attribute mark;
  loc->walk([&](Location inner) {
    auto fused = dyn_cast<FusedLoc>(inner);
    auto dict = fused ? dyn_cast_or_null<DictionaryAttr>(fused.getMetadata()) : nullptr;
    if (Attribute n = dict ? dict.get(tcc::attr::recomputed) : nullptr) {
      mark = n;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return mark;
}

class KeepRecomputedPass : public tcc::impl::KeepRecomputedPassBase<KeepRecomputedPass> {
public:
  void runOnOperation() override {
    // The ops of function bodies only: those are what CSE merges; the
    // arith ops inside a kernel's body need no mark.
    getOperation()->walk([](Operation *op) {
      if (op->getNumResults() == 0 || !isa_and_nonnull<func::FuncOp>(op->getParentOp()))
        return;
      if (Attribute mark = recomputedMark(op->getLoc()))
        op->setAttr(tcc::attr::recomputed, mark);
    });
  }
};

} // namespace
