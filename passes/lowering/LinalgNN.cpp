//===- LinalgNN.cpp - matmul, convolution and pooling to linalg -----------===//
//
// Named linalg ops wherever one computes exactly what the tcc op says:
// matmul / batch_matmul, the channels-first convolutions (plain, depthwise,
// 2-D grouped) and poolings; a linalg.generic over (n, g, m, o..., c, k...)
// for everything else (any spatial rank, groups, dilations). Padding is an
// explicit tensor.pad, so the named ops see only valid windows.
//
// conv_transpose is lowered as the convolution that is its definition's
// adjoint: the input is zero-dilated by the stride (tensor.insert_slice with
// strides into zeros) and padded by dilation * (kernel - 1), then convolved
// with stride 1, in the same groups, with the spatially flipped filter,
// whose in / out channel roles are swapped within each group. The flipped
// filter is a (filter-sized) copy, so that the convolution is the same
// named op a forward one is (plain, depthwise, 2-D grouped). A 2-D one is
// a convolution's data gradient: the named op carries tcc.conv_backward
// (passes/lowering/ConvBackward.h), and tcc-mark-library-calls makes it one
// CONV2D_BACKWARD_DATA call on dY and W themselves, which never multiplies
// the inserted zeros; the loops that stay elsewhere (no library, other
// ranks) do, a factor stride^k.
//
// conv_backward_filter is one linalg.generic over the padded input and the
// gradient (loops g, m, c, k..., then the reductions n, o...); a 2-D one
// carries tcc.conv_backward too (a CONV2D_BACKWARD_WEIGHTS call). One that
// sums over few output points is a matmul over the input's windows instead
// (filterGradientAsGemm).
//===----------------------------------------------------------------------===//

#include "passes/lowering/ConvBackward.h"
#include "passes/lowering/MatmulMaps.h"
#include "passes/lowering/Patterns.h"

#include "runtime/include/tcc/abi.h"

#include "mlir/IR/AffineExpr.h"

using namespace mlir;
using namespace tcc;
using namespace tcc::lowering;

namespace {

RankedTensorType withShape(Value v, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(
      shape, cast<RankedTensorType>(v.getType()).getElementType());
}

/// Pads the spatial dimensions (2..) of `x` with `value`; the batch and
/// channel dimensions are left alone.
Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                 ArrayRef<int64_t> high, Value value) {
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> lo = {0, 0}, hi = {0, 0}, shape(type.getShape());
  llvm::append_range(lo, low);
  llvm::append_range(hi, high);
  for (size_t d = 0; d < shape.size(); ++d)
    shape[d] += lo[d] + hi[d];
  return tensor::PadOp::create(b, loc, withShape(x, shape), x,
                               indexAttrs(b, lo), indexAttrs(b, hi), value);
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

/// A * B -> linalg.matmul (rank 2) or linalg.batch_matmul into a fresh
/// zero-filled tensor of OUTTYPE, with several batch dimensions collapsed
/// into one and expanded again. OUTTYPE's element type is the sums' type:
/// linalg's matmuls convert each operand to it before multiplying, so 16-bit
/// operands with an f32 OUTTYPE are f32 products summed in f32. With
/// TRANSPOSEDB (rank 2 only) RHS is B^T, read through the matmul's maps.
Value lowerMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs, RankedTensorType outType,
                  bool transposedB = false) {
  int64_t rank = outType.getRank();
  Value zero = scalarConst(b, loc, outType.getElementType(), 0);
  if (rank == 2) {
    Value init = filledTensor(b, loc, outType.getShape(), zero);
    SmallVector<NamedAttribute> attrs;
    if (transposedB)
      attrs.push_back(b.getNamedAttr("indexing_maps", tcc::matmulMaps(b, false, true)));
    return linalg::MatmulOp::create(b, loc, TypeRange{outType}, ValueRange{lhs, rhs},
                                    ValueRange{init}, attrs)
        ->getResult(0);
  }
  assert(!transposedB && "a transposed B only for 2-D products");
  // Collapse the batch dimensions into one.
  auto collapse = [&](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    int64_t batch = 1;
    for (int64_t d = 0; d < rank - 2; ++d)
      batch *= t.getDimSize(d);
    return reshapeTo(b, loc, v,
                     withShape(v, {batch, t.getDimSize(rank - 2), t.getDimSize(rank - 1)}));
  };
  Value a3 = collapse(lhs), b3 = collapse(rhs);
  auto a3t = cast<RankedTensorType>(a3.getType());
  auto b3t = cast<RankedTensorType>(b3.getType());
  SmallVector<int64_t> shape3 = {a3t.getDimSize(0), a3t.getDimSize(1), b3t.getDimSize(2)};
  Value init = filledTensor(b, loc, shape3, zero);
  auto bmm = linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()}, ValueRange{a3, b3},
                                           ValueRange{init});
  return reshapeTo(b, loc, bmm->getResult(0), outType);
}

/// matmul -> lowerMatmul in the result's type.
struct MatmulLowering : OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto outType = convertedTensorType(*getTypeConverter(), op.getType());
    rewriter.replaceOp(op, lowerMatmul(rewriter, op.getLoc(), adaptor.getLhs(),
                                       adaptor.getRhs(), outType));
    return success();
  }
};

/// A bf16 / f16 matmul of operands of its own type, for libraries that take
/// 16-bit operands with f32 sums (cuBLASLt): the linalg matmul reads the
/// 16-bit operands as they are into an f32 result, rounded once to the
/// op's type. The same numbers as WidenSixteenBitProduct (a product of two
/// 16-bit floats is exact in f32), without the widened copies.
struct SixteenBitMatmul : OpConversionPattern<MatmulOp> {
  SixteenBitMatmul(const TypeConverter &tc, MLIRContext *ctx)
      : OpConversionPattern<MatmulOp>(tc, ctx, /*benefit=*/3) {}
  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Type elem = type.getElementType();
    auto elemOf = [](Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); };
    if ((!elem.isBF16() && !elem.isF16()) || elemOf(adaptor.getLhs()) != elem ||
        elemOf(adaptor.getRhs()) != elem)
      return failure();
    Value sums = lowerMatmul(rewriter, op.getLoc(), adaptor.getLhs(), adaptor.getRhs(),
                             type.clone(rewriter.getF32Type()));
    rewriter.replaceOpWithNewOp<CastOp>(op, type, sums);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// V as K's float type when it is a narrower float (the 16-bit operands of
/// an f32 accumulator), else V.
Value widenTo(OpBuilder &b, Location loc, const ElemKind &k, Value v) {
  if (!k.isFloat || v.getType() == k.type)
    return v;
  return arith::ExtFOp::create(b, loc, k.type, v);
}

/// A zero of V's element type (the padding of a convolution's operand,
/// which may be narrower than its accumulator).
Value zeroOf(OpBuilder &b, Location loc, Value v) {
  return scalarConst(b, loc, cast<RankedTensorType>(v.getType()).getElementType(), 0);
}

