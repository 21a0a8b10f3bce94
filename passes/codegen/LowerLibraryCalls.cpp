//===- LowerLibraryCalls.cpp - marked library calls as runtime calls -------===//
//
// The artifact never links oneDNN: after the memory plan, each call that
// tcc-mark-library-calls marked becomes a call of the runtime's library_call
// (abi.h) with the operands' addresses, and the module's tcc.library_calls
// table, which the descriptor carries, lists the calls' kinds and sizes, from
// which the runtime creates each primitive once per session. The collectives
// of tcc-schedule-collectives go the same way, to the runtime's collective
// and the module's tcc.collectives.
//
//===----------------------------------------------------------------------===//

#include "passes/memory/Collectives.h"
#include "passes/codegen/LibraryCalls.h"
#include "passes/Passes.h"
#include "passes/codegen/RuntimeCalls.h"

#include "dialects/TccNames.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/Debug.h"

#include <cstddef>
#include <map>

#define DEBUG_TYPE "tcc-lower-library-calls"

namespace tcc {
#define GEN_PASS_DEF_LOWERLIBRARYCALLSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// Library calls and collectives: declarations of one prefix whose calls
/// carry one attribute, lowered to one runtime service and one table.
struct CallFamily {
  StringRef prefix, attr, table;
  size_t fn, context;
};

const CallFamily kFamilies[] = {
    {tcc::libraryCallPrefix, tcc::attr::libraryCall, tcc::attr::libraryCalls,
     offsetof(tcc_abi_runtime, library_call), offsetof(tcc_abi_runtime, library_context)},
    {tcc::collectivePrefix, tcc::attr::collective, tcc::attr::collectives,
     offsetof(tcc_abi_runtime, collective), offsetof(tcc_abi_runtime, collective_context)},
};

/// Which family CALL belongs to, or null.
const CallFamily *familyOf(func::CallOp call) {
  for (const CallFamily &f : kFamilies)
    if (call.getCallee().starts_with(f.prefix) && call->hasAttr(f.attr))
      return &f;
  return nullptr;
}

struct LowerLibraryCallsPass
    : tcc::impl::LowerLibraryCallsPassBase<LowerLibraryCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    SmallVector<SmallVector<Attribute>> tables(std::size(kFamilies));
    for (auto [k, f] : llvm::enumerate(kFamilies))
      if (auto existing = module->getAttrOfType<ArrayAttr>(f.table))
        llvm::append_range(tables[k], existing);
    // A collective START's id (tcc-schedule-collectives) -> its table row.
    DenseMap<int64_t, int64_t> startRows;
    // tcc-filter-layouts: each set's calls, by their rows.
    std::map<int64_t, SmallVector<int64_t>> filterLayoutRows;

    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      SmallVector<func::CallOp> calls;
      func.walk([&](func::CallOp call) {
        if (familyOf(call))
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
        const CallFamily &f = *familyOf(c);
        SmallVector<Attribute> &table = tables[size_t(&f - kFamilies)];
        Location l = c.getLoc();
        LLVM_DEBUG(llvm::dbgs() << "@" << func.getSymName() << ": @" << c.getCallee() << " is "
                                << f.table << " row " << table.size() << "\n");
        b.setInsertionPoint(c);
        for (auto [i, v] : llvm::enumerate(c.getOperands()))
          tcc::storeBufferAddress(b, l, v, operands, int32_t(i));
        tcc::callRuntime(b, l, runtime, f.fn, f.context, int32_t(table.size()), operands);
        auto info = c->getAttrOfType<DictionaryAttr>(f.attr);
        SmallVector<NamedAttribute> row;
        for (NamedAttribute a : info.getValue()) {
          // A collective's START is known by its id; its WAIT names the
          // START's row instead.
          if (a.getName() == "id") {
            startRows[cast<IntegerAttr>(a.getValue()).getInt()] = int64_t(table.size());
            continue;
          }
          if (a.getName() == "start") {
            auto it = startRows.find(cast<IntegerAttr>(a.getValue()).getInt());
            if (it == startRows.end()) {
              c.emitError("collective WAIT before its START");
              return signalPassFailure();
            }
            row.push_back(b.getNamedAttr("params", b.getDenseI64ArrayAttr({it->second})));
            continue;
          }
          if (a.getName() == tcc::attr::filterLayout) {
            filterLayoutRows[cast<IntegerAttr>(a.getValue()).getInt()].push_back(
                int64_t(table.size()));
            continue;
          }
          row.push_back(a);
        }
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
      if (decl.isExternal() && !called.contains(decl.getSymNameAttr()) &&
          llvm::any_of(kFamilies,
                       [&](const CallFamily &f) { return decl.getSymName().starts_with(f.prefix); }))
        decl->erase();
    for (auto [k, f] : llvm::enumerate(kFamilies))
      if (!tables[k].empty())
        module->setAttr(f.table, ArrayAttr::get(ctx, tables[k]));
    if (failed(writeFilterLayouts(module, filterLayoutRows)))
      return signalPassFailure();
  }

  /// The descriptor's metadata of tcc-filter-layouts' sets (abi.h's
  /// TCC_METADATA_FILTER_LAYOUT_PREFIX): each set's rows and state tensors.
  LogicalResult writeFilterLayouts(ModuleOp module,
                                   const std::map<int64_t, SmallVector<int64_t>> &rows) {
    auto sets = module->getAttrOfType<ArrayAttr>(tcc::attr::filterLayouts);
    if (!sets)
      return success();
    module->removeAttr(tcc::attr::filterLayouts);
    MLIRContext *ctx = module.getContext();
    NamedAttrList metadata;
    if (auto existing = module->getAttrOfType<DictionaryAttr>(tcc::attr::metadata))
      metadata.append(existing.getValue());
    for (auto [k, set] : llvm::enumerate(sets)) {
      auto it = rows.find(int64_t(k));
      auto names = dyn_cast<ArrayAttr>(set);
      if (it == rows.end() || !names)
        return module.emitError("tcc.filter_layouts set ") << k << " has no calls or no tensors";
      std::string calls, tensors;
      for (int64_t row : it->second)
        calls += (calls.empty() ? "" : ",") + std::to_string(row);
      for (Attribute name : names)
        tensors += (tensors.empty() ? "" : ";") + cast<StringAttr>(name).getValue().str();
      std::string key = TCC_METADATA_FILTER_LAYOUT_PREFIX + std::to_string(k);
      metadata.set(key + ".calls", StringAttr::get(ctx, calls));
      metadata.set(key + ".tensors", StringAttr::get(ctx, tensors));
    }
    module->setAttr(tcc::attr::metadata, metadata.getDictionary(ctx));
    return success();
  }
};

} // namespace
