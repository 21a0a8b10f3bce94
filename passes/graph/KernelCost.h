//===- KernelCost.h - the one cost model of kernels and tcc ops -----------===//

#ifndef TCC_PASSES_GRAPH_KERNELCOST_H
#define TCC_PASSES_GRAPH_KERNELCOST_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#include "passes/graph/KernelCost.h.inc"

namespace tcc {

/// The weights of one iteration's arithmetic (KernelCost.td), shared by the
/// models of linalg's ops (per op of a body) and of tcc's ops (per op).
namespace cost {
/// Index ops, constants, yields, views: no arithmetic.
constexpr double kFree = 0;
/// An add, multiply, compare, select, cast, abs or fma.
constexpr double kSimple = 1;
/// A division, remainder or square root.
constexpr double kDivision = 8;
/// A gathered element: a load whose address was computed from data.
constexpr double kGather = 8;
/// A transcendental function: exp, log, tanh, erf, pow, sin, ...
constexpr double kTranscendental = 16;
/// A matmul's or convolution's multiply-add: a multiply and an add.
constexpr double kMultiplyAdd = 2 * kSimple;
/// Softmax per input element: a max, a subtraction, an exp, a sum and a
/// scaling.
constexpr double kSoftmax = kTranscendental + 4 * kSimple;
/// Layer norm per input element: the mean's and the variance's sums, the
/// centring and squaring, the normalization, the scale and the shift, over
/// three passes of the row.
constexpr double kLayerNorm = 10 * kSimple;
} // namespace cost

/// The weighted arithmetic of OP: its iterations times its cost per point,
/// or for an op without a model (not linalg, not tcc) one simple op per
/// element of the larger of its first result and its first operand.
double arithmetic(mlir::Operation *op);

/// Attaches KernelCostOpInterface to linalg's ops and to tcc's ops.
void registerKernelCostModels(mlir::DialectRegistry &registry);

} // namespace tcc

#endif // TCC_PASSES_GRAPH_KERNELCOST_H
