//===- Pipeline.h - tcc's pass pipelines ----------------------------------===//
//
// Pipelines are functions; the tools stay thin and stop them at any stage.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_PIPELINE_H
#define TCC_COMPILER_PIPELINE_H

#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

namespace tcc {

/// What follows import: the IR the importer built, folded and deduplicated.
void buildImportPipeline(mlir::OpPassManager &pm);

/// The training step's options are tcc-build-train-step's own (Passes.td
/// documents each field and its default).
using TrainingOptions = BuildTrainStepPassOptions;

/// Rematerialization's budget and mode: tcc-rematerialize's own options.
using RematOptions = RematerializePassOptions;

/// Adds `@train_step` next to `@forward` (tcc-build-train-step), then, with
/// a 16-bit `options.precision`, the precision policy (tcc-precision; its
/// table on stderr with REPORT_PRECISION), then recomputes forward values in
/// the backward pass as REMAT says (after precision: the values it weighs
/// have their 16-bit sizes).
void buildTrainingPipeline(mlir::OpPassManager &pm, const TrainingOptions &options,
                           const RematOptions &remat = {}, bool reportPrecision = false);

} // namespace tcc

#endif // TCC_COMPILER_PIPELINE_H
