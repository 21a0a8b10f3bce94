//===- ConvBackward.h - convolution gradients as library calls ------------===//
//
// tcc-lower-to-linalg marks the linalg op that computes a 2-D convolution's
// data gradient (the named convolution of a conv_transpose) or filter
// gradient (the generic of a conv_backward_filter) with tcc.conv_backward:
// the library call it is (abi.h's CONV2D_BACKWARD_DATA / _WEIGHTS) and the
// call's parameters, which the op itself no longer shows (a data gradient
// reads a zero-dilated copy of dY and a flipped copy of W). Fusion leaves
// marked ops whole; tcc-mark-library-calls turns them into the calls. What
// the lowering and the two passes share lives here.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_LOWERING_CONVBACKWARD_H
#define TCC_PASSES_LOWERING_CONVBACKWARD_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace tcc {

/// A tcc.conv_backward marker: the call's kind and its first 17 parameters
/// (N, C, H, W, F, KH, KW, OH, OW, strides, dilations, pads; abi.h's CONV2D
/// order); accumulate and groups are the library-call pass's.
struct ConvBackwardMarker {
  int32_t kind;
  llvm::SmallVector<int64_t> params;
  int64_t groups;
};

/// The marker of OP, or nullopt when OP has none (or a malformed one).
std::optional<ConvBackwardMarker> getConvBackwardMarker(mlir::Operation *op);

/// Whether OP carries a marker: fusion must leave it whole.
bool isConvBackward(mlir::Operation *op);

/// Marks OP as library call KIND with PARAMS (17 entries) and GROUPS.
void setConvBackwardMarker(mlir::Operation *op, int32_t kind, llvm::ArrayRef<int64_t> params,
                           int64_t groups);

/// The 17 geometry parameters of the 2-D convolution of X [N, C, H, W] by a
/// filter [F, C/G, KH, KW] into Y [N, F, OH, OW] with STRIDES, DILATIONS
/// and PAD_LOW, with the high padding that makes OH and OW follow exactly
/// (max(0, what the windows reach past the input): rows no window reads
/// are no padding); nullopt when no non-negative padding does (the
/// windows leave more than a stride unread) or a pad_low is negative.
std::optional<llvm::SmallVector<int64_t>>
conv2dCallParams(llvm::ArrayRef<int64_t> x, llvm::ArrayRef<int64_t> w, llvm::ArrayRef<int64_t> y,
                 llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> dilations,
                 llvm::ArrayRef<int64_t> padLow);

/// The indexing map by which the flipped copy of a conv_transpose filter
/// (loops over the copy [G, M/G, C/G, K...], or [M, C, K...] for one group)
/// reads the filter [G, C/G, M/G, K...] (or [C, M, K...]): channel roles
/// swapped within the group, every spatial index K-1-k.
mlir::AffineMap flippedFilterMap(mlir::MLIRContext *ctx, int64_t group,
                                 llvm::ArrayRef<int64_t> kernel);

} // namespace tcc

#endif // TCC_PASSES_LOWERING_CONVBACKWARD_H
