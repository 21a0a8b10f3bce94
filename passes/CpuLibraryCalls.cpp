//===- CpuLibraryCalls.cpp - heavy f32 ops as oneDNN calls via the runtime -===//
//
// The artifact never links oneDNN: the generated code calls the runtime's
// library_call (abi.h) with the operands' addresses, and the descriptor
// carries a table of the calls' kinds and sizes, from which the runtime
// creates each primitive once per session. Buffers are planned before this
// pass, so every operand is a view of the arena or the state.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

#include <cstddef>

namespace tcc {
#define GEN_PASS_DEF_CPULIBRARYCALLSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// A dense row-major f32 buffer of static shape.
bool isDenseF32(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getLayout().isIdentity() &&
         t.getElementType().isF32();
}

bool allDenseF32(linalg::LinalgOp op) {
  return llvm::all_of(op->getOperands(), isDenseF32);
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<MemRefType>(v.getType()).getShape();
}

/// Which operands of a 2-D matmul are read transposed, or nullopt for maps
/// other than the four plain / transposed combinations.
std::optional<std::pair<bool, bool>> matmulTransposes(linalg::MatmulOp op) {
  if (!op.hasUserDefinedMaps())
    return std::make_pair(false, false);
  MLIRContext *ctx = op.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  auto map = [&](ArrayRef<AffineExpr> r) { return AffineMap::get(3, 0, r, ctx); };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != 3 || maps[2] != map({m, n}))
    return std::nullopt;
  bool ta = maps[0] == map({k, m}), tb = maps[1] == map({n, k});
  if ((!ta && maps[0] != map({m, k})) || (!tb && maps[1] != map({k, n})))
    return std::nullopt;
  return std::make_pair(ta, tb);
}

/// The call's kind and parameters (accumulate last, set later), or failure
/// when the op stays on the generated path.
struct CallShape {
  int32_t kind;
  SmallVector<int64_t> params;
};

FailureOr<CallShape> callShape(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || !allDenseF32(op))
    return failure();
  if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
    auto t = matmulTransposes(mm);
    if (!t)
      return failure();
    ArrayRef<int64_t> a = shapeOf(op->getOperand(0)), c = shapeOf(op->getOperand(2));
    int64_t k = t->first ? a[0] : a[1];
    return CallShape{TCC_LIBRARY_CALL_MATMUL,
                     {1, c[0], c[1], k, t->first, t->second}};
  }
  if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation())) {
    if (bmm.hasUserDefinedMaps())
      return failure();
    ArrayRef<int64_t> a = shapeOf(op->getOperand(0)), c = shapeOf(op->getOperand(2));
    return CallShape{TCC_LIBRARY_CALL_MATMUL, {c[0], c[1], c[2], a[2], 0, 0}};
  }
  if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
    ArrayRef<int64_t> x = shapeOf(op->getOperand(0)), w = shapeOf(op->getOperand(1)),
                      y = shapeOf(op->getOperand(2));
    SmallVector<int64_t> s(conv.getStrides().getValues<int64_t>());
    SmallVector<int64_t> d(conv.getDilations().getValues<int64_t>());
    return CallShape{TCC_LIBRARY_CALL_CONV2D,
                     {x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3], s[0],
                      s[1], d[0], d[1]}};
  }
  return failure();
}

/// The linalg.fill of +0.0 into OUT that is the last op before OP to touch
/// OUT, or null.
linalg::FillOp zeroFillBefore(Operation *op, Value out) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (!llvm::is_contained(prev->getOperands(), out))
      continue;
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (!fill || fill.getOutputs()[0] != out)
      return nullptr;
    FloatAttr value;
    if (!matchPattern(fill.getInputs()[0], m_Constant(&value)) ||
        !value.getValue().isPosZero())
      return nullptr;
    return fill;
  }
  return nullptr;
}

struct CpuLibraryCallsPass
    : tcc::impl::CpuLibraryCallsPassBase<CpuLibraryCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i32 = IntegerType::get(ctx, 32);
    auto i64 = IntegerType::get(ctx, 64);
    auto i8 = IntegerType::get(ctx, 8);
    SmallVector<Attribute> table;
    if (auto existing = module->getAttrOfType<ArrayAttr>("tcc.library_calls"))
      llvm::append_range(table, existing);

    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr("tcc.plan") || func.isExternal())
        continue;
      unsigned rtIndex = func.getNumArguments();
      if (failed(func.insertArgument(rtIndex, ptrType, {}, func.getLoc())))
        return signalPassFailure();
      if (!enable)
        continue;
      Value runtime = func.getArgument(rtIndex);

      SmallVector<std::pair<linalg::LinalgOp, CallShape>> calls;
      func.walk([&](linalg::LinalgOp op) {
        FailureOr<CallShape> shape = callShape(op);
        if (succeeded(shape))
          calls.push_back({op, *shape});
      });
      if (calls.empty())
        continue;

      // One operand array for all calls, at the top of the function.
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      Location loc = func.getLoc();
      Value three = LLVM::ConstantOp::create(b, loc, i64, 3);
      Value operands = LLVM::AllocaOp::create(b, loc, ptrType, ptrType, three, 8);
      auto fieldPtr = [&](OpBuilder &b, Value base, int64_t offset) -> Value {
        return LLVM::GEPOp::create(b, loc, ptrType, i8, base,
                                   ArrayRef<LLVM::GEPArg>{int32_t(offset)});
      };

      for (auto &[op, shape] : calls) {
        Location opLoc = op.getLoc();
        b.setInsertionPoint(op);
        Value out = op.getDpsInits()[0];
        int64_t accumulate = 1;
        if (linalg::FillOp fill = zeroFillBefore(op, out)) {
          fill.erase();
          accumulate = 0;
        }
        shape.params.push_back(accumulate);
        for (auto [i, v] : llvm::enumerate(op->getOperands())) {
          Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, opLoc, v);
          Value asInt = arith::IndexCastOp::create(b, opLoc, i64, address);
          Value pointer = LLVM::IntToPtrOp::create(b, opLoc, ptrType, asInt);
          Value slot = LLVM::GEPOp::create(b, opLoc, ptrType, ptrType, operands,
                                           ArrayRef<LLVM::GEPArg>{int32_t(i)});
          LLVM::StoreOp::create(b, opLoc, pointer, slot);
        }
        Value fn = LLVM::LoadOp::create(
            b, opLoc, ptrType,
            fieldPtr(b, runtime, offsetof(tcc_abi_runtime, library_call)));
        Value context = LLVM::LoadOp::create(
            b, opLoc, ptrType,
            fieldPtr(b, runtime, offsetof(tcc_abi_runtime, library_context)));
        Value index = LLVM::ConstantOp::create(b, opLoc, i32, int64_t(table.size()));
        auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                                  {ptrType, i32, ptrType});
        LLVM::CallOp::create(b, opLoc, fnType, ValueRange{fn, context, index, operands});
        table.push_back(b.getDictionaryAttr(
            {b.getNamedAttr("kind", b.getI32IntegerAttr(shape.kind)),
             b.getNamedAttr("params", b.getDenseI64ArrayAttr(shape.params)),
             b.getNamedAttr("operands",
                            b.getI32IntegerAttr(int32_t(op->getNumOperands())))}));
        op->erase();
      }
    }
    if (!table.empty())
      module->setAttr("tcc.library_calls", ArrayAttr::get(ctx, table));
  }
};

} // namespace
