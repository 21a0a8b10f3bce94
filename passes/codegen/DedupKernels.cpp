//===- DedupKernels.cpp - one function per distinct kernel ----------------===//
//
// The entry points repeat the forward's kernels and a transformer repeats
// each layer's: after outlining, many kernel functions are the same op for
// op. Keeping one of each is the cheapest compile-time win there is, since
// LLVM's time is spent per function. Naming the survivor after a hash of its
// body makes the symbol (and so the object code the compile cache keys)
// independent of where in the model the kernel sits.
//
//===----------------------------------------------------------------------===//

#include "passes/codegen/KernelText.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "tcc-dedup-kernels"

namespace tcc {
#define GEN_PASS_DEF_DEDUPKERNELSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kKernelPrefix = "kernel_";

std::string contentName(StringRef text) {
  std::array<uint8_t, 8> digest = llvm::BLAKE3::hash<8>(
      ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
  return (kKernelPrefix + llvm::toHex(digest, /*LowerCase=*/true)).str();
}

struct DedupKernelsPass : tcc::impl::DedupKernelsPassBase<DedupKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn.getSymName().starts_with(kKernelPrefix) && !fn.isExternal())
        kernels.push_back(fn);
    // Survivors by text, in the module's order; every other kernel maps to
    // the survivor with its text.
    llvm::StringMap<func::FuncOp> byText;
    llvm::DenseMap<StringAttr, StringAttr> renamed;
    llvm::StringSet<> names;
    SmallVector<func::FuncOp> duplicates;
    for (func::FuncOp kernel : kernels) {
      std::string text = tcc::kernelText(kernel);
      StringAttr old = kernel.getSymNameAttr();
      auto [it, inserted] = byText.try_emplace(text, kernel);
      if (!inserted) {
        renamed[old] = it->second.getSymNameAttr();
        duplicates.push_back(kernel);
        continue;
      }
      // Distinct texts whose 64-bit hashes collide keep apart by a suffix.
      std::string name = contentName(text);
      for (unsigned n = 1; !names.insert(name).second; ++n)
        name = contentName(text) + "_" + std::to_string(n);
      kernel.setSymName(name);
      renamed[old] = kernel.getSymNameAttr();
    }
    module.walk([&](func::CallOp call) {
      if (StringAttr to = renamed.lookup(call.getCalleeAttr().getAttr()))
        call.setCalleeAttr(FlatSymbolRefAttr::get(to));
    });
    for (func::FuncOp dup : duplicates)
      dup.erase();
    if (report)
      llvm::errs() << "tcc-dedup-kernels: " << kernels.size() << " kernels, "
                   << byText.size() << " distinct\n";
    LLVM_DEBUG(llvm::dbgs() << kernels.size() << " kernels, " << byText.size() << " distinct\n");
  }
};

} // namespace
