//===- CpuLowerLibraryCalls.cpp - marked library calls as runtime calls ---===//
//
// The artifact never links oneDNN: after the memory plan, each call that
// tcc-cpu-library-calls marked becomes a call of the runtime's library_call
// (abi.h) with the operands' addresses, and the module's tcc.library_calls
// table, which the descriptor carries, lists the calls' kinds and sizes, from
// which the runtime creates each primitive once per session.
//
//===----------------------------------------------------------------------===//

#include "passes/LibraryCalls.h"
#include "passes/Passes.h"
#include "passes/RuntimeCalls.h"

#include "dialects/TccNames.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/Debug.h"

#include <cstddef>

#define DEBUG_TYPE "tcc-cpu-lower-library-calls"

namespace tcc {
#define GEN_PASS_DEF_CPULOWERLIBRARYCALLSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

struct CpuLowerLibraryCallsPass
    : tcc::impl::CpuLowerLibraryCallsPassBase<CpuLowerLibraryCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    SmallVector<Attribute> table;
    if (auto existing = module->getAttrOfType<ArrayAttr>(tcc::attr::libraryCalls))
      llvm::append_range(table, existing);

    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      SmallVector<func::CallOp> calls;
      func.walk([&](func::CallOp call) {
        if (call.getCallee().starts_with(tcc::libraryCallPrefix) &&
            call->hasAttr(tcc::attr::libraryCall))
          calls.push_back(call);
      });
      if (!func->hasAttr(tcc::attr::plan)) {
        if (!calls.empty()) {
          calls.front().emitError("library call outside a planned entry point");
          return signalPassFailure();
        }
        continue;
      }
      unsigned rtIndex = func.getNumArguments();
      if (failed(func.insertArgument(rtIndex, ptrType, {}, func.getLoc())))
        return signalPassFailure();
      if (calls.empty())
        continue;
      Value runtime = func.getArgument(rtIndex);

      // One operand array for all calls, at the top of the function.
      size_t maxOperands = 0;
      for (func::CallOp c : calls)
        maxOperands = std::max<size_t>(maxOperands, c.getNumOperands());
      Location loc = func.getLoc();
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      Value count = LLVM::ConstantOp::create(b, loc, i64, int64_t(maxOperands));
      Value operands = LLVM::AllocaOp::create(b, loc, ptrType, ptrType, count, 8);

      for (func::CallOp c : calls) {
        Location l = c.getLoc();
        LLVM_DEBUG(llvm::dbgs() << "@" << func.getSymName() << ": @" << c.getCallee()
                                << " is library call " << table.size() << "\n");
        b.setInsertionPoint(c);
        for (auto [i, v] : llvm::enumerate(c.getOperands()))
          tcc::storeBufferAddress(b, l, v, operands, int32_t(i));
        tcc::callRuntime(b, l, runtime, offsetof(tcc_abi_runtime, library_call),
                         offsetof(tcc_abi_runtime, library_context), int32_t(table.size()),
                         operands);
        auto info = c->getAttrOfType<DictionaryAttr>(tcc::attr::libraryCall);
        SmallVector<NamedAttribute> row(info.getValue());
        row.push_back(b.getNamedAttr("operands", b.getI32IntegerAttr(c.getNumOperands())));
        table.push_back(b.getDictionaryAttr(row));
        c->erase();
      }
    }
    // The declarations have no calls left. The callees still called are
    // collected in one walk: asking each declaration for its uses walks the
    // module once per declaration (7 s of GPT-2-small's compile).
    llvm::DenseSet<StringAttr> called;
    module.walk([&](func::CallOp call) { called.insert(call.getCalleeAttr().getAttr()); });
    for (auto decl : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (decl.isExternal() && decl.getSymName().starts_with(tcc::libraryCallPrefix) &&
          !called.contains(decl.getSymNameAttr()))
        decl->erase();
    if (!table.empty())
      module->setAttr(tcc::attr::libraryCalls, ArrayAttr::get(ctx, table));
  }
};

} // namespace
