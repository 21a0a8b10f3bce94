//===- GpuMergeModules.cpp - all outlined kernels in one gpu.module -------===//
//
// gpu-kernel-outlining makes one gpu.module per launch, and each would become
// a PTX module of its own. One module means one PTX string in the descriptor,
// loaded once per session, and kernel names that say where each came from.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/codegen/KernelText.h"
#include "passes/support/SourceNames.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

#include <cctype>

#define DEBUG_TYPE "tcc-gpu-merge-modules"

namespace tcc {
#define GEN_PASS_DEF_GPUMERGEMODULESPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

constexpr StringLiteral kKernelModule = "tcc_kernels";

struct GpuMergeModulesPass : tcc::impl::GpuMergeModulesPassBase<GpuMergeModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto modules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
    if (modules.empty())
      return;
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto merged = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModule);
    SymbolTable mergedSymbols(merged);
    // Each kernel named after its entry point, its position and the ONNX
    // node it computes ("train_step_12_Softmax_3"), for profiles and errors.
    unsigned counter = 0, shared = 0;
    llvm::StringMap<StringAttr> byText;
    SymbolTable moduleSymbols(module);
    WalkResult walk = module.walk([&](gpu::LaunchFuncOp launch) {
      auto old = moduleSymbols.lookup<gpu::GPUModuleOp>(launch.getKernelModuleName());
      auto kernel = old ? SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
                              old, launch.getKernelName())
                        : nullptr;
      if (!kernel || kernel->getParentOp() != old) {
        launch.emitError("launch of an unknown or already merged kernel");
        return WalkResult::interrupt();
      }
      auto entry = launch->getParentOfType<func::FuncOp>();
      // PTX identifiers are letters, digits, '_' and '$': a length bucket's
      // entry point ("train_step.T_64") gives its '.' up.
      std::string entryName = entry ? entry.getSymName().str() : std::string("kernel");
      for (char &c : entryName)
        if (!isalnum(static_cast<unsigned char>(c)))
          c = '_';
      std::string name = entryName + "_" + std::to_string(counter++) + "_" +
                         tcc::kernelNodeName(launch);
      LLVM_DEBUG(llvm::dbgs() << launch.getKernelModuleName().getValue() << "::"
                              << launch.getKernelName().getValue()
                              << " -> " << kKernelModule << "::" << name << "\n");
      // A kernel equal op for op to one merged already (the entry points
      // repeat the forward's, a transformer's layers repeat theirs) is not
      // compiled twice: the launch calls the first, whose name it keeps.
      std::string text = tcc::kernelText(cast<SymbolOpInterface>(kernel.getOperation()));
      auto [seen, isNew] = byText.try_emplace(text, StringAttr());
      if (!isNew) {
        launch.setKernelAttr(
            SymbolRefAttr::get(merged.getNameAttr(), {FlatSymbolRefAttr::get(seen->second)}));
        ++shared;
        return WalkResult::advance();
      }
      kernel.setName(name);
      kernel->moveBefore(merged.getBody(), merged.getBody()->end());
      mergedSymbols.insert(kernel);
      seen->second = kernel.getNameAttr();
      launch.setKernelAttr(SymbolRefAttr::get(merged.getNameAttr(),
                                              {FlatSymbolRefAttr::get(kernel.getNameAttr())}));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    LLVM_DEBUG(llvm::dbgs() << counter << " launches, " << counter - shared << " kernels\n");
    // What the kernels use (globals cloned into each module), once.
    for (gpu::GPUModuleOp m : modules)
      for (Operation &op : llvm::make_early_inc_range(m.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol || isa<gpu::GPUFuncOp>(op) || mergedSymbols.lookup(symbol.getNameAttr()))
          continue;
        op.moveBefore(merged.getBody(), merged.getBody()->end());
        mergedSymbols.insert(&op);
      }
    for (gpu::GPUModuleOp m : modules)
      m->erase();
  }
};

} // namespace
