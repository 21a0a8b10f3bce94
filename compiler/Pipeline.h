//===- Pipeline.h - tcc's pass pipelines ----------------------------------===//
//
// Pipelines are functions; the tools stay thin and stop them at any stage.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_PIPELINE_H
#define TCC_COMPILER_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace tcc {

/// What follows import: the IR the importer built, folded and deduplicated.
void buildImportPipeline(mlir::OpPassManager &pm);

} // namespace tcc

#endif // TCC_COMPILER_PIPELINE_H