/// A grouped convolution as one linalg.generic. Loops are
/// (n, g, m, o_1..o_k, c, kk_1..kk_k); `x` is [N, G, Cg, P...] and is read at
/// (n, g, c, o_i * stride_i + kk_i * dilation_i + offset_i) (a negative
/// dilation walks the window backwards); `w` is [G, Mg, Cg, K...], or
/// [G, Cg, Mg, K...] with `swapChannels`, read at kk; the result is
/// [N, G, Mg, O...]. Every loop appears bare in some map, as linalg needs to
/// infer the loop bounds.
Value genericGroupedConv(OpBuilder &b, Location loc, Value x, Value w,
                         ArrayRef<int64_t> outShape, ArrayRef<int64_t> strides,
                         ArrayRef<int64_t> dilations, ArrayRef<int64_t> offsets,
                         const ElemKind &k, bool swapChannels) {
  MLIRContext *ctx = b.getContext();
  int64_t sp = strides.size();
  unsigned numLoops = 4 + 2 * sp;
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  AffineExpr n = dim(0), g = dim(1), m = dim(2), c = dim(3 + sp);
  SmallVector<AffineExpr> o, kk;
  for (int64_t i = 0; i < sp; ++i) {
    o.push_back(dim(3 + i));
    kk.push_back(dim(4 + sp + i));
  }
  SmallVector<AffineExpr> inExprs = {n, g, c}, outExprs = {n, g, m};
  SmallVector<AffineExpr> filterExprs = {g, swapChannels ? c : m,
                                         swapChannels ? m : c};
  for (int64_t i = 0; i < sp; ++i) {
    inExprs.push_back(o[i] * strides[i] + kk[i] * dilations[i] + offsets[i]);
    outExprs.push_back(o[i]);
    filterExprs.push_back(kk[i]);
  }
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, inExprs, ctx),
                                 AffineMap::get(numLoops, 0, filterExprs, ctx),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iters = parallelIterators(numLoops);
  for (unsigned i = 3 + sp; i < numLoops; ++i)
    iters[i] = utils::IteratorType::reduction;
  Value init = filledTensor(b, loc, outShape, scalarConst(b, loc, k.type, 0));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{x, w}, ValueRange{init},
      maps, iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value prod = mulScalar(nb, l, k, widenTo(nb, l, k, args[0]), widenTo(nb, l, k, args[1]));
        linalg::YieldOp::create(nb, l, addScalar(nb, l, k, args[2], prod));
      });
  return generic.getResult(0);
}

/// Splits dimension `d` of `v` into (parts, size / parts).
Value splitDim(OpBuilder &b, Location loc, Value v, int64_t d, int64_t parts) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    if (i == d) {
      shape.push_back(parts);
      shape.push_back(t.getDimSize(i) / parts);
    } else {
      shape.push_back(t.getDimSize(i));
    }
  }
  return reshapeTo(b, loc, v, withShape(v, shape));
}

/// Called on the named convolution convolve() creates (to mark it).
using MarkConv = llvm::function_ref<void(Operation *)>;

/// Creates the named channels-first convolution `OpTy`, and MARK's it.
template <typename OpTy>
Value namedConv(OpBuilder &b, Location loc, Value x, Value w, Value init,
                ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations, MarkConv mark) {
  Operation *conv = OpTy::create(b, loc, TypeRange{init.getType()}, ValueRange{x, w},
                                 ValueRange{init}, b.getI64TensorAttr(strides),
                                 b.getI64TensorAttr(dilations));
  if (mark)
    mark(conv);
  return conv->getResult(0);
}

/// The convolution of X (padded already) by W [F, C/G, K...] in GROUP
/// groups into OUTTYPE: linalg.conv_{1d_ncw_fcw, 2d_nchw_fchw,
/// 3d_ncdhw_fcdhw} for one group, linalg.depthwise_conv_* when every channel
/// is its own group with one filter, linalg.conv_2d_ngchw_gfchw for other
/// grouped 2-D convolutions, and a generic for the rest (grouped 1-D / 3-D,
/// 4-D and beyond). MARK is called on the named op, if one is made.
Value convolve(OpBuilder &b, Location loc, Value x, Value w, RankedTensorType outType,
               ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations, int64_t group,
               const ElemKind &k, MarkConv mark = {}) {
  int64_t sp = strides.size();
  Value zero = scalarConst(b, loc, k.type, 0);
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  int64_t channels = xType.getDimSize(1), filters = wType.getDimSize(0);
  ArrayRef<int64_t> outShape = outType.getShape();
  if (group == 1 && sp <= 3) {
    Value init = filledTensor(b, loc, outShape, zero);
    if (sp == 1)
      return namedConv<linalg::Conv1DNcwFcwOp>(b, loc, x, w, init, strides, dilations, mark);
    if (sp == 2)
      return namedConv<linalg::Conv2DNchwFchwOp>(b, loc, x, w, init, strides, dilations, mark);
    return namedConv<linalg::Conv3DNcdhwFcdhwOp>(b, loc, x, w, init, strides, dilations, mark);
  }
  if (group == channels && filters == channels && sp <= 3) {
    // Depthwise with multiplier 1: the filter [C, 1, K...] is [C, K...].
    SmallVector<int64_t> wShape = {channels};
    llvm::append_range(wShape, wType.getShape().drop_front(2));
    Value wd = reshapeTo(b, loc, w, withShape(w, wShape));
    Value init = filledTensor(b, loc, outShape, zero);
    if (sp == 1)
      return namedConv<linalg::DepthwiseConv1DNcwCwOp>(b, loc, x, wd, init, strides, dilations, mark);
    if (sp == 2)
      return namedConv<linalg::DepthwiseConv2DNchwChwOp>(b, loc, x, wd, init, strides, dilations, mark);
    return namedConv<linalg::DepthwiseConv3DNcdhwCdhwOp>(b, loc, x, wd, init, strides, dilations, mark);
  }
  // Grouped: [N, G, Cg, ...] x [G, Mg, Cg, K...] -> [N, G, Mg, O...].
  Value xg = splitDim(b, loc, x, 1, group);
  Value wg = splitDim(b, loc, w, 0, group);
  SmallVector<int64_t> outG = {outShape[0], group, filters / group};
  llvm::append_range(outG, outShape.drop_front(2));
  Value yg;
  if (sp == 2) {
    Value init = filledTensor(b, loc, outG, zero);
    yg = namedConv<linalg::Conv2DNgchwGfchwOp>(b, loc, xg, wg, init, strides, dilations, mark);
  } else {
    SmallVector<int64_t> offsets(sp, 0);
    yg = genericGroupedConv(b, loc, xg, wg, outG, strides, dilations, offsets, k,
                            /*swapChannels=*/false);
  }
  return reshapeTo(b, loc, yg, outType);
}

/// conv -> zero tensor.pad, then convolve() into OUTTYPE, summing in K.
Value lowerConvOp(OpBuilder &b, ConvOp op, ConvOp::Adaptor adaptor, RankedTensorType outType,
                  const ElemKind &k) {
  Location loc = op.getLoc();
  Value x = padSpatial(b, loc, adaptor.getInput(), op.getPadLow(), op.getPadHigh(),
                       zeroOf(b, loc, adaptor.getInput()));
  return convolve(b, loc, x, adaptor.getFilter(), outType, op.getStrides(), op.getDilations(),
                  op.getGroup(), k);
}

/// The filter W [C, M/G, K...] of a conv_transpose in GROUP groups as the
/// filter of the equivalent convolution: [M, C/G, K...] (within each group,
/// in and out channels swapped), spatially flipped. One small linalg.generic
/// over the filter ([G, C/G, M/G, K...] read as [G, M/G, C/G, K...]); the
/// copy is what lets the convolution be a named op, and a library call.
Value flippedConvFilter(OpBuilder &b, Location loc, Value w, int64_t group) {
  MLIRContext *ctx = b.getContext();
  auto wType = cast<RankedTensorType>(w.getType());
  int64_t cg = wType.getDimSize(0) / group, mg = wType.getDimSize(1);
  // With groups, a leading group dimension ([G, C/G, M/G, K...]); without,
  // the filter as it is.
  Value source = group > 1 ? splitDim(b, loc, w, 0, group) : w;
  SmallVector<int64_t> shape;
  if (group > 1)
    shape.push_back(group);
  shape.append({mg, cg});
  llvm::append_range(shape, wType.getShape().drop_front(2));
  Value flipped = copyThroughMap(
      b, loc, source, flippedFilterMap(ctx, group, wType.getShape().drop_front(2)), shape);
  if (group == 1)
    return flipped;
  SmallVector<int64_t> merged = {group * mg, cg};
  llvm::append_range(merged, wType.getShape().drop_front(2));
  return reshapeTo(b, loc, flipped, withShape(w, merged));
}

