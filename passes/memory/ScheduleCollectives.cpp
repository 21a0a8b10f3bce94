//===- ScheduleCollectives.cpp - each all-reduce as a start and a wait ----===//
//
// The reduction of a gradient bucket starts where the bucket is complete and
// is waited for only where something next touches one of its buffers, so
// that the ops between (the rest of the backward) compute while it runs. Both
// calls take the buffers: the memory plan then keeps each live, and shared
// with nothing, from before the start to after the wait.
//
//===----------------------------------------------------------------------===//

#include "passes/memory/Collectives.h"
#include "passes/Passes.h"
#include "passes/support/ViewRoot.h"

#include "dialects/TccNames.h"
#include "dialects/TccOps.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tcc-schedule-collectives"

namespace tcc {
#define GEN_PASS_DEF_SCHEDULECOLLECTIVESPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

int32_t dtypeOf(Type t) {
  if (t.isF32())
    return TCC_DTYPE_F32;
  if (t.isF16())
    return TCC_DTYPE_F16;
  if (t.isBF16())
    return TCC_DTYPE_BF16;
  return 0;
}

/// Whether OP, or an op inside it, uses a buffer that views one of ROOTS
/// (a view itself reads and writes nothing).
bool touches(Operation *op, const DenseSet<Value> &roots) {
  WalkResult r = op->walk([&](Operation *inner) {
    if (isa<ViewLikeOpInterface>(inner))
      return WalkResult::advance();
    for (Value v : inner->getOperands())
      if (isa<BaseMemRefType>(v.getType()) && roots.contains(tcc::viewRoot(v)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

struct ScheduleCollectivesPass
    : tcc::impl::ScheduleCollectivesPassBase<ScheduleCollectivesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(&getContext());
    int64_t next = 0;
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      SmallVector<tcc::AllReduceOp> reduces;
      func.walk([&](tcc::AllReduceOp op) { reduces.push_back(op); });
      for (tcc::AllReduceOp op : reduces)
        if (failed(schedule(b, func, op, next)))
          return signalPassFailure();
    }
  }

  /// A private declaration @tcc_collective_N taking BUFFERS.
  func::FuncOp declare(OpBuilder &b, func::FuncOp before, ValueRange buffers, int64_t &next) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(before);
    std::string name = (tcc::collectivePrefix + Twine(next++)).str();
    auto decl = func::FuncOp::create(b, before.getLoc(), name,
                                     b.getFunctionType(buffers.getTypes(), {}));
    decl.setPrivate();
    return decl;
  }

  LogicalResult schedule(OpBuilder &b, func::FuncOp func, tcc::AllReduceOp op, int64_t &next) {
    if (!op.getResults().empty())
      return op.emitOpError("on tensors after bufferization");
    if (op->getBlock() != &func.getBody().front())
      return op.emitOpError("inside a region: the step's collectives belong to its body");
    Location loc = op.getLoc();
    int32_t dtype = 0;
    for (Value v : op.getOperands()) {
      int32_t d = dtypeOf(cast<MemRefType>(v.getType()).getElementType());
      if (dtype && d != dtype)
        return op.emitOpError("mixes element types in one bucket");
      dtype = d;
    }
    // Dense operands: a strided view is reduced through a contiguous copy.
    SmallVector<Value> buffers;
    SmallVector<std::pair<Value, Value>> copiedBack; // (copy, original)
    for (Value v : op.getOperands()) {
      auto type = cast<MemRefType>(v.getType());
      if (type.getLayout().isIdentity()) {
        buffers.push_back(v);
        continue;
      }
      OpBuilder top = OpBuilder::atBlockBegin(&func.getBody().front());
      Value dense = memref::AllocOp::create(
          top, loc, MemRefType::get(type.getShape(), type.getElementType()));
      b.setInsertionPoint(op);
      memref::CopyOp::create(b, loc, v, dense);
      buffers.push_back(dense);
      copiedBack.push_back({dense, v});
    }
    DenseSet<Value> roots;
    for (Value v : buffers)
      roots.insert(tcc::viewRoot(v));
    for (auto [dense, original] : copiedBack)
      roots.insert(tcc::viewRoot(original));

    SmallVector<int64_t> params = {int64_t(op.getBucket())};
    for (Value v : buffers)
      params.push_back(cast<MemRefType>(v.getType()).getNumElements());
    int64_t id = next;
    func::FuncOp startDecl = declare(b, func, buffers, next);
    b.setInsertionPoint(op);
    auto start = func::CallOp::create(b, loc, startDecl, buffers);
    start->setAttr(tcc::attr::collective,
                   b.getDictionaryAttr(
                       {b.getNamedAttr("kind", b.getI32IntegerAttr(TCC_COLLECTIVE_ALL_REDUCE_START)),
                        b.getNamedAttr("dtype", b.getI32IntegerAttr(dtype)),
                        b.getNamedAttr("params", b.getDenseI64ArrayAttr(params)),
                        b.getNamedAttr("id", b.getI64IntegerAttr(id))}));

    // The wait: before the first later op that touches a buffer.
    Operation *at = op->getNextNode();
    while (!at->hasTrait<OpTrait::IsTerminator>() && !touches(at, roots))
      at = at->getNextNode();
    LLVM_DEBUG(llvm::dbgs() << "@" << func.getSymName() << ": bucket " << op.getBucket()
                            << " (" << buffers.size() << " buffers) waits before " << *at
                            << "\n");
    func::FuncOp waitDecl = declare(b, func, buffers, next);
    b.setInsertionPoint(at);
    auto wait = func::CallOp::create(b, loc, waitDecl, buffers);
    wait->setAttr(tcc::attr::collective,
                  b.getDictionaryAttr({b.getNamedAttr("kind", b.getI32IntegerAttr(TCC_COLLECTIVE_WAIT)),
                                       b.getNamedAttr("dtype", b.getI32IntegerAttr(dtype)),
                                       b.getNamedAttr("start", b.getI64IntegerAttr(id))}));
    for (auto [dense, original] : copiedBack)
      memref::CopyOp::create(b, loc, dense, original);
    op->erase();
    return success();
  }
};

} // namespace
