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
  tcc::BuildTrainStepPassOptions step;
  step.loss = options.loss;
  step.labels = options.labels;
  step.optimizer = options.optimizer;
  step.momentum = options.momentum;
  step.dampening = options.dampening;
  step.nesterov = options.nesterov;
  step.weightDecay = options.weightDecay;
  step.beta1 = options.beta1;
  step.beta2 = options.beta2;
  step.eps = options.eps;
  step.gradClip = options.gradClip;
  step.gradAccum = options.gradAccum;
  step.freeze.assign(options.freeze.begin(), options.freeze.end());
  step.ignoreIndex = options.ignoreIndex;
  step.labelSmoothing = options.labelSmoothing;
  pm.addPass(tcc::createBuildTrainStepPass(step));
  // The backward pass repeats forward subexpressions and multiplies by ones.
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}