/// conv_transpose -> convolve() (stride 1, the same dilation and groups) of
/// its zero-dilated, padded input by the flipped filter (see the file
/// comment): where every pad is non-negative, a tensor.pad (stride 1) or a
/// zero buffer the input is inserted into at the stride; else a slice of a
/// larger such buffer. A 2-D one whose geometry a forward convolution's
/// parameters describe is marked as that convolution's data gradient.
Value lowerConvOp(OpBuilder &rewriter, ConvTransposeOp op, ConvTransposeOp::Adaptor adaptor,
                  RankedTensorType outType, const ElemKind &k) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
  ArrayRef<int64_t> padLow = op.getPadLow();
  int64_t sp = strides.size();
  Value x = adaptor.getInput(), w = adaptor.getFilter();
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  ArrayRef<int64_t> outShape = outType.getShape();
  Value zero = zeroOf(rewriter, loc, x);
  // Output o reads positions o + pad_low + kk * dilation of the buffer in
  // which x[i] sits at P + i * stride, P = dilation * (K - 1): the
  // convolution's input is the buffer's [pad_low, pad_low + O + P).
  SmallVector<int64_t> low, high;
  SmallVector<int64_t> bufShape = {xType.getDimSize(0), xType.getDimSize(1)};
  SmallVector<int64_t> insertAt = {0, 0}, insertStrides = {1, 1};
  SmallVector<int64_t> sliceAt = {0, 0}, sliceShape = {xType.getDimSize(0), xType.getDimSize(1)};
  bool padOnly = true;
  for (int64_t i = 0; i < sp; ++i) {
    int64_t p = dilations[i] * (wType.getDimSize(2 + i) - 1);
    int64_t span = outShape[2 + i] + p;
    int64_t written = (xType.getDimSize(2 + i) - 1) * strides[i] + 1;
    low.push_back(p - padLow[i]);
    high.push_back(span - low.back() - written);
    padOnly &= strides[i] == 1 && low.back() >= 0 && high.back() >= 0;
    bufShape.push_back(std::max(padLow[i] + span, p + written));
    insertAt.push_back(p);
    insertStrides.push_back(strides[i]);
    sliceAt.push_back(padLow[i]);
    sliceShape.push_back(span);
  }
  bool inBounds = llvm::all_of(low, [](int64_t v) { return v >= 0; }) &&
                  llvm::all_of(high, [](int64_t v) { return v >= 0; });
  Value input;
  if (padOnly) {
    input = padSpatial(rewriter, loc, x, low, high, zero);
  } else if (inBounds) {
    // The convolution reads the buffer whole: x sits at `low`, strided.
    SmallVector<int64_t> at = {0, 0};
    llvm::append_range(at, low);
    Value zeros = filledTensor(rewriter, loc, sliceShape, zero);
    input = tensor::InsertSliceOp::create(rewriter, loc, x, zeros, indexAttrs(rewriter, at),
                                          indexAttrs(rewriter, xType.getShape()),
                                          indexAttrs(rewriter, insertStrides));
  } else {
    Value zeros = filledTensor(rewriter, loc, bufShape, zero);
    Value dilated = tensor::InsertSliceOp::create(
        rewriter, loc, x, zeros, indexAttrs(rewriter, insertAt),
        indexAttrs(rewriter, xType.getShape()), indexAttrs(rewriter, insertStrides));
    SmallVector<int64_t> ones(sp + 2, 1);
    input = tensor::ExtractSliceOp::create(rewriter, loc, dilated, indexAttrs(rewriter, sliceAt),
                                           indexAttrs(rewriter, sliceShape),
                                           indexAttrs(rewriter, ones));
  }
  Value filter = flippedConvFilter(rewriter, loc, w, op.getGroup());
  SmallVector<int64_t> unit(sp, 1);
  // dY = x [N, F, OH, OW], W = w [F, C/G, KH, KW], dX [N, C, H, W].
  std::optional<SmallVector<int64_t>> params;
  if (inBounds)
    params = conv2dCallParams(outShape, wType.getShape(), xType.getShape(), strides, dilations,
                              padLow);
  auto mark = [&](Operation *conv) {
    setConvBackwardMarker(conv, TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA, *params, op.getGroup());
  };
  return convolve(rewriter, loc, input, filter, outType, unit, dilations, op.getGroup(), k,
                  params ? MarkConv(mark) : MarkConv());
}

/// The most output points (N x O...) over which a convolution, its data
/// gradient and its filter gradient are GEMMs instead of convolution calls.
constexpr int64_t kFewPointGemmPoints = 256;

/// Whether a convolution of GROUPS groups into OUTCHANNELS output channels
/// over POINTS output points has few enough points for GEMMs
/// (convolutionAsGemm, dataGradientAsGemm, filterGradientAsGemm): one
/// group, under kFewPointGemmPoints points and at most OUTCHANNELS of them
/// (so that the GEMM's copies of the input's windows and of the gradient
/// hold no more elements than the filter). With SIXTEENBIT (the filter
/// gradients of 16-bit operands) up to kFewPointGemmPoints points whatever
/// the channels: oneDNN 2.6's AMX filter-gradient kernel runs zoo
/// resnet18's layer2 (4x4 maps, 256 points into 128 channels, where the
/// windows' copy is twice the filter) no faster than its f32 one (0.23 ms
/// per 3x3 filter at 2 threads), and the step goes 19.2 -> 18.5 ms with the
/// GEMMs (Xeon with AMX, 2 threads, 2026-12-07); the f32 step is the same
/// either way (26.3 vs 26.2 ms), and the 16-bit forward and data-gradient
/// forms over 256 points measured no faster, so those keep the f32 rule.
bool isFewPointGemm(int64_t points, int64_t outChannels, int64_t groups, bool sixteenBit) {
  if (groups != 1)
    return false;
  if (sixteenBit)
    return points <= kFewPointGemmPoints;
  return points < kFewPointGemmPoints && points <= outChannels;
}

/// The input channels under which a 16-bit filter gradient is a GEMM
/// whatever its points (isNarrowSixteenBitFilterGradient).
constexpr int64_t kNarrowInputChannels = 16;

/// Whether the filter gradient of a one-group 16-bit convolution over
/// INCHANNELS input channels is a GEMM (filterGradientAsGemm) whatever its
/// points: a CNN's stem, whose 3 channels oneDNN 2.6 runs without AMX
/// (`jit_bf16:avx512_core_bf16`, 0.40 ms per step for zoo resnet18's 7x7
/// stem at 2 threads on the Xeon with AMX, where its f32 kernel takes
/// 0.25 ms), while the GEMM over its windows (K = the 4096 output points)
/// runs on AMX.
bool isNarrowSixteenBitFilterGradient(int64_t inChannels, int64_t groups, bool sixteenBit) {
  return sixteenBit && groups == 1 && inChannels < kNarrowInputChannels;
}

/// The output points of a convolution whose output (or output gradient) is
/// Y [N, M, O...]: N x O....
int64_t outputPoints(RankedTensorType y) {
  int64_t points = y.getDimSize(0);
  for (int64_t d = 2; d < y.getRank(); ++d)
    points *= y.getDimSize(d);
  return points;
}

/// The windows of the zero-padded input XP [N, C, P...] that a
/// convolution's output points [N, M, O...] read (im2col): [N, O..., C,
/// K...], read at (n, c, o * stride + k * dilation).
Value windowsOf(OpBuilder &b, Location loc, Value xp, ArrayRef<int64_t> outSpatial,
                ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                ArrayRef<int64_t> dilations) {
  MLIRContext *ctx = b.getContext();
  auto dim = [&](int64_t i) { return getAffineDimExpr(unsigned(i), ctx); };
  auto xType = cast<RankedTensorType>(xp.getType());
  int64_t sp = strides.size();
  // Loops (n, o..., c, k...), all parallel.
  SmallVector<AffineExpr> xExprs = {dim(0), dim(1 + sp)};
  SmallVector<int64_t> shape = {xType.getDimSize(0)};
  for (int64_t i = 0; i < sp; ++i) {
    xExprs.push_back(dim(1 + i) * strides[i] + dim(2 + sp + i) * dilations[i]);
    shape.push_back(outSpatial[i]);
  }
  shape.push_back(xType.getDimSize(1));
  llvm::append_range(shape, kernel);
  return copyThroughMap(b, loc, xp, AffineMap::get(2 + 2 * sp, 0, xExprs, ctx), shape);
}

