//===- UpdateParamsInPlace.cpp - parameter updates as destinations --------===//

#include "passes/Passes.h"

#include "dialects/TccNames.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tcc-update-params-in-place"

namespace tcc {
#define GEN_PASS_DEF_UPDATEPARAMSINPLACEPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

struct UpdateParamsInPlacePass
    : tcc::impl::UpdateParamsInPlacePassBase<UpdateParamsInPlacePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      auto name = func.getResultAttrOfType<StringAttr>(i, tcc::attr::update);
      if (!name)
        continue;
      Value param;
      for (unsigned a = 0; a < func.getNumArguments(); ++a)
        if (func.getArgAttrOfType<StringAttr>(a, tcc::attr::param) == name ||
            func.getArgAttrOfType<StringAttr>(a, tcc::attr::state) == name)
          param = func.getArgument(a);
      // The op computing the update (possibly one result of several: a
      // multi-output kernel updating several parameters or moments).
      auto result = dyn_cast<OpResult>(ret.getOperand(i));
      auto generic = result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
      if (!param || !generic || generic.getNumReductionLoops() != 0 ||
          generic->getBlock() != ret->getBlock())
        continue;
      // The op must be the last reader of the old value; the new value may
      // have other readers (Adam's moments feed the parameter's update).
      bool lastReader = llvm::all_of(param.getUsers(), [&](Operation *user) {
        while (user && user->getBlock() != generic->getBlock())
          user = user->getParentOp();
        return user && (user == generic || user->isBeforeInBlock(generic));
      });
      if (!lastReader)
        continue;
      OpOperand *init = generic.getDpsInitOperand(result.getResultNumber());
      if (generic.payloadUsesValueFromOperand(init) ||
          !generic.getMatchingIndexingMap(init).isIdentity() ||
          init->get().getType() != param.getType() ||
          llvm::any_of(generic.getDpsInits(), [&](Value v) { return v == param; }))
        continue;
      // It reads the old value element by element as it writes the new one,
      // or not at all (an unfused chain: the old value's readers all come
      // before it).
      bool readsParamOtherwise = llvm::any_of(generic.getDpsInputOperands(), [&](OpOperand *in) {
        return in->get() == param && !generic.getMatchingIndexingMap(in).isIdentity();
      });
      if (readsParamOtherwise)
        continue;
      init->set(param);
      LLVM_DEBUG(llvm::dbgs() << "@" << func.getSymName() << ": " << name.getValue()
                              << " is updated in place by the op at " << generic.getLoc()
                              << "\n");
    }
  }
};

} // namespace
