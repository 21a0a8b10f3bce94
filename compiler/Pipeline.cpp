//===- Pipeline.cpp - tcc's pass pipelines --------------------------------===//

#include "compiler/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

void tcc::buildImportPipeline(mlir::OpPassManager &pm) {
  // The importer folds as it builds; canonicalize catches what only became
  // constant later (an op whose operands folded after it was created).
  pm.addPass(mlir::createCanonicalizerPass());
  // Decompositions repeat subexpressions (shape broadcasts, 1/sqrt(var+eps)).
  pm.addPass(mlir::createCSEPass());
}