/// V [N, M, O...] with its channels moved last ([N, O..., M]; LAST), or V
/// [N, O..., M] with them moved first ([N, M, O...]): a copy, a reshape
/// where O... are all 1.
Value moveChannels(OpBuilder &b, Location loc, Value v, bool last) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t sp = type.getRank() - 2;
  SmallVector<int64_t> shape = {type.getDimSize(0)};
  ArrayRef<int64_t> inner = type.getShape().drop_front(last ? 2 : 1).take_front(sp);
  int64_t channels = type.getDimSize(last ? 1 : 1 + sp);
  if (!last)
    shape.push_back(channels);
  llvm::append_range(shape, inner);
  if (last)
    shape.push_back(channels);
  RankedTensorType moved = type.clone(shape);
  if (llvm::all_of(inner, [](int64_t d) { return d == 1; }))
    return reshapeTo(b, loc, v, moved);
  // Loops over the result's dimensions; the read permutes them back.
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> exprs = {getAffineDimExpr(0, ctx)};
  if (last)
    exprs.push_back(getAffineDimExpr(unsigned(1 + sp), ctx));
  for (int64_t i = 0; i < sp; ++i)
    exprs.push_back(getAffineDimExpr(unsigned((last ? 1 : 2) + i), ctx));
  if (!last)
    exprs.push_back(getAffineDimExpr(1, ctx));
  return copyThroughMap(b, loc, v, AffineMap::get(2 + sp, 0, exprs, ctx), shape);
}

/// A filter gradient that sums over few output points
/// (isFewPointGemm) as one matmul:
/// dW [M, C x K...] = dY' [M, N x O...] x cols [N x O..., C x K...], where
/// row (n, o...) of cols is the window of the zero-padded input that output
/// point reads (im2col: [N, O..., C, K...], read at (n, c, o * stride +
/// k * dilation)) and dY' is the gradient with its channels first. Both
/// copies hold at most the filter's elements. Libraries' direct
/// filter-gradient kernels block over output points and fall far below
/// their GEMM rate when there are few (the deep layers of a CNN on small
/// images: 2x2 and 1x1 maps); docs/cpu-codegen.md has the numbers. Nullopt
/// for the others.
std::optional<Value> filterGradientAsGemm(OpBuilder &b, Location loc, ConvBackwardFilterOp op,
                                          Value x, Value g, RankedTensorType outType,
                                          const ElemKind &k) {
  auto gType = cast<RankedTensorType>(g.getType());
  auto xType = cast<RankedTensorType>(x.getType());
  if (!gType.hasStaticShape() || !xType.hasStaticShape() || !outType.hasStaticShape())
    return std::nullopt;
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
  int64_t sp = strides.size(), n = gType.getDimSize(0), m = gType.getDimSize(1);
  int64_t points = outputPoints(gType), window = xType.getDimSize(1);
  for (int64_t i = 0; i < sp; ++i)
    window *= outType.getDimSize(2 + i);
  Type elem = getElementTypeOrSelf(x.getType());
  bool sixteenBit = elem.isBF16() || elem.isF16();
  if (!isFewPointGemm(points, m, op.getGroup(), sixteenBit) &&
      !isNarrowSixteenBitFilterGradient(xType.getDimSize(1), op.getGroup(), sixteenBit))
    return std::nullopt;
  MLIRContext *ctx = b.getContext();
  auto dim = [&](int64_t i) { return getAffineDimExpr(unsigned(i), ctx); };
  Value cols = windowsOf(b, loc, x, gType.getShape().drop_front(2),
                         outType.getShape().drop_front(2), strides, dilations);
  // dY': loops (m, n, o...) reading dY at (n, m, o...).
  SmallVector<AffineExpr> gExprs = {dim(1), dim(0)};
  SmallVector<int64_t> gtShape = {m, n};
  for (int64_t i = 0; i < sp; ++i) {
    gExprs.push_back(dim(2 + i));
    gtShape.push_back(gType.getDimSize(2 + i));
  }
  Value gt = copyThroughMap(b, loc, g, AffineMap::get(2 + sp, 0, gExprs, ctx), gtShape);
  Value lhs = reshapeTo(b, loc, gt, withShape(gt, {m, points}));
  Value rhs = reshapeTo(b, loc, cols, withShape(cols, {points, window}));
  Value sums = lowerMatmul(b, loc, lhs, rhs, RankedTensorType::get({m, window}, k.type));
  return reshapeTo(b, loc, sums, outType);
}

/// A convolution over few output points (isFewPointGemm's f32 rule on
/// its N x O... points and M output channels, one group) as one matmul:
/// Y' [N x O..., M] = cols [N x O..., C x K...] x W^T, cols the windows of
/// the zero-padded input (windowsOf), W [M, C x K...] read as it is (the
/// matmul's B transposed); Y is Y' with its channels moved first (a
/// reshape where each image has one point). No reorder of W into the
/// library's layout. Why: oneDNN 2.6's forward kernels run 2x2 and 1x1
/// maps far below its GEMM rate, and a filter outside tcc-filter-layouts'
/// sets (its gradient a GEMM) was reordered into their layout every step
/// (zoo resnet18's layer3 in bf16: 0.2 ms per AMX call plus 0.22 ms for the
/// filter's reorder; Xeon with AMX, 2 threads); with its data gradient in
/// the same form (the same points, dataGradientAsGemm) no call reads the
/// filter at all. docs/cpu-codegen.md has the numbers. Nullopt for the
/// others; with ANYSIZE every one-group convolution of static shape (tests).
std::optional<Value> convolutionAsGemm(OpBuilder &b, Location loc, ConvOp op, Value x, Value w,
                                       RankedTensorType outType, const ElemKind &k,
                                       bool anySize) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  if (!xType.hasStaticShape() || !wType.hasStaticShape() || !outType.hasStaticShape() ||
      op.getGroup() != 1)
    return std::nullopt;
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
  int64_t sp = strides.size(), n = outType.getDimSize(0), m = outType.getDimSize(1);
  int64_t points = outputPoints(outType), window = xType.getDimSize(1);
  for (int64_t i = 0; i < sp; ++i)
    window *= wType.getDimSize(2 + i);
  if (!anySize && !isFewPointGemm(points, m, 1, /*sixteenBit=*/false))
    return std::nullopt;
  Value xp = padSpatial(b, loc, x, op.getPadLow(), op.getPadHigh(), zeroOf(b, loc, x));
  Value cols = windowsOf(b, loc, xp, outType.getShape().drop_front(2),
                         wType.getShape().drop_front(2), strides, dilations);
  Value lhs = reshapeTo(b, loc, cols, withShape(cols, {points, window}));
  Value rhs = reshapeTo(b, loc, w, withShape(w, {m, window}));
  Value sums = lowerMatmul(b, loc, lhs, rhs, RankedTensorType::get({points, m}, k.type),
                          /*transposedB=*/true);
  SmallVector<int64_t> lastShape = {n};
  llvm::append_range(lastShape, outType.getShape().drop_front(2));
  lastShape.push_back(m);
  Value last = reshapeTo(b, loc, sums, RankedTensorType::get(lastShape, k.type));
  return moveChannels(b, loc, last, /*last=*/false);
}

