//===- Pipeline.h - tcc's pass pipelines ----------------------------------===//
//
// Pipelines are functions; the tools stay thin and stop them at any stage.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_PIPELINE_H
#define TCC_COMPILER_PIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace tcc {

/// What follows import: the IR the importer built, folded and deduplicated.
void buildImportPipeline(mlir::OpPassManager &pm);

struct TrainingOptions {
  std::string loss;      ///< mse, cross_entropy, none
  std::string labels = "y";
  std::string optimizer = "sgd";
  double momentum = 0, dampening = 0;
  bool nesterov = false;
  double weightDecay = -1; ///< < 0: the optimizer's default
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double gradClip = 0; ///< global-norm clipping, 0: none
  int64_t gradAccum = 1; ///< micro-batches per optimizer step
  std::vector<std::string> freeze; ///< glob patterns of parameters not trained
  int64_t ignoreIndex = -100; ///< cross_entropy: label that does not count
  double labelSmoothing = 0;
};

/// Adds `@train_step` next to `@forward` (tcc-build-train-step).
void buildTrainingPipeline(mlir::OpPassManager &pm, const TrainingOptions &options);

} // namespace tcc

#endif // TCC_COMPILER_PIPELINE_H
