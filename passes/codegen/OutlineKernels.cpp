//===- OutlineKernels.cpp - one function per kernel -----------------------===//
//
// Every loop nest of an entry point becomes a function named after its
// source node: the unit that tcc-dedup-kernels deduplicates and the artifact
// writer spreads over threads and caches, and, with --profile, one symbol
// per kernel for `perf report --sort symbol`. It also keeps LLVM linear on
// entry points of thousands of kernels, whose loop passes and register
// allocator take superlinear time over one function.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/codegen/RuntimeCalls.h"
#include "passes/support/SourceNames.h"

#include "runtime/include/tcc/abi.h"

#include "dialects/TccNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tcc-outline-kernels"

namespace tcc {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// Upstream's scf outlineSingleBlockRegion, with one difference: the values
/// the region captures are replaced by the new function's arguments in a
/// walk over the function, where upstream visits every use of each captured
/// value and asks whether it lies inside. The arena, the state and the index
/// constants are used by every kernel of an entry point, so upstream's way
/// costs kernels x kernels (16 s for 8000 kernels); the result is the same.
FailureOr<func::FuncOp> outlineKernel(RewriterBase &rewriter, Location loc, Region &region,
                                      StringRef name, func::CallOp &call) {
  if (!region.hasOneBlock())
    return failure();
  Block *originalBlock = &region.front();
  Operation *originalTerminator = originalBlock->getTerminator();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(region.getParentOfType<func::FuncOp>());
  SetVector<Value> captures;
  getUsedValuesDefinedAbove(region, captures);
  // Captured index constants are cloned at the top of the body (each before
  // the previous one, as upstream does), the other captures become arguments.
  // bf16 constants are cloned too, and bf16 scalars that are no constant (a
  // 16-bit copy of a scalar parameter, loaded by the entry) pass as their
  // i16 bits: x86 without AVX512-BF16 passes a bf16 argument as an f32 and
  // gets its bits back with a call of libgcc's __truncsfbf2, which an
  // artifact may not import (Debian 12's libgcc lacks it).
  auto cloned = [](Value v) -> Operation * {
    if (Operation *cst = v.getDefiningOp<arith::ConstantIndexOp>())
      return cst;
    auto cst = v.getDefiningOp<arith::ConstantOp>();
    return cst && getElementTypeOrSelf(v.getType()).isBF16() ? cst : nullptr;
  };
  auto asBits = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return v.getType().isBF16() && !(def && def->hasTrait<OpTrait::ConstantLike>());
  };
  Type bitsType = rewriter.getI16Type();
  // The function takes the region's arguments, then the captured values.
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (BlockArgument arg : region.getArguments()) {
    argTypes.push_back(arg.getType());
    argLocs.push_back(arg.getLoc());
  }
  for (Value v : captures) {
    argTypes.push_back(asBits(v) ? bitsType : v.getType());
    argLocs.push_back(v.getLoc());
  }
  auto type = FunctionType::get(rewriter.getContext(), argTypes,
                                originalTerminator->getOperandTypes());
  auto fn = func::FuncOp::create(rewriter, loc, name, type);
  Block *body = fn.addEntryBlock();
  unsigned numRegionArgs = originalBlock->getNumArguments();
  {
    OpBuilder::InsertionGuard g(rewriter);
    rewriter.setInsertionPointToEnd(body);
    rewriter.mergeBlocks(originalBlock, body, body->getArguments().take_front(numRegionArgs));
    rewriter.setInsertionPointToEnd(body);
    func::ReturnOp::create(rewriter, loc, originalTerminator->getOperands());
  }
  // The region keeps a block with the call and the old terminator.
  Block *newBlock = rewriter.createBlock(&region, region.begin(),
                                         TypeRange(argTypes).take_front(numRegionArgs),
                                         ArrayRef<Location>(argLocs).take_front(numRegionArgs));
  {
    OpBuilder::InsertionGuard g(rewriter);
    rewriter.setInsertionPointToEnd(newBlock);
    SmallVector<Value> callArgs(newBlock->getArguments());
    for (Value v : captures)
      callArgs.push_back(asBits(v) ? arith::BitcastOp::create(rewriter, loc, bitsType, v).getResult()
                                   : v);
    call = func::CallOp::create(rewriter, loc, fn, callArgs);
    IRMapping results;
    results.map(originalTerminator->getOperands(), call->getResults());
    rewriter.clone(*originalTerminator, results);
    rewriter.eraseOp(originalTerminator);
  }
  DenseMap<Value, Value> replacement;
  for (auto [orig, arg] : llvm::zip(captures, body->getArguments().drop_front(numRegionArgs))) {
    Value repl = arg;
    if (Operation *cst = cloned(orig)) {
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPointToStart(body);
      repl = rewriter.clone(*cst)->getResult(0);
    } else if (asBits(orig)) {
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPointToStart(body);
      repl = arith::BitcastOp::create(rewriter, loc, orig.getType(), arg);
    }
    replacement[orig] = repl;
  }
  fn.walk([&](Operation *op) {
    for (OpOperand &operand : op->getOpOperands())
      if (Value repl = replacement.lookup(operand.get()))
        rewriter.modifyOpInPlace(op, [&] { operand.set(repl); });
  });
  return fn;
}

