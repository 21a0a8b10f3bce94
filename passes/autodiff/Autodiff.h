//===- Autodiff.h - reverse-mode automatic differentiation ----------------===//
//
// Gradients of a tcc function, from the per-op rules of
// DifferentiableOpInterface (GradientRules.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_AUTODIFF_AUTODIFF_H
#define TCC_PASSES_AUTODIFF_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"

namespace tcc {

/// A boolean tensor shaped like SCORES that is true where the index along
/// CLASS_AXIS equals LABELS (integers shaped like SCORES without that axis):
/// the one-hot selection of cross-entropy and NLL, built in tcc ops.
mlir::Value buildLabelMatch(mlir::OpBuilder &b, mlir::Location loc, mlir::Value labels,
                            mlir::RankedTensorType scores, int64_t classAxis);

/// Attaches the gradient rules to the tcc ops.
void registerGradientRules(mlir::DialectRegistry &registry);

/// Builds, next to FUNC, the function NAME that takes FUNC's arguments and
/// returns FUNC's first result (the loss: a float tensor of one element)
/// followed by the gradient of the loss with respect to each argument in WRT
/// (float tensors), in order. Arguments the loss does not depend on get a
/// zero gradient. A declaration of NAME is replaced by the definition. Fails
/// with one diagnostic listing every op on the path from WRT to the loss that
/// has no gradient rule.
mlir::FailureOr<mlir::func::FuncOp>
buildGradientFunction(mlir::func::FuncOp func, llvm::ArrayRef<unsigned> wrt,
                      llvm::StringRef name);

} // namespace tcc

#endif // TCC_PASSES_AUTODIFF_AUTODIFF_H
