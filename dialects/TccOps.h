//===- TccOps.h - ops of the tcc dialect ----------------------------------===//
//
// The generated op classes plus the shape helpers that the importer and the
// passes share with the ops' type inference.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_DIALECTS_TCCOPS_H
#define TCC_DIALECTS_TCCOPS_H

#include "dialects/TccDialect.h"
#include "dialects/TccInterfaces.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/TccEnums.h.inc"

#define GET_OP_CLASSES
#include "dialects/TccOps.h.inc"

namespace tcc {

/// Largest element count tcc accepts for one tensor; every product of
/// dimensions is checked against it so that a hostile model cannot overflow.
constexpr int64_t kMaxElements = int64_t(1) << 48;

/// Returns the element count of `shape`, or std::nullopt when a dimension is
/// negative or the product exceeds kMaxElements.
std::optional<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape);

/// Output size of one spatial dimension of a convolution or pooling window.
/// Returns a value < 1 when the window does not fit.
int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                         int64_t dilation, int64_t padLow, int64_t padHigh,
                         bool ceilMode);

/// A shape as "[2,3,4]", for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Shape after reducing `axes` (sorted, unique, in range) of `shape`.
llvm::SmallVector<int64_t> reducedShape(llvm::ArrayRef<int64_t> shape,
                                        llvm::ArrayRef<int64_t> axes,
                                        bool keepDims);

/// The element type in which batch-norm statistics and their gradient sums
/// accumulate for inputs of ELEMENT type: f64 for f32 and narrower floats (as
/// PyTorch's CPU kernels: the sums run over N x H x W elements per channel),
/// the type itself otherwise. The lowering and the gradient rule share it.
mlir::Type batchNormAccumulatorType(mlir::Type element);

/// gather_nd of DATA [D_0, ..., D_r-1] at the index tuples INDICES [B..., k]
/// (batch_dims 0): the result [B..., D_k, ...]. Each index component is
/// wrapped (negative counts from the end) and clamped into its dimension, as
/// scatter_nd's lowering does. Built as one gather, so it has a gradient.
mlir::Value buildGatherNd(mlir::OpBuilder &b, mlir::Location loc, mlir::Value data,
                          mlir::Value indices);

} // namespace tcc

#endif // TCC_DIALECTS_TCCOPS_H
