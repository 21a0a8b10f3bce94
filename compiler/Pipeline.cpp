//===- Pipeline.cpp - tcc's pass pipelines --------------------------------===//

#include "compiler/Pipeline.h"

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

void tcc::buildImportPipeline(mlir::OpPassManager &pm) {
  // The importer folds as it builds; canonicalize catches what only became
  // constant later (an op whose operands folded after it was created).
  pm.addPass(mlir::createCanonicalizerPass());
  // Decompositions repeat subexpressions (shape broadcasts, 1/sqrt(var+eps)).
  pm.addPass(mlir::createCSEPass());
}

void tcc::buildTrainingPipeline(mlir::OpPassManager &pm, const TrainingOptions &options) {
  // Composite activations as primitives: the gradient rules cover those.
  pm.addNestedPass<mlir::func::FuncOp>(tcc::createExpandCompositesPass());
  pm.addPass(tcc::createBuildTrainStepPass(options));
  // The backward pass repeats forward subexpressions and multiplies by ones.
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}