/// A data gradient (conv_transpose by the forward convolution's filter W
/// [M, C, K...]: dX [N, C, P...] from dY [N, M, Q...]) whose forward summed
/// over few output points (isFewPointGemm's rule on dY's N x Q...
/// points and M channels) as one matmul and a gather:
/// dcols [N x Q..., C x K...] = dY' [N x Q..., M] x W [M, C x K...], then
/// dX [n, c, p...] = the sum over the taps k... of dcols [n, q..., c, k...]
/// where q * stride + k * dilation - pad_low = p (col2im; a tap whose q is
/// not a whole index inside dY adds nothing). dY' is dY with its channels
/// last, W is read as it is (no flipped copy, no reorder into a library
/// layout), and dcols holds no more elements than W. Why: on small maps
/// oneDNN 2.6's AMX data-gradient kernels run far below its AMX GEMM rate
/// (zoo resnet18's 3x3 convolutions on 2x2 maps: 0.2 ms per call plus 0.09
/// ms to reorder W, where the 64 x 2304 x 256 GEMM takes 0.08 ms; Xeon with
/// AMX, 2 threads). Nullopt for the others; with ANYSIZE every one-group
/// data gradient of static shape (tests).
std::optional<Value> dataGradientAsGemm(OpBuilder &b, Location loc, ConvTransposeOp op, Value dy,
                                        Value w, RankedTensorType outType, const ElemKind &k,
                                        bool anySize) {
  auto dyType = cast<RankedTensorType>(dy.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  if (!dyType.hasStaticShape() || !wType.hasStaticShape() || !outType.hasStaticShape() ||
      op.getGroup() != 1)
    return std::nullopt;
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
  ArrayRef<int64_t> padLow = op.getPadLow();
  int64_t sp = strides.size(), n = dyType.getDimSize(0), m = dyType.getDimSize(1);
  int64_t c = outType.getDimSize(1), points = outputPoints(dyType), window = c;
  for (int64_t i = 0; i < sp; ++i)
    window *= wType.getDimSize(2 + i);
  // The f32 rule for 16-bit operands too: on 4x4 maps (256 points) the
  // gather costs what the call saves.
  if ((!anySize && !isFewPointGemm(points, m, 1, /*sixteenBit=*/false)) ||
      wType.getDimSize(0) != m ||
      wType.getDimSize(1) != c)
    return std::nullopt;
  MLIRContext *ctx = b.getContext();
  auto dim = [&](int64_t i) { return getAffineDimExpr(unsigned(i), ctx); };
  Value lhs = moveChannels(b, loc, dy, /*last=*/true);
  lhs = reshapeTo(b, loc, lhs, withShape(lhs, {points, m}));
  Value rhs = reshapeTo(b, loc, w, withShape(w, {m, window}));
  Value sums = lowerMatmul(b, loc, lhs, rhs, RankedTensorType::get({points, window}, k.type));
  // The taps each output point gathers: loops (n, c, p..., k...), the taps
  // reductions; an empty [K...] tensor gives the tap loops their extents.
  SmallVector<int64_t> colsShape = {n};
  for (int64_t i = 0; i < sp; ++i)
    colsShape.push_back(dyType.getDimSize(2 + i));
  colsShape.push_back(c);
  // With a stride s and no dilation, only the taps k = (p + pad_low) mod s
  // + s * j reach a whole q: the tap loop runs over j, ceil(K / s) of them,
  // instead of every tap with a remainder test.
  SmallVector<int64_t> kernel, tapLoop;
  SmallVector<bool> phased;
  for (int64_t i = 0; i < sp; ++i) {
    kernel.push_back(wType.getDimSize(2 + i));
    phased.push_back(strides[i] > 1 && dilations[i] == 1 && padLow[i] >= 0);
    tapLoop.push_back(phased.back() ? llvm::divideCeil(kernel.back(), strides[i])
                                    : kernel.back());
  }
  llvm::append_range(colsShape, kernel);
  Value cols = reshapeTo(b, loc, sums, RankedTensorType::get(colsShape, k.type));
  int64_t numLoops = 2 + 2 * sp;
  SmallVector<AffineExpr> tapExprs, outExprs = {dim(0), dim(1)};
  for (int64_t i = 0; i < sp; ++i) {
    outExprs.push_back(dim(2 + i));
    tapExprs.push_back(dim(2 + sp + i));
  }
  Value taps = emptyTensor(b, loc, tapLoop, k.type);
  Value init = filledTensor(b, loc, outType.getShape(), scalarConst(b, loc, k.type, 0));
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, tapExprs, ctx),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iters = parallelIterators(numLoops);
  for (int64_t i = 2 + sp; i < numLoops; ++i)
    iters[i] = utils::IteratorType::reduction;
  auto gather = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{taps}, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(nb, l, v); };
        auto loop = [&](int64_t d) { return linalg::IndexOp::create(nb, l, d); };
        Value inside = arith::ConstantIntOp::create(nb, l, 1, 1);
        auto both = [&](Value cond) { inside = arith::AndIOp::create(nb, l, inside, cond); };
        SmallVector<Value> at = {loop(0)}, tap;
        for (int64_t i = 0; i < sp; ++i) {
          // q * stride = p + pad_low - k * dilation.
          Value pos = arith::AddIOp::create(nb, l, loop(2 + i), index(padLow[i]));
          Value q, kk;
          if (phased[i]) {
            // k = pos mod s + s * j, q = pos div s - j (pos >= 0).
            Value j = loop(2 + sp + i);
            Value s = index(strides[i]);
            Value phase = arith::RemUIOp::create(nb, l, pos, s);
            Value skip = arith::MulIOp::create(nb, l, j, s);
            kk = arith::AddIOp::create(nb, l, phase, skip);
            Value base = arith::DivUIOp::create(nb, l, pos, s);
            q = arith::SubIOp::create(nb, l, base, j);
            both(arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, kk, index(kernel[i])));
          } else {
            kk = loop(2 + sp + i);
            Value reach = arith::MulIOp::create(nb, l, kk, index(dilations[i]));
            Value t = arith::SubIOp::create(nb, l, pos, reach);
            q = t;
            if (strides[i] != 1) {
              Value rem = arith::RemSIOp::create(nb, l, t, index(strides[i]));
              both(arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, rem, index(0)));
              q = arith::DivSIOp::create(nb, l, t, index(strides[i]));
            }
          }
          both(arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, q, index(0)));
          both(arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, q,
                                     index(dyType.getDimSize(2 + i))));
          at.push_back(q);
          tap.push_back(kk);
        }
        at.push_back(loop(1));
        llvm::append_range(at, tap);
        // Every index in range before the read; the value only where inside.
        for (int64_t i = 0; i < sp; ++i) {
          at[1 + i] = arith::SelectOp::create(nb, l, inside, at[1 + i], index(0));
          at[2 + sp + i] = arith::SelectOp::create(nb, l, inside, at[2 + sp + i], index(0));
        }
        Value v = tensor::ExtractOp::create(nb, l, cols, at);
        v = arith::SelectOp::create(nb, l, inside, v, scalarConst(nb, l, k.type, 0));
        linalg::YieldOp::create(nb, l, addScalar(nb, l, k, args[1], v));
      });
  return gather.getResult(0);
}

/// conv_backward_filter -> a zero tensor.pad of the input, then one
/// linalg.generic over (g, m, c, k..., n, o...) into [G, M/G, C/G, K...]
/// (reshaped to [M, C/G, K...]) that reads the padded input
/// [N, G, C/G, P...] at (n, g, c, o*stride + k*dilation) and the gradient
/// [N, G, M/G, O...] at (n, g, m, o); without groups the g loop and the
/// reshapes are left out. A 2-D one is marked as a CONV2D_BACKWARD_WEIGHTS
/// call (on the unpadded input, which tcc-mark-library-calls finds again).
Value lowerConvOp(OpBuilder &rewriter, ConvBackwardFilterOp op,
                  ConvBackwardFilterOp::Adaptor adaptor, RankedTensorType outType,
                  const ElemKind &k) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
  int64_t sp = strides.size(), group = op.getGroup();
  Value zero = scalarConst(rewriter, loc, k.type, 0);
  Value x = padSpatial(rewriter, loc, adaptor.getInput(), op.getPadLow(), op.getPadHigh(),
                       zeroOf(rewriter, loc, adaptor.getInput()));
  Value g = adaptor.getGrad();
  if (std::optional<Value> gemm = filterGradientAsGemm(rewriter, loc, op, x, g, outType, k))
    return *gemm;
  auto gType = cast<RankedTensorType>(g.getType());
  bool grouped = group > 1;
  if (grouped) {
    x = splitDim(rewriter, loc, x, 1, group);
    g = splitDim(rewriter, loc, g, 1, group);
  }
  // Loops: [g,] m, c, k..., n, o...
  int64_t lead = grouped ? 1 : 0, numLoops = lead + 3 + 2 * sp;
  auto dim = [&](int64_t i) { return getAffineDimExpr(unsigned(i), ctx); };
  AffineExpr m = dim(lead), c = dim(lead + 1), n = dim(lead + 2 + sp);
  SmallVector<AffineExpr> xExprs = {n}, gExprs = {n}, outExprs;
  if (grouped) {
    xExprs.push_back(dim(0));
    gExprs.push_back(dim(0));
    outExprs.push_back(dim(0));
  }
  xExprs.push_back(c);
  gExprs.push_back(m);
  outExprs.append({m, c});
  for (int64_t i = 0; i < sp; ++i) {
    AffineExpr kk = dim(lead + 2 + i), o = dim(lead + 3 + sp + i);
    xExprs.push_back(o * strides[i] + kk * dilations[i]);
    gExprs.push_back(o);
    outExprs.push_back(kk);
  }
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, xExprs, ctx),
                                 AffineMap::get(numLoops, 0, gExprs, ctx),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iters = parallelIterators(numLoops);
  for (int64_t i = lead + 2 + sp; i < numLoops; ++i)
    iters[i] = utils::IteratorType::reduction;
  SmallVector<int64_t> shape;
  if (grouped)
    shape.push_back(group);
  shape.push_back(outType.getDimSize(0) / group);
  llvm::append_range(shape, outType.getShape().drop_front(1));
  Value init = filledTensor(rewriter, loc, shape, zero);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{x, g}, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value prod =
            mulScalar(nb, l, k, widenTo(nb, l, k, args[0]), widenTo(nb, l, k, args[1]));
        linalg::YieldOp::create(nb, l, addScalar(nb, l, k, args[2], prod));
      });
  auto xType = cast<RankedTensorType>(adaptor.getInput().getType());
  if (std::optional<SmallVector<int64_t>> params =
          conv2dCallParams(xType.getShape(), outType.getShape(), gType.getShape(), strides,
                           dilations, op.getPadLow()))
    setConvBackwardMarker(generic, TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS, *params, group);
  Value result = generic.getResult(0);
  return grouped ? reshapeTo(rewriter, loc, result, outType) : result;
}

