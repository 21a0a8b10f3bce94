//===- Patterns.h - shared pieces of the tcc -> linalg lowering -----------===//
//
// The conversion patterns of --tcc-lower-to-linalg are split over several
// files so that they compile in parallel; this header holds what they share:
// the type converter (unsigned -> signless), the populate functions, and small
// builders for tensors, constants, linalg.generic and index arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_LOWERING_PATTERNS_H
#define TCC_PASSES_LOWERING_PATTERNS_H

#include "dialects/TccOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tcc::lowering {

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// Converts unsigned integers (and tensors of them) to signless integers of
/// the same width; every other type is legal as it is. Unsigned semantics
/// survive in the choice of arith ops (divui, cmpi ult, uitofp, ...), which
/// the patterns read from the tcc op's original types.
class SignlessTypeConverter : public mlir::TypeConverter {
public:
  SignlessTypeConverter();
};

/// What the patterns need to know about a tcc element type.
struct ElemKind {
  mlir::Type type; ///< the converted (signless) element type
  bool isFloat = false;
  bool isUnsigned = false; ///< unsigned integer, or i1 (bool)
  bool isBool = false;
};

/// Classifies the element type of `tccType` (a tensor or scalar type as it was
/// before conversion, so that unsignedness is still visible).
ElemKind elemKind(mlir::Type tccType);

/// The converted ranked tensor type of `t`.
mlir::RankedTensorType convertedTensorType(const mlir::TypeConverter &tc,
                                           mlir::Type t);

//===----------------------------------------------------------------------===//
// Constants and scalar helpers
//===----------------------------------------------------------------------===//

/// A scalar constant of `type` (float, integer or index) with value `v`;
/// integers take `int64_t(v)`.
mlir::Value scalarConst(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                        double v);
mlir::Value indexConst(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
mlir::Value intConst(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                     int64_t v);

/// The smallest value of an element type (-inf, INT_MIN, or 0 for unsigned):
/// the identity of max and the padding of max pooling.
mlir::Value lowestValue(mlir::OpBuilder &b, mlir::Location loc,
                        const ElemKind &k);
/// The largest value (+inf, INT_MAX, UINT_MAX): the identity of min.
mlir::Value highestValue(mlir::OpBuilder &b, mlir::Location loc,
                         const ElemKind &k);

/// Scalar add / mul / max / min for the element kind; max and min propagate
/// NaN (arith.maximumf / minimumf) and respect signedness.
mlir::Value addScalar(mlir::OpBuilder &b, mlir::Location loc, const ElemKind &k,
                      mlir::Value x, mlir::Value y);
mlir::Value mulScalar(mlir::OpBuilder &b, mlir::Location loc, const ElemKind &k,
                      mlir::Value x, mlir::Value y);
mlir::Value maxScalar(mlir::OpBuilder &b, mlir::Location loc, const ElemKind &k,
                      mlir::Value x, mlir::Value y);
mlir::Value minScalar(mlir::OpBuilder &b, mlir::Location loc, const ElemKind &k,
                      mlir::Value x, mlir::Value y);
/// Division that never traps: floats divide; integers divide with the
/// signedness of `k` (truncating toward zero), x / 0 is 0 and INT_MIN / -1
/// wraps to INT_MIN.
mlir::Value divScalar(mlir::OpBuilder &b, mlir::Location loc, const ElemKind &k,
                      mlir::Value x, mlir::Value y);

/// Converts a scalar between element kinds with tcc.cast's rules.
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                       const ElemKind &from, const ElemKind &to);

/// Turns an index value read from a tensor (any integer type, signed) into an
/// `index` inside [0, size): negative values wrap once (+ size), then the
/// result is clamped, so that no access is ever out of bounds.
mlir::Value wrapAndClampIndex(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value idx, int64_t size);

//===----------------------------------------------------------------------===//
// Tensors and linalg
//===----------------------------------------------------------------------===//

/// Static offsets / sizes / strides for the tensor slice ops.
llvm::SmallVector<mlir::OpFoldResult> indexAttrs(mlir::OpBuilder &b,
                                                 llvm::ArrayRef<int64_t> v);

mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        llvm::ArrayRef<int64_t> shape, mlir::Type elementType);
/// tensor.empty + linalg.fill.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         llvm::ArrayRef<int64_t> shape, mlir::Value scalar);

/// A fresh tensor of SHAPE whose element at index i is `in` read at READ(i)
/// (one parallel linalg.generic: a transpose, a flip, an im2col).
mlir::Value copyThroughMap(mlir::OpBuilder &b, mlir::Location loc, mlir::Value in,
                           mlir::AffineMap read, llvm::ArrayRef<int64_t> shape);

/// Reshapes `v` to `type` (same element count) with collapse_shape /
/// expand_shape, through 1-D when no single reassociation exists.
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                      mlir::RankedTensorType type);

