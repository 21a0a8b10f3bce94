//===- Registration.cpp - dialects and passes the tools register ----------===//
//
// tcc-opt is a superset of mlir-opt: it knows every upstream dialect, every
// upstream pass and the tcc ones, so lit tests can run any stage of tcc's
// pipelines, and lowered IR can be handed to mlir-runner for numeric tests.
//
//===----------------------------------------------------------------------===//

#include "compiler/Registration.h"

#include "dialects/TccOps.h"
#include "passes/Passes.h"
#include "passes/graph/KernelCost.h"
#include "compiler/cpu/CpuPipeline.h"
#include "compiler/cuda/CudaPipeline.h"

#include "passes/memory/Collectives.h"
#include "passes/training/autodiff/GradientRules.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void tcc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<tcc::TccDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  tcc::registerGradientRules(registry);
  tcc::registerCollectiveBufferization(registry);
  tcc::registerKernelCostModels(registry);
  // gpu-module-to-binary translates kernels (LLVM + NVVM dialects) to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
}

void tcc::registerAllPasses() {
  mlir::registerAllPasses();
  tcc::registerTccPasses();
  tcc::registerCpuPipelines();
  tcc::registerCudaPipelines();
}
