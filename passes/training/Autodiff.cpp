//===- Autodiff.cpp - tcc-autodiff: gradient functions --------------------===//
//
// The pass is a thin driver over passes/training/autodiff/: it picks the arguments to
// differentiate and names the gradient function; ReverseMode.cpp builds it.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/training/autodiff/ReverseMode.h"

#include "dialects/TccNames.h"

namespace tcc {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

struct AutodiffPass : tcc::impl::AutodiffPassBase<AutodiffPass> {
  using Base::Base;

  void runOnOperation() override {
    if (wrt != "params" && wrt != "all") {
      getOperation().emitError("tcc-autodiff: wrt must be 'params' or 'all', not '") << wrt << "'";
      return signalPassFailure();
    }
    // Definitions only, collected first: building a gradient erases a
    // declaration of its name, which must not be visited afterwards.
    SmallVector<func::FuncOp> defined;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        defined.push_back(func);
    for (func::FuncOp func : defined) {
      SmallVector<unsigned> args;
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto t = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
        bool isFloat = t && isa<FloatType>(t.getElementType());
        if (isFloat && (wrt == "all" || func.getArgAttr(i, tcc::attr::param)))
          args.push_back(i);
      }
      if (args.empty())
        continue;
      if (failed(tcc::buildGradientFunction(func, args, (func.getSymName() + "_grad").str())))
        return signalPassFailure();
    }
  }
};

} // namespace
