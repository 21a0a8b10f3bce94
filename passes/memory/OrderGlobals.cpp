//===- OrderGlobals.cpp - constant globals in a deterministic order -------===//
//
// One-shot bufferization creates a `memref.global` per tensor constant in the
// order in which it visits functions, and it orders functions through maps
// keyed by their addresses: with a multithreaded context, one model gave
// modules (and artifacts) that differed from run to run in the order and the
// numbering of their constants. This pass gives them the order and the names
// of their first use, so that the output depends on the input alone.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

#define DEBUG_TYPE "tcc-order-globals"

namespace tcc {
#define GEN_PASS_DEF_ORDERGLOBALSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// "16x32xf32" for memref<16x32xf32>.
std::string shapeName(MemRefType type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (int64_t d : type.getShape())
    os << d << "x";
  os << type.getElementType();
  return s;
}

struct OrderGlobalsPass : tcc::impl::OrderGlobalsPassBase<OrderGlobalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The private constants, by name; only they are renamed or moved.
    llvm::StringMap<memref::GlobalOp> constants;
    for (auto global : module.getOps<memref::GlobalOp>())
      if (global.isPrivate() && global.getConstant())
        constants[global.getSymName()] = global;
    if (constants.empty())
      return;
    // First uses in program order; every use, to rename it.
    llvm::MapVector<memref::GlobalOp, SmallVector<memref::GetGlobalOp>> uses;
    bool escaped = false;
    module.walk([&](Operation *op) {
      if (auto get = dyn_cast<memref::GetGlobalOp>(op)) {
        if (auto it = constants.find(get.getName()); it != constants.end())
          uses[it->second].push_back(get);
        return;
      }
      // Any other reference to a constant (none is expected) keeps the names.
      for (NamedAttribute a : op->getAttrs())
        if (auto ref = dyn_cast<FlatSymbolRefAttr>(a.getValue()))
          if (!isa<memref::GlobalOp>(op) && constants.count(ref.getValue()))
            escaped = true;
    });
    if (escaped)
      return;
    // Unused constants are dead.
    for (auto &[name, global] : constants)
      if (!uses.count(global))
        global.erase();
    Block &body = module.getBodyRegion().front();
    Operation *insertAfter = nullptr;
    MLIRContext *ctx = module.getContext();
    for (auto [index, entry] : llvm::enumerate(uses)) {
      auto &[global, gets] = entry;
      std::string name = "__constant_" + std::to_string(index) + "_" + shapeName(global.getType());
      LLVM_DEBUG(llvm::dbgs() << "tcc-order-globals: @" << global.getSymName() << " -> @" << name
                              << " (" << gets.size() << " uses)\n");
      global.setSymName(name);
      for (memref::GetGlobalOp get : gets)
        get.setNameAttr(FlatSymbolRefAttr::get(ctx, name));
      if (insertAfter)
        global->moveAfter(insertAfter);
      else
        global->moveBefore(&body, body.begin());
      insertAfter = global;
    }
  }
};

} // namespace