/// pad(conv_backward_filter(x, g)), a zero pad of the filter gradient's
/// spatial dimensions by taps that only ever meet padding (what autodiff
/// makes of DropPaddingOnlyTaps' slice, dialects/TccFolds.cpp) -> the
/// gradient of the whole filter, whose extra taps sum products with padding
/// zeros: the same values. Only where that gradient is one GEMM
/// (isFewPointGemm, the deep layers of a CNN on small images), which
/// then writes the whole filter in one pass where the pad fills a
/// filter-sized buffer with zeros and copies the small gradient into it.
/// Not for 16-bit gradients: their GEMM's K (the output points) is below
/// what AMX tiles take, and oneDNN 2.6's AVX512-BF16 kernel writes its
/// output slowly. Zoo resnet18's layer4, 512x512x3x3 filters on 1x1 maps
/// (Xeon, 1 thread): the fp32 step 64.1 -> 58.0 ms, where the pad's two
/// passes took 2.3 ms per filter; in bf16 the 512 x 4608 x 16 GEMM took
/// 1.33 ms against 0.12 ms for the 512 x 512 x 16 one, and the step went
/// 44.4 -> 46.0 ms.
LogicalResult fullFilterGradient(RewriterBase &rewriter, PadOp pad) {
  auto grad = pad.getInput().getDefiningOp<ConvBackwardFilterOp>();
  if (!grad || !grad->hasOneUse() || pad.getMode() != PadMode::constant ||
      pad.getValue().convertToDouble() != 0.0)
    return failure();
  auto x = cast<RankedTensorType>(grad.getInput().getType());
  auto g = cast<RankedTensorType>(grad.getGrad().getType());
  Type elem = g.getElementType();
  if (!x.hasStaticShape() || !g.hasStaticShape() || elem.isBF16() || elem.isF16())
    return failure();
  ArrayRef<int64_t> padLow = pad.getLow(), padHigh = pad.getHigh();
  if (padLow[0] || padLow[1] || padHigh[0] || padHigh[1])
    return failure();
  int64_t spatial = x.getRank() - 2;
  if (!isFewPointGemm(outputPoints(g), g.getDimSize(1), grad.getGroup(),
                            /*sixteenBit=*/false))
    return failure();
  ArrayRef<int64_t> strides = grad.getStrides(), dilations = grad.getDilations();
  SmallVector<int64_t> kernel(grad.getKernel()), low(grad.getPadLow()), high(grad.getPadHigh());
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t before = padLow[d + 2], after = padHigh[d + 2], dil = dilations[d];
    int64_t taps = kernel[d] + before + after;
    low[d] += before * dil;
    high[d] += after * dil;
    // Every added tap k reads o*s + k*dil - low outside [0, size).
    for (int64_t k = 0; k < taps; ++k) {
      if (k >= before && k < before + kernel[d])
        continue;
      for (int64_t o = 0; o < g.getDimSize(d + 2); ++o) {
        int64_t i = o * strides[d] + k * dil - low[d];
        if (i >= 0 && i < x.getDimSize(d + 2))
          return failure();
      }
    }
    kernel[d] = taps;
  }
  rewriter.setInsertionPoint(pad);
  rewriter.replaceOpWithNewOp<ConvBackwardFilterOp>(
      pad, pad.getType(), grad.getInput(), grad.getGrad(), rewriter.getDenseI64ArrayAttr(kernel),
      grad.getStridesAttr(), grad.getDilationsAttr(), rewriter.getDenseI64ArrayAttr(low),
      rewriter.getDenseI64ArrayAttr(high), grad.getGroupAttr());
  rewriter.eraseOp(grad);
  return success();
}

/// conv, conv_transpose, conv_backward_filter -> lowerConvOp in the
/// result's type.
template <typename OpTy>
struct ConvLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto outType = convertedTensorType(*this->getTypeConverter(), op.getType());
    rewriter.replaceOp(op, lowerConvOp(rewriter, op, adaptor, outType, elemKind(op.getType())));
    return success();
  }
};

/// A bf16 / f16 convolution (or gradient) of operands of its own type, for
/// libraries that take 16-bit operands with f32 sums (oneDNN on the CPU):
/// lowerConvOp reads the 16-bit operands as they are into f32 sums, rounded
/// once to the op's type. The numbers of WidenSixteenBitProduct (a product
/// of two 16-bit floats is exact in f32) without the widened copies; the
/// sums stay f32 where the next op reads them widened (the matmul rule).
template <typename OpTy>
struct SixteenBitConv : OpConversionPattern<OpTy> {
  SixteenBitConv(const TypeConverter &tc, MLIRContext *ctx)
      : OpConversionPattern<OpTy>(tc, ctx, /*benefit=*/3) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Type elem = type.getElementType();
    if (!elem.isBF16() && !elem.isF16())
      return failure();
    for (Value v : adaptor.getOperands())
      if (cast<RankedTensorType>(v.getType()).getElementType() != elem)
        return failure();
    auto sumsType = type.clone(rewriter.getF32Type());
    Value sums = lowerConvOp(rewriter, op, adaptor, sumsType, elemKind(sumsType));
    rewriter.replaceOpWithNewOp<CastOp>(op, type, sums);
    return success();
  }
};

/// A convolution or a conv_transpose over few points (convolutionAsGemm,
/// dataGradientAsGemm) of float operands of one type: 16-bit ones as f32
/// sums of the operands as they are, rounded once to the op's type
/// (SixteenBitConv's numbers; before it, by its benefit), others summed in
/// their type. With ANYSIZE (tests: the float64 gradient checks) every
/// one-group one of static shape.
template <typename OpTy>
struct GemmConvolution : OpConversionPattern<OpTy> {
  GemmConvolution(const TypeConverter &tc, MLIRContext *ctx, bool anySize)
      : OpConversionPattern<OpTy>(tc, ctx, /*benefit=*/4), anySize(anySize) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Type elem = type.getElementType();
    if (!isa<FloatType>(elem))
      return failure();
    for (Value v : adaptor.getOperands())
      if (cast<RankedTensorType>(v.getType()).getElementType() != elem)
        return failure();
    bool sixteen = elem.isBF16() || elem.isF16();
    auto sumsType = sixteen ? type.clone(rewriter.getF32Type()) : type;
    std::optional<Value> sums;
    if constexpr (std::is_same_v<OpTy, ConvOp>)
      sums = convolutionAsGemm(rewriter, op.getLoc(), op, adaptor.getInput(),
                               adaptor.getFilter(), sumsType, elemKind(sumsType), anySize);
    else
      sums = dataGradientAsGemm(rewriter, op.getLoc(), op, adaptor.getInput(),
                                adaptor.getFilter(), sumsType, elemKind(sumsType), anySize);
    if (!sums)
      return failure();
    if (sixteen)
      rewriter.replaceOpWithNewOp<CastOp>(op, type, *sums);
    else
      rewriter.replaceOp(op, *sums);
    return success();
  }

  bool anySize;
};

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Common attributes of max_pool and avg_pool, with the high padding that the
/// windows actually reach (ceil_mode may read past pad_high; floor mode may
/// not reach it).
struct PoolGeometry {
  SmallVector<int64_t> kernel, strides, dilations, padLow, padHigh, reach;
  SmallVector<int64_t> inShape, outShape;

