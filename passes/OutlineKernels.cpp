//===- OutlineKernels.cpp - one function per kernel, for profilers --------===//
//
// Generated code is one function per entry point, so a sampling profiler
// sees one symbol. With every loop nest outlined into a function named after
// its source node, `perf report --sort symbol` is a per-kernel profile. The
// same keeps LLVM linear on entry points of thousands of kernels, whose
// loop passes and register allocator take superlinear time over one
// function (`min-kernels`).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace tcc {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

} // namespace

/// The ONNX node OP came from (a NameLoc, possibly inside a FusedLoc), as a
/// symbol-safe string; "op" when there is none.
/// OP's location, or the first of a fused one (the op it was built from).
static Location sourceLocation(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc); fused && !fused.getLocations().empty())
    loc = fused.getLocations().front();
  return loc;
}

std::string tcc::sourceName(Operation *op) {
  Location loc = sourceLocation(op);
  if (auto n = dyn_cast<NameLoc>(loc))
    return n.getName().str();
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return s;
}

std::string tcc::kernelNodeName(Operation *op) {
  std::string name = isa<NameLoc>(sourceLocation(op)) ? sourceName(op) : "op";
  for (char &c : name)
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name.substr(0, 48);
}

namespace {

struct OutlineKernelsPass : tcc::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    int64_t counter = 0;
    SmallVector<func::FuncOp> planned;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr("tcc.plan"))
        planned.push_back(fn);
    for (func::FuncOp fn : planned) {
      SmallVector<Operation *> loops;
      for (Operation &op : fn.getBody().front())
        if (isa<scf::ForOp, scf::ParallelOp>(op))
          loops.push_back(&op);
      if (loops.size() < minKernels)
        continue;
      for (Operation *loop : loops) {
        // The nest as the single block of an execute_region, outlined.
        rewriter.setInsertionPoint(loop);
        auto region = scf::ExecuteRegionOp::create(rewriter, loop->getLoc(), TypeRange{});
        Block *block = rewriter.createBlock(&region.getRegion());
        rewriter.setInsertionPointToEnd(block);
        scf::YieldOp::create(rewriter, loop->getLoc());
        // A nest with results (a full reduction's accumulators) goes with
        // the ops right after it that use them (the stores of the results).
        SmallVector<Operation *> kernelOps = {loop};
        for (Operation *next = loop->getNextNode(); next && loop->getNumResults() != 0;
             next = next->getNextNode()) {
          bool usesKernel = llvm::any_of(next->getOperands(), [&](Value v) {
            return llvm::is_contained(kernelOps, v.getDefiningOp());
          });
          if (!usesKernel || next->getNumResults() != 0)
            break;
          kernelOps.push_back(next);
        }
        for (Operation *op : kernelOps)
          op->moveBefore(block->getTerminator());
        std::string name = "kernel_" + std::to_string(counter++) + "_" + tcc::kernelNodeName(loop);
        func::CallOp call;
        FailureOr<func::FuncOp> kernel = outlineSingleBlockRegion(
            rewriter, loop->getLoc(), region.getRegion(), name, &call);
        if (failed(kernel)) {
          loop->emitError("tcc-outline-kernels: cannot outline this loop nest");
          return signalPassFailure();
        }
        // The execute_region is left holding the call alone.
        call->moveBefore(region);
        rewriter.eraseOp(region);
      }
    }
  }
};

} // namespace