llvm::SmallVector<mlir::utils::IteratorType> parallelIterators(unsigned n);

/// A linalg.generic over the shape of `resultType`: every input has that
/// shape (identity maps), `fn` maps the scalars of the inputs to the result.
using ScalarFn = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;
mlir::Value mapElementwise(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::RankedTensorType resultType,
                           mlir::ValueRange inputs, ScalarFn fn);

/// The affine map (d0..d[rank-1]) -> (d[i] for i not in `dropped`): reads a
/// tensor whose `dropped` dimensions were reduced away.
mlir::AffineMap dropDimsMap(mlir::MLIRContext *ctx, unsigned rank,
                            llvm::ArrayRef<int64_t> dropped);

/// Shape of `shape` without the dimensions in `dropped`.
llvm::SmallVector<int64_t> dropDims(llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<int64_t> dropped);

//===----------------------------------------------------------------------===//
// Pattern sets, one per file
//===----------------------------------------------------------------------===//

/// constant and every elementwise op (unary, binary, compare, select, cast).
void populateElementwisePatterns(const mlir::TypeConverter &tc,
                                 mlir::RewritePatternSet &patterns);
/// broadcast_in_dim, reshape, transpose, concat, slice, pad, gather,
/// gather_elements, scatter_elements, scatter_nd.
void populateDataMovementPatterns(const mlir::TypeConverter &tc,
                                  mlir::RewritePatternSet &patterns);
/// reduce_*, argmax / argmin, cumsum.
void populateReductionPatterns(const mlir::TypeConverter &tc,
                               mlir::RewritePatternSet &patterns);
/// Gives the filter gradients under ROOT back the taps that only meet
/// padding where that makes them one GEMM that writes the whole filter (a
/// zero pad of a conv_backward_filter: LinalgNN.cpp's fullFilterGradient);
/// on the tcc ops, before the conversion.
void useFullFilterGradients(mlir::Operation *root);
/// The zero pads under ROOT (the filter gradients useFullFilterGradients
/// leaves: 16-bit ones) read where they are used: a sum of all of a zero
/// pad's squares (a gradient norm) sums the unpadded tensor's instead, and
/// each pad moves right before its first remaining reader (an optimizer's
/// update, which tcc-fuse-rows then runs with the pad row by row).
void sinkZeroPads(mlir::Operation *root);
/// matmul, conv, conv_transpose, max_pool, avg_pool. With
/// SIXTEENBITMATMULS a bf16 / f16 matmul reads its 16-bit operands directly
/// into f32 sums (for cuBLASLt and oneDNN), with SIXTEENBITCONVS a
/// convolution and its gradients likewise (for oneDNN); otherwise they are
/// widened first. With FEWPOINTGEMMS a convolution over few points is a
/// matmul of its input's windows and its data gradient a matmul and a
/// gather (LinalgNN.cpp's convolutionAsGemm, dataGradientAsGemm); with
/// GEMMCONVOLUTIONS every one-group float one, whatever its size (tests).
void populateLinalgNNPatterns(const mlir::TypeConverter &tc,
                              mlir::RewritePatternSet &patterns,
                              bool sixteenBitMatmuls = false, bool sixteenBitConvs = false,
                              bool fewPointGemms = false, bool gemmConvolutions = false);
/// softmax, log_softmax, layer_norm, batch_norm_*, nll_loss, dropout.
void populateNormalizationPatterns(const mlir::TypeConverter &tc,
                                   mlir::RewritePatternSet &patterns);
/// resize.
void populateResizePatterns(const mlir::TypeConverter &tc,
                            mlir::RewritePatternSet &patterns);

/// The divisors of an average pooling along spatial dimension I (0-based
/// among the spatial ones), one per output index: the window elements that
/// fall inside the input (and, with count_include_pad, its explicit
/// padding), at least 1. The lowering divides by their product; the gradient
/// rule multiplies by its inverse.
llvm::SmallVector<int64_t> avgPoolDivisors(AvgPoolOp op, int64_t i);

/// The taps of output coordinate O of one dimension of a resize (IN input,
/// OUT_SIZE output elements, the dimension's scale and roi): the input
/// indices it reads (clamped into the input) and their weights, or !valid
/// where tf_crop_and_resize extrapolates. The lowering samples with these and
/// the gradient rule builds resize's adjoint from them.
struct ResizeTaps {
  llvm::SmallVector<int64_t> index;
  llvm::SmallVector<double> weight;
  bool valid = true;
};
ResizeTaps computeResizeTaps(ResizeOp op, int64_t o, int64_t in, int64_t outSize, double scale,
                             double roiStart, double roiEnd);

} // namespace tcc::lowering

#endif // TCC_PASSES_LOWERING_PATTERNS_H
