//===- ReverseMode.h - reverse-mode automatic differentiation -------------===//
//
// Gradients of a tcc function, from the per-op rules of
// DifferentiableOpInterface (GradientRules.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_TRAINING_AUTODIFF_REVERSEMODE_H
#define TCC_PASSES_TRAINING_AUTODIFF_REVERSEMODE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tcc {

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

#endif // TCC_PASSES_TRAINING_AUTODIFF_REVERSEMODE_H