struct OutlineKernelsPass : tcc::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    int64_t counter = 0;
    SmallVector<func::FuncOp> planned;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(tcc::attr::plan))
        planned.push_back(fn);
    for (func::FuncOp fn : planned) {
      SmallVector<Operation *> loops;
      for (Operation &op : fn.getBody().front())
        if (isa<scf::ForOp, scf::ParallelOp>(op))
          loops.push_back(&op);
      LLVM_DEBUG(llvm::dbgs() << "@" << fn.getSymName() << ": " << loops.size()
                              << " loop nests outlined\n");
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
        FailureOr<func::FuncOp> kernel =
            outlineKernel(rewriter, loop->getLoc(), region.getRegion(), name, call);
        if (failed(kernel)) {
          loop->emitError("tcc-outline-kernels: cannot outline this loop nest");
          return signalPassFailure();
        }
        // The execute_region is left holding the call (after the bit casts
        // of its bf16 arguments).
        for (Operation &op :
             llvm::make_early_inc_range(region.getRegion().front().without_terminator()))
          op.moveBefore(region);
        rewriter.eraseOp(region);
        if (profileMarks && failed(markKernel(fn, call, int32_t(profiled.size()))))
          return signalPassFailure();
        profiled.push_back(name);
      }
    }
    if (profileMarks)
      recordProfiledKernels(module);
  }

  /// The kernels marked so far, in index order.
  SmallVector<std::string> profiled;

  /// Brackets CALL (kernel INDEX of FN) with the runtime's profile_kernel:
  /// 2 INDEX before, 2 INDEX + 1 after. FN's last argument is the runtime.
  LogicalResult markKernel(func::FuncOp fn, func::CallOp call, int32_t index) {
    auto ptrType = LLVM::LLVMPointerType::get(&getContext());
    Value runtime = fn.getNumArguments() ? fn.getArgument(fn.getNumArguments() - 1) : Value();
    if (!runtime || runtime.getType() != ptrType)
      return fn.emitError("tcc-outline-kernels: profile-marks needs the runtime argument "
                          "(run tcc-lower-library-calls first)");
    OpBuilder b(call);
    Value none = LLVM::ZeroOp::create(b, call.getLoc(), ptrType);
    tcc::callRuntime(b, call.getLoc(), runtime, offsetof(tcc_abi_runtime, profile_kernel),
                     offsetof(tcc_abi_runtime, profile_context), 2 * index, none);
    b.setInsertionPointAfter(call);
    tcc::callRuntime(b, call.getLoc(), runtime, offsetof(tcc_abi_runtime, profile_kernel),
                     offsetof(tcc_abi_runtime, profile_context), 2 * index + 1, none);
    return success();
  }

  /// The metadata that names the marked kernels.
  void recordProfiledKernels(ModuleOp module) {
    MLIRContext *ctx = &getContext();
    SmallVector<NamedAttribute> entries;
    if (auto existing = module->getAttrOfType<DictionaryAttr>(tcc::attr::metadata))
      llvm::append_range(entries, existing.getValue());
    std::string names = llvm::join(profiled, ";");
    entries.push_back(NamedAttribute(StringAttr::get(ctx, TCC_METADATA_PROFILE_KERNELS),
                                     StringAttr::get(ctx, names)));
    module->setAttr(tcc::attr::metadata, DictionaryAttr::get(ctx, entries));
  }
};

} // namespace