  template <typename OpTy>
  PoolGeometry(OpTy op, RankedTensorType in, RankedTensorType out)
      : kernel(op.getKernel()), strides(op.getStrides()),
        dilations(op.getDilations()), padLow(op.getPadLow()),
        padHigh(op.getPadHigh()), inShape(in.getShape()),
        outShape(out.getShape()) {
    for (size_t i = 0; i < kernel.size(); ++i) {
      int64_t last = (outShape[2 + i] - 1) * strides[i] +
                     dilations[i] * (kernel[i] - 1) + 1;
      reach.push_back(std::max<int64_t>(0, last - inShape[2 + i] - padLow[i]));
    }
  }
  int64_t spatial() const { return kernel.size(); }
};

/// A pooling linalg.generic over (n, c, o..., kk...) combining with `fn`.
/// Like the named pooling ops it reads an (uninitialized) window tensor at
/// (kk...), so that every loop appears bare in some map and linalg can infer
/// the loop bounds.
Value genericPool(OpBuilder &b, Location loc, Value x, Value init,
                  const PoolGeometry &g,
                  function_ref<Value(OpBuilder &, Location, Value, Value)> fn) {
  MLIRContext *ctx = b.getContext();
  int64_t sp = g.spatial();
  unsigned numLoops = 2 + 2 * sp;
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> inExprs = {dim(0), dim(1)},
                          outExprs = {dim(0), dim(1)};
  SmallVector<AffineExpr> windowExprs;
  for (int64_t i = 0; i < sp; ++i) {
    inExprs.push_back(dim(2 + i) * g.strides[i] +
                      dim(2 + sp + i) * g.dilations[i]);
    outExprs.push_back(dim(2 + i));
    windowExprs.push_back(dim(2 + sp + i));
  }
  Value window = emptyTensor(
      b, loc, g.kernel, cast<RankedTensorType>(x.getType()).getElementType());
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, inExprs, ctx),
                                 AffineMap::get(numLoops, 0, windowExprs, ctx),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iters = parallelIterators(numLoops);
  for (unsigned i = 2 + sp; i < numLoops; ++i)
    iters[i] = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{x, window},
      ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, fn(nb, l, args[2], args[0]));
      });
  return generic.getResult(0);
}

/// max_pool -> tensor.pad with the lowest value (-inf, INT_MIN, 0 unsigned),
/// then linalg.pooling_ncw_max / pooling_nchw_max, or a generic for 3-D and
/// unsigned types (the named ops compare signed).
struct MaxPoolLowering : OpConversionPattern<MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = convertedTensorType(*getTypeConverter(), op.getType());
    Value in = adaptor.getInput();
    PoolGeometry g(op, cast<RankedTensorType>(in.getType()), outType);
    ElemKind k = elemKind(op.getType());
    Value lowest = lowestValue(rewriter, loc, k);
    Value x = padSpatial(rewriter, loc, in, g.padLow, g.reach, lowest);
    Value init = filledTensor(rewriter, loc, outType.getShape(), lowest);
    Value result;
    bool named = !(k.isUnsigned && !k.isFloat) && g.spatial() <= 2;
    if (named) {
      Value window = emptyTensor(rewriter, loc, g.kernel, k.type);
      Attribute s = rewriter.getI64TensorAttr(g.strides);
      Attribute d = rewriter.getI64TensorAttr(g.dilations);
      if (g.spatial() == 1)
        result = linalg::PoolingNcwMaxOp::create(
                     rewriter, loc, TypeRange{outType}, ValueRange{x, window},
                     ValueRange{init}, s, d)
                     ->getResult(0);
      else
        result = linalg::PoolingNchwMaxOp::create(
                     rewriter, loc, TypeRange{outType}, ValueRange{x, window},
                     ValueRange{init}, s, d)
                     ->getResult(0);
    } else {
      result = genericPool(rewriter, loc, x, init, g,
                           [&](OpBuilder &b, Location l, Value acc, Value v) {
                             return maxScalar(b, l, k, acc, v);
                           });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// avg_pool -> zero padding, a sum pool (named for 1-D / 2-D), then a division
/// by the number of window elements inside the input, or inside the input
/// and its explicit padding with count_include_pad (never the part of a
/// ceil_mode window that hangs past pad_high), as ONNX and PyTorch define.
/// The divisors depend only on the output position and are compile-time
/// tables, one per spatial dimension.
struct AvgPoolLowering : OpConversionPattern<AvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = convertedTensorType(*getTypeConverter(), op.getType());
    Value in = adaptor.getInput();
    PoolGeometry g(op, cast<RankedTensorType>(in.getType()), outType);
    ElemKind k = elemKind(op.getType());
    Value zero = scalarConst(rewriter, loc, k.type, 0);
    Value x = padSpatial(rewriter, loc, in, g.padLow, g.reach, zero);
    Value init = filledTensor(rewriter, loc, outType.getShape(), zero);
    Value sum;
    if (g.spatial() <= 2) {
      Value window = emptyTensor(rewriter, loc, g.kernel, k.type);
      Attribute s = rewriter.getI64TensorAttr(g.strides);
      Attribute d = rewriter.getI64TensorAttr(g.dilations);
      if (g.spatial() == 1)
        sum = linalg::PoolingNcwSumOp::create(rewriter, loc, TypeRange{outType},
                                              ValueRange{x, window},
                                              ValueRange{init}, s, d)
                  ->getResult(0);
      else
        sum = linalg::PoolingNchwSumOp::create(
                  rewriter, loc, TypeRange{outType}, ValueRange{x, window},
                  ValueRange{init}, s, d)
                  ->getResult(0);
    } else {
      sum = genericPool(rewriter, loc, x, init, g,
                        [&](OpBuilder &b, Location l, Value acc, Value v) {
                          return addScalar(b, l, k, acc, v);
                        });
    }
    // Divisor tables: counts[i][o] for spatial dimension i.
    int64_t sp = g.spatial();
    SmallVector<SmallVector<int64_t>> counts;
    for (int64_t i = 0; i < sp; ++i)
      counts.push_back(avgPoolDivisors(op, i));
    // Constant tables become scalars; the others are 1-D operands read with
    // the map (n, c, o...) -> (o_i).
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = outType.getRank();
    SmallVector<Value> inputs = {sum};
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
    int64_t constantPart = 1;
    for (int64_t i = 0; i < sp; ++i) {
      if (llvm::all_equal(counts[i])) {
        constantPart *= counts[i].front();
        continue;
      }
      SmallVector<Attribute> attrs;
      for (int64_t c : counts[i])
        attrs.push_back(k.isFloat
                            ? Attribute(rewriter.getFloatAttr(k.type, c))
                            : Attribute(rewriter.getIntegerAttr(k.type, c)));
      auto tableType =
          RankedTensorType::get({int64_t(counts[i].size())}, k.type);
      inputs.push_back(arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(tableType, attrs)));
      maps.push_back(AffineMap::get(rank, 0, getAffineDimExpr(2 + i, ctx)));
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    Value out = emptyTensor(rewriter, loc, outType.getShape(), k.type);
    auto div = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType}, inputs, ValueRange{out}, maps,
        parallelIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value divisor;
          if (constantPart != 1 || args.size() == 2)
            divisor = scalarConst(b, l, k.type, double(constantPart));
          for (size_t j = 1; j + 1 < args.size(); ++j)
            divisor = divisor ? mulScalar(b, l, k, divisor, args[j]) : args[j];
          linalg::YieldOp::create(b, l, divScalar(b, l, k, args[0], divisor));
        });
    rewriter.replaceOp(op, div->getResults());
    return success();
  }
};

