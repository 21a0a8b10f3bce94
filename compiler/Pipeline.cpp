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

void tcc::buildTrainingPipeline(mlir::OpPassManager &pm, const TrainingOptions &options,
                                const RematOptions &remat, bool reportPrecision) {
  // Composite activations as primitives: the gradient rules cover those.
  pm.addNestedPass<mlir::func::FuncOp>(tcc::createExpandCompositesPass());
  pm.addPass(tcc::createBuildTrainStepPass(options));
  // The backward pass repeats forward subexpressions and multiplies by ones.
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  // tf32 stores and computes what fp32 does; only the library calls differ.
  if (tcc::isSixteenBit(options.precision)) {
    // On the joint graph after CSE: one cast per value, and the backward's
    // reads of forward values see the forward's 16-bit types.
    PrecisionPassOptions precision;
    precision.precision = options.precision;
    precision.report = reportPrecision;
    pm.addPass(tcc::createPrecisionPass(precision));
    // Casts of constants fold; bf16 -> f32 -> bf16 round trips go.
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
  }
  // Recomputation after CSE, which would merge the clones back, and before
  // fusion on linalg, which fuses recomputed elementwise chains into the
  // backward kernels that read them (tcc-keep-recomputed keeps the rest
  // apart through the CSE after fusion).
  if (remat.mode != tcc::RematMode::Off)
    pm.addNestedPass<mlir::func::FuncOp>(tcc::createRematerializePass(remat));
}
