//===- GradientRules.h - the gradient of each differentiable tcc op -------===//
//
// The rules are external models of DifferentiableOpInterface, attached to the
// tcc ops by registration, so that the dialect does not depend on them.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_TRAINING_AUTODIFF_GRADIENTRULES_H
#define TCC_PASSES_TRAINING_AUTODIFF_GRADIENTRULES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"

namespace tcc {

/// A boolean tensor shaped like SCORES that is true where the index along
/// CLASS_AXIS equals LABELS (integers shaped like SCORES without that axis):
/// the one-hot selection of cross-entropy and NLL, built in tcc ops.
mlir::Value buildLabelMatch(mlir::OpBuilder &b, mlir::Location loc, mlir::Value labels,
                            mlir::RankedTensorType scores, int64_t classAxis);

/// Attaches the gradient rules to the tcc ops.
void registerGradientRules(mlir::DialectRegistry &registry);

} // namespace tcc

#endif // TCC_PASSES_TRAINING_AUTODIFF_GRADIENTRULES_H