/// A matmul, convolution or softmax of 16-bit floats (the precision policy's
/// products, and its widened softmax: the row max and sum accumulate in f32)
/// as the f32 op on widened operands, rounded once at the end:
/// f32 accumulation, and the same values as a 16-bit GEMM that accumulates
/// in f32 (a product of two 16-bit floats is exact in f32). The f32 op is
/// then lowered like any other (on the CPU: oneDNN's f32 primitive; the
/// widened operands are temporaries, the 16-bit values are what is kept).
template <typename OpTy>
struct WidenSixteenBitProduct : OpConversionPattern<OpTy> {
  WidenSixteenBitProduct(const TypeConverter &tc, MLIRContext *ctx)
      : OpConversionPattern<OpTy>(tc, ctx, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Type elem = type.getElementType();
    if (!elem.isBF16() && !elem.isF16())
      return failure();
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    SmallVector<Value> wide;
    for (Value v : adaptor.getOperands())
      wide.push_back(CastOp::create(rewriter, loc, cast<RankedTensorType>(v.getType()).clone(f32), v));
    OperationState state(loc, op->getName(), wide, TypeRange{type.clone(f32)}, op->getAttrs());
    Operation *product = rewriter.create(state);
    rewriter.replaceOpWithNewOp<CastOp>(op, type, product->getResult(0));
    return success();
  }
};

} // namespace

void tcc::lowering::populateLinalgNNPatterns(const TypeConverter &tc, RewritePatternSet &patterns,
                                             bool sixteenBitMatmuls, bool sixteenBitConvs,
                                             bool fewPointGemms, bool gemmConvolutions) {
  if (fewPointGemms || gemmConvolutions)
    patterns.add<GemmConvolution<ConvOp>, GemmConvolution<ConvTransposeOp>>(
        tc, patterns.getContext(), gemmConvolutions);
  if (sixteenBitMatmuls)
    patterns.add<SixteenBitMatmul>(tc, patterns.getContext());
  if (sixteenBitConvs)
    patterns.add<SixteenBitConv<ConvOp>, SixteenBitConv<ConvTransposeOp>,
                 SixteenBitConv<ConvBackwardFilterOp>>(tc, patterns.getContext());
  patterns.add<MatmulLowering, ConvLowering<ConvOp>, ConvLowering<ConvTransposeOp>,
               ConvLowering<ConvBackwardFilterOp>, MaxPoolLowering, AvgPoolLowering, WidenSixteenBitProduct<MatmulOp>,
               WidenSixteenBitProduct<ConvOp>, WidenSixteenBitProduct<ConvTransposeOp>,
               WidenSixteenBitProduct<ConvBackwardFilterOp>,
               WidenSixteenBitProduct<SoftmaxOp>>(
      tc, patterns.getContext());
}

void tcc::lowering::useFullFilterGradients(Operation *root) {
  SmallVector<PadOp> pads;
  root->walk([&](PadOp pad) { pads.push_back(pad); });
  IRRewriter rewriter(root->getContext());
  for (PadOp pad : pads)
    (void)fullFilterGradient(rewriter, pad);
}

namespace {
/// The 16-bit zero pad (constant mode, value 0) V is, or is a cast of.
/// 16-bit only: f32 filter gradients are whole-filter GEMMs instead
/// (useFullFilterGradients), and fp32 steps stay as they were.
PadOp zeroPadOf(Value v) {
  if (auto cast = v.getDefiningOp<CastOp>())
    v = cast.getInput();
  auto pad = v.getDefiningOp<PadOp>();
  if (!pad || pad.getMode() != PadMode::constant || pad.getValue().convertToDouble() != 0.0)
    return PadOp();
  Type elem = cast<RankedTensorType>(pad.getType()).getElementType();
  return elem.isBF16() || elem.isF16() ? pad : PadOp();
}

/// mul(x, x) with X a zero pad of Y (or a cast of one) whose every reader
/// sums all of its elements -> mul(y, y) under the same sums: the padding
/// adds squares of zero. A gradient norm then reads the small tensor.
/// (The grouping of the sum changes: another order, not other terms.)
void sumSquaresUnpadded(RewriterBase &rewriter, MulOp mul) {
  if (mul.getLhs() != mul.getRhs())
    return;
  PadOp pad = zeroPadOf(mul.getLhs());
  if (!pad)
    return;
  auto type = cast<RankedTensorType>(mul.getType());
  for (Operation *user : mul->getUsers()) {
    auto sum = dyn_cast<ReduceSumOp>(user);
    if (!sum || sum.getKeepdims() ||
        int64_t(sum.getAxes().size()) != type.getRank())
      return;
  }
  rewriter.setInsertionPoint(mul);
  Value small = pad.getInput();
  Type elem = type.getElementType();
  auto smallType = cast<RankedTensorType>(small.getType());
  if (smallType.getElementType() != elem)
    small = CastOp::create(rewriter, mul.getLoc(), smallType.clone(elem), small);
  Value squares = MulOp::create(rewriter, mul.getLoc(), small, small);
  for (Operation *user : llvm::make_early_inc_range(mul->getUsers())) {
    auto sum = cast<ReduceSumOp>(user);
    rewriter.setInsertionPoint(sum);
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, smallType.getRank()));
    rewriter.replaceOpWithNewOp<ReduceSumOp>(sum, sum.getType(), squares,
                                             rewriter.getDenseI64ArrayAttr(axes),
                                             rewriter.getBoolAttr(false));
  }
  rewriter.eraseOp(mul);
}
} // namespace

void tcc::lowering::sinkZeroPads(Operation *root) {
  IRRewriter rewriter(root->getContext());
  SmallVector<MulOp> muls;
  root->walk([&](MulOp mul) { muls.push_back(mul); });
  for (MulOp mul : muls)
    sumSquaresUnpadded(rewriter, mul);
  // Each zero pad (with its casts) right before its first reader.
  SmallVector<PadOp> pads;
  root->walk([&](PadOp pad) {
    if (zeroPadOf(pad.getResult()))
      pads.push_back(pad);
  });
  for (PadOp pad : pads) {
    SmallVector<Operation *> chain = {pad};
    for (Operation *user : pad->getUsers())
      if (isa<CastOp>(user))
        chain.push_back(user);
    Block *block = pad->getBlock();
    Operation *first = nullptr;
    bool inBlock = true;
    for (Operation *op : chain)
      for (Operation *user : op->getUsers()) {
        if (llvm::is_contained(chain, user))
          continue;
        Operation *at = block->findAncestorOpInBlock(*user);
        inBlock &= at != nullptr;
        if (at && (!first || at->isBeforeInBlock(first)))
          first = at;
      }
    if (!inBlock || !first)
      continue;
    for (Operation *op : chain)
      if (op->getBlock() == block && op->isBeforeInBlock(first))
        rewriter.moveOpBefore(op, first);
  }
}

SmallVector<int64_t> tcc::lowering::avgPoolDivisors(AvgPoolOp op, int64_t i) {
  auto in = cast<RankedTensorType>(op.getInput().getType());
  auto out = cast<RankedTensorType>(op.getResult().getType());
  bool includePad = op.getCountIncludePad();
  int64_t padLow = op.getPadLow()[i], padHigh = op.getPadHigh()[i];
  int64_t lo = includePad ? -padLow : 0;
  int64_t hi = in.getDimSize(2 + i) + (includePad ? padHigh : 0);
  SmallVector<int64_t> counts;
  for (int64_t o = 0; o < out.getDimSize(2 + i); ++o) {
    int64_t start = o * op.getStrides()[i] - padLow, c = 0;
    for (int64_t kk = 0; kk < op.getKernel()[i]; ++kk) {
      int64_t pos = start + kk * op.getDilations()[i];
      c += pos >= lo && pos < hi;
    }
    counts.push_back(std::max<int64_t>(c, 1));
  }
  return counts;
}
