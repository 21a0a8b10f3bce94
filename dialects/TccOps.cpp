//===- TccOps.cpp - verifiers and type inference of tcc ops ---------------===//
//
// Shape rules live here, once: the importer builds ops without result types
// where the rule is inferable, and the verifier checks the same rule on
// parsed IR. Every failure names the offending dimension.
//
//===----------------------------------------------------------------------===//

#include "dialects/TccOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"
#include <cmath>

using namespace mlir;
using namespace tcc;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

std::optional<int64_t> tcc::checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && n > kMaxElements / d)
      return std::nullopt;
    n *= d;
  }
  return n;
}

int64_t tcc::windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                              int64_t dilation, int64_t padLow,
                              int64_t padHigh, bool ceilMode) {
  int64_t effective = dilation * (kernel - 1) + 1;
  int64_t span = in + padLow + padHigh - effective;
  if (span < 0 || stride <= 0)
    return 0;
  int64_t out = (ceilMode ? llvm::divideCeil(span, stride) : span / stride) + 1;
  // With ceil_mode, the last window must start inside the input or its low
  // padding (the PyTorch and ONNX rule).
  if (ceilMode && (out - 1) * stride >= in + padLow)
    --out;
  return out;
}

SmallVector<int64_t> tcc::reducedShape(ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> axes, bool keepDims) {
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (llvm::is_contained(axes, int64_t(i))) {
      if (keepDims)
        out.push_back(1);
    } else {
      out.push_back(d);
    }
  }
  return out;
}

static RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type elementType) {
  return RankedTensorType::get(shape, elementType);
}

std::string tcc::formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(d);
  return s + "]";
}

/// Checks that `axis` is a dimension of a rank-`rank` tensor.
static LogicalResult checkAxis(std::optional<Location> loc, int64_t axis,
                               int64_t rank, StringRef what = "axis") {
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, what, " ", axis,
                             " is out of range for a tensor of rank ", rank);
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(adaptor.getLhs().getType());
  types.push_back(tensorOf(t.getShape(), IntegerType::get(ctx, 1)));
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  ArrayRef<int64_t> dims = getDims();
  if (int64_t(dims.size()) != in.getRank())
    return emitOpError("needs one entry in dims per operand dimension, got ")
           << dims.size() << " for rank " << in.getRank();
  int64_t prev = -1;
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= out.getRank())
      return emitOpError("dims[") << i << "] = " << d
                                  << " is not a result dimension";
    if (d <= prev)
      return emitOpError("dims must be strictly increasing");
    prev = d;
    int64_t inDim = in.getDimSize(i), outDim = out.getDimSize(d);
    if (inDim != outDim && inDim != 1)
      return emitOpError("operand dimension ")
             << i << " of size " << inDim << " cannot broadcast to size "
             << outDim;
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto in = checkedNumElements(getInput().getType().getShape());
  auto out = checkedNumElements(getResult().getType().getShape());
  if (!in || !out || *in != *out)
    return emitOpError("cannot reshape ")
           << formatShape(getInput().getType().getShape()) << " to "
           << formatShape(getResult().getType().getShape())
           << ": element counts differ";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (int64_t(perm.size()) != t.getRank())
    return emitOptionalError(loc, "perm has ", perm.size(),
                             " entries for a tensor of rank ", t.getRank());
  SmallVector<bool> seen(t.getRank(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= t.getRank() || seen[p])
      return emitOptionalError(loc, "perm is not a permutation of 0..",
                               t.getRank() - 1);
    seen[p] = true;
    shape.push_back(t.getDimSize(p));
  }
  types.push_back(tensorOf(shape, t.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(loc, "needs at least one input");
  auto first = cast<RankedTensorType>(inputs[0].getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, first.getRank())))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value v : inputs) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return emitOptionalError(loc, "inputs differ in rank or element type");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != axis && t.getDimSize(d) != first.getDimSize(d))
        return emitOptionalError(loc, "inputs differ in dimension ", d, ": ",
                                 formatShape(first.getShape()), " vs ",
                                 formatShape(t.getShape()));
    shape[axis] += t.getDimSize(axis);
  }
  types.push_back(tensorOf(shape, first.getElementType()));
  return success();
}

LogicalResult SliceOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  ArrayRef<int64_t> start = getStart(), stride = getStride();
  if (int64_t(start.size()) != in.getRank() ||
      int64_t(stride.size()) != in.getRank() || out.getRank() != in.getRank())
    return emitOpError("start, stride and result need the operand's rank ")
           << in.getRank();
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t n = out.getDimSize(d);
    if (n == 0)
      continue;
    if (stride[d] == 0)
      return emitOpError("stride of dimension ") << d << " is zero";
    // Checked arithmetic: a huge stride must not wrap the last index back
    // into range.
    std::optional<int64_t> lastOr =
        llvm::checkedMulAdd(n - 1, stride[d], start[d]);
    if (!lastOr)
      return emitOpError("dimension ")
             << d << ": stride " << stride[d] << " overflows the index range";
    int64_t last = *lastOr;
    if (start[d] < 0 || start[d] >= in.getDimSize(d) || last < 0 ||
        last >= in.getDimSize(d))
      return emitOpError("dimension ")
             << d << ": elements " << start[d] << ".." << last
             << " are outside the operand's size " << in.getDimSize(d);
  }
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh();
  if (int64_t(low.size()) != t.getRank() || int64_t(high.size()) != t.getRank())
    return emitOptionalError(loc, "low and high need one entry per dimension");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    if (low[d] < 0 || high[d] < 0)
      return emitOptionalError(loc, "padding must be non-negative");
    shape.push_back(t.getDimSize(d) + low[d] + high[d]);
  }
  if (adaptor.getMode() != PadMode::constant)
    for (int64_t d = 0; d < t.getRank(); ++d)
      if ((low[d] || high[d]) && t.getDimSize(d) == 0)
        return emitOptionalError(loc, "cannot reflect, edge- or wrap-pad an "
                                      "empty dimension");
  types.push_back(tensorOf(shape, t.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(adaptor.getInput().getType());
  auto idx = cast<RankedTensorType>(adaptor.getIndices().getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, t.getRank())))
    return failure();
  SmallVector<int64_t> shape(t.getShape().take_front(axis));
  llvm::append_range(shape, idx.getShape());
  llvm::append_range(shape, t.getShape().drop_front(axis + 1));
  types.push_back(tensorOf(shape, t.getElementType()));
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(adaptor.getInput().getType());
  auto idx = cast<RankedTensorType>(adaptor.getIndices().getType());
  if (idx.getRank() != t.getRank())
    return emitOptionalError(loc, "indices need the input's rank ",
                             t.getRank());
  if (failed(checkAxis(loc, adaptor.getAxis(), t.getRank())))
    return failure();
  types.push_back(tensorOf(idx.getShape(), t.getElementType()));
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  auto t = getInput().getType();
  auto idx = getIndices().getType();
  if (idx.getShape() != getUpdates().getType().getShape())
    return emitOpError("indices and updates need one shape");
  if (idx.getRank() != t.getRank())
    return emitOpError("indices need the input's rank ") << t.getRank();
  if (int64_t(getAxis()) < 0 || int64_t(getAxis()) >= t.getRank())
    return emitOpError("axis ") << int64_t(getAxis()) << " is out of range";
  return success();
}

LogicalResult ScatterNdOp::verify() {
  auto t = getInput().getType();
  auto idx = getIndices().getType();
  auto upd = getUpdates().getType();
  if (idx.getRank() < 1)
    return emitOpError("indices need rank >= 1");
  int64_t k = idx.getDimSize(idx.getRank() - 1);
  if (k < 0 || k > t.getRank())
    return emitOpError("index tuples of length ")
           << k << " exceed the input's rank " << t.getRank();
  SmallVector<int64_t> expected(idx.getShape().drop_back());
  llvm::append_range(expected, t.getShape().drop_front(k));
  if (ArrayRef<int64_t>(expected) != upd.getShape())
    return emitOpError("updates must have shape ") << formatShape(expected);
  return success();
}

LogicalResult CumSumOp::verify() {
  if (int64_t(getAxis()) < 0 ||
      int64_t(getAxis()) >= getInput().getType().getRank())
    return emitOpError("axis ") << int64_t(getAxis()) << " is out of range";
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferReduce(std::optional<Location> loc, Adaptor adaptor,
                                 SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  int64_t prev = -1;
  for (int64_t a : axes) {
    if (failed(checkAxis(loc, a, t.getRank())))
      return failure();
    if (a <= prev)
      return emitOptionalError(loc, "axes must be sorted and unique");
    prev = a;
  }
  types.push_back(tensorOf(reducedShape(t.getShape(), axes,
                                        adaptor.getKeepdims()),
                           t.getElementType()));
  return success();
}

#define TCC_REDUCE_INFER(OP)                                                   \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &types) {           \
    return inferReduce(loc, adaptor, types);                                   \
  }
TCC_REDUCE_INFER(ReduceSumOp)
TCC_REDUCE_INFER(ReduceMeanOp)
TCC_REDUCE_INFER(ReduceMaxOp)
TCC_REDUCE_INFER(ReduceMinOp)
TCC_REDUCE_INFER(ReduceProdOp)
#undef TCC_REDUCE_INFER

template <typename Adaptor>
static LogicalResult inferArgReduce(MLIRContext *ctx,
                                    std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  auto t = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, t.getRank())))
    return failure();
  if (t.getDimSize(axis) == 0)
    return emitOptionalError(loc, "cannot take an arg-extremum over an empty "
                                  "dimension");
  types.push_back(tensorOf(reducedShape(t.getShape(), {axis},
                                        adaptor.getKeepdims()),
                           IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult ArgMaxOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferArgReduce(ctx, loc, adaptor, types);
}

LogicalResult ArgMinOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferArgReduce(ctx, loc, adaptor, types);
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, pooling
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto a = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto b = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (a.getRank() < 2 || a.getRank() != b.getRank())
    return emitOptionalError(loc, "operands need one rank >= 2, got ",
                             formatShape(a.getShape()), " and ",
                             formatShape(b.getShape()));
  int64_t r = a.getRank();
  if (a.getShape().drop_back(2) != b.getShape().drop_back(2))
    return emitOptionalError(loc, "batch dimensions differ: ",
                             formatShape(a.getShape()), " and ",
                             formatShape(b.getShape()));
  if (a.getDimSize(r - 1) != b.getDimSize(r - 2))
    return emitOptionalError(loc, "contracting dimensions differ: ",
                             formatShape(a.getShape()), " x ",
                             formatShape(b.getShape()));
  SmallVector<int64_t> shape(a.getShape().drop_back());
  shape.push_back(b.getDimSize(r - 1));
  types.push_back(tensorOf(shape, a.getElementType()));
  return success();
}

/// Checks the per-spatial-dimension attributes of a convolution or pool.
static LogicalResult checkWindowAttrs(std::optional<Location> loc,
                                      int64_t spatial,
                                      ArrayRef<ArrayRef<int64_t>> lists) {
  for (ArrayRef<int64_t> l : lists)
    if (int64_t(l.size()) != spatial)
      return emitOptionalError(loc, "window attributes need ", spatial,
                               " entries, one per spatial dimension");
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  auto w = cast<RankedTensorType>(adaptor.getFilter().getType());
  int64_t spatial = x.getRank() - 2;
  if (spatial < 1 || w.getRank() != x.getRank())
    return emitOptionalError(loc, "input ", formatShape(x.getShape()),
                             " and filter ", formatShape(w.getShape()),
                             " need one rank >= 3");
  if (failed(checkWindowAttrs(loc, spatial,
                              {adaptor.getStrides(), adaptor.getDilations(),
                               adaptor.getPadLow(), adaptor.getPadHigh()})))
    return failure();
  int64_t group = adaptor.getGroup();
  if (group < 1 || x.getDimSize(1) % group || w.getDimSize(0) % group ||
      x.getDimSize(1) / group != w.getDimSize(1))
    return emitOptionalError(loc, "input channels ", x.getDimSize(1),
                             " and filter ", formatShape(w.getShape()),
                             " do not match with group ", group);
  SmallVector<int64_t> shape = {x.getDimSize(0), w.getDimSize(0)};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t o = windowOutputSize(
        x.getDimSize(i + 2), w.getDimSize(i + 2), adaptor.getStrides()[i],
        adaptor.getDilations()[i], adaptor.getPadLow()[i],
        adaptor.getPadHigh()[i], /*ceilMode=*/false);
    if (o < 1)
      return emitOptionalError(loc, "the filter does not fit spatial "
                                    "dimension ",
                               i, " of input ", formatShape(x.getShape()));
    shape.push_back(o);
  }
  types.push_back(tensorOf(shape, x.getElementType()));
  return success();
}

LogicalResult ConvTransposeOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  auto w = cast<RankedTensorType>(adaptor.getFilter().getType());
  int64_t spatial = x.getRank() - 2;
  if (spatial < 1 || w.getRank() != x.getRank())
    return emitOptionalError(loc, "input and filter need one rank >= 3");
  if (failed(checkWindowAttrs(
          loc, spatial,
          {adaptor.getStrides(), adaptor.getDilations(), adaptor.getPadLow(),
           adaptor.getPadHigh(), adaptor.getOutputPadding()})))
    return failure();
  int64_t group = adaptor.getGroup();
  if (group < 1 || x.getDimSize(1) != w.getDimSize(0) ||
      x.getDimSize(1) % group)
    return emitOptionalError(loc, "input channels ", x.getDimSize(1),
                             " do not match filter ", formatShape(w.getShape()),
                             " with group ", group);
  SmallVector<int64_t> shape = {x.getDimSize(0), w.getDimSize(1) * group};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t o = adaptor.getStrides()[i] * (x.getDimSize(i + 2) - 1) +
                adaptor.getOutputPadding()[i] +
                adaptor.getDilations()[i] * (w.getDimSize(i + 2) - 1) + 1 -
                adaptor.getPadLow()[i] - adaptor.getPadHigh()[i];
    if (o < 1)
      return emitOptionalError(loc, "empty output in spatial dimension ", i);
    shape.push_back(o);
  }
  types.push_back(tensorOf(shape, x.getElementType()));
  return success();
}

LogicalResult ConvBackwardFilterOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  auto g = cast<RankedTensorType>(adaptor.getGrad().getType());
  int64_t spatial = x.getRank() - 2;
  if (spatial < 1 || g.getRank() != x.getRank() || g.getDimSize(0) != x.getDimSize(0))
    return emitOptionalError(loc, "input ", formatShape(x.getShape()), " and gradient ",
                             formatShape(g.getShape()), " need one rank >= 3 and one batch");
  if (failed(checkWindowAttrs(loc, spatial,
                              {adaptor.getKernel(), adaptor.getStrides(), adaptor.getDilations(),
                               adaptor.getPadLow(), adaptor.getPadHigh()})))
    return failure();
  int64_t group = adaptor.getGroup();
  if (group < 1 || x.getDimSize(1) % group || g.getDimSize(1) % group)
    return emitOptionalError(loc, "input channels ", x.getDimSize(1), " and gradient channels ",
                             g.getDimSize(1), " are not multiples of group ", group);
  SmallVector<int64_t> shape = {g.getDimSize(1), x.getDimSize(1) / group};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t k = adaptor.getKernel()[i], s = adaptor.getStrides()[i],
            d = adaptor.getDilations()[i];
    int64_t reach = (g.getDimSize(i + 2) - 1) * s + (k - 1) * d + 1;
    if (k < 1 || s < 1 || d < 1 ||
        reach > x.getDimSize(i + 2) + adaptor.getPadLow()[i] + adaptor.getPadHigh()[i])
      return emitOptionalError(loc, "the windows of kernel ", k, " do not fit spatial dimension ",
                               i, " of input ", formatShape(x.getShape()), " for gradient ",
                               formatShape(g.getShape()));
    shape.push_back(k);
  }
  types.push_back(tensorOf(shape, x.getElementType()));
  return success();
}

template <typename Adaptor>
static LogicalResult inferPool(std::optional<Location> loc, Adaptor adaptor,
                               SmallVectorImpl<Type> &types) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t spatial = x.getRank() - 2;
  if (spatial < 1)
    return emitOptionalError(loc, "pooling needs an input of rank >= 3");
  if (failed(checkWindowAttrs(loc, spatial,
                              {adaptor.getKernel(), adaptor.getStrides(),
                               adaptor.getDilations(), adaptor.getPadLow(),
                               adaptor.getPadHigh()})))
    return failure();
  SmallVector<int64_t> shape(x.getShape().take_front(2));
  for (int64_t i = 0; i < spatial; ++i) {
    // A window must reach the input: padding as wide as the dilated window
    // would make the first or last window all padding.
    int64_t window =
        adaptor.getDilations()[i] * (adaptor.getKernel()[i] - 1) + 1;
    if (adaptor.getPadLow()[i] >= window || adaptor.getPadHigh()[i] >= window)
      return emitOptionalError(loc, "padding of spatial dimension ", i,
                               " is not smaller than the window");
    int64_t o = windowOutputSize(
        x.getDimSize(i + 2), adaptor.getKernel()[i], adaptor.getStrides()[i],
        adaptor.getDilations()[i], adaptor.getPadLow()[i],
        adaptor.getPadHigh()[i], adaptor.getCeilMode());
    if (o < 1)
      return emitOptionalError(loc, "the window does not fit spatial "
                                    "dimension ",
                               i, " of input ", formatShape(x.getShape()));
    shape.push_back(o);
  }
  types.push_back(tensorOf(shape, x.getElementType()));
  return success();
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferPool(loc, adaptor, types);
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferPool(loc, adaptor, types);
}

//===----------------------------------------------------------------------===//
// Normalization, softmax, dropout, resize, loss
//===----------------------------------------------------------------------===//

/// Per-channel parameters of batch norm are 1-D with the input's dimension 1.
static LogicalResult checkChannelParam(std::optional<Location> loc,
                                       RankedTensorType x,
                                       RankedTensorType p) {
  if (x.getRank() < 2)
    return emitOptionalError(loc, "batch norm needs an input of rank >= 2");
  if (p.getRank() != 1 || p.getDimSize(0) != x.getDimSize(1))
    return emitOptionalError(loc, "per-channel parameters must have shape [",
                             x.getDimSize(1), "], got ",
                             formatShape(p.getShape()));
  return success();
}

LogicalResult BatchNormInferenceOp::verify() {
  return checkChannelParam(getLoc(), getInput().getType(),
                           getScale().getType());
}

LogicalResult BatchNormTrainingOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  auto s = cast<RankedTensorType>(adaptor.getScale().getType());
  if (failed(checkChannelParam(loc, x, s)))
    return failure();
  types.append({x, s, s});
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, x.getRank())))
    return failure();
  ArrayRef<int64_t> normalized = x.getShape().drop_front(axis);
  for (Value p : {adaptor.getScale(), adaptor.getBias()}) {
    if (!p)
      continue;
    auto t = cast<RankedTensorType>(p.getType());
    if (t.getShape() != normalized)
      return emitOptionalError(loc, "scale and bias must have shape ",
                               formatShape(normalized), ", got ",
                               formatShape(t.getShape()));
  }
  SmallVector<int64_t> statShape(x.getShape().take_front(axis));
  statShape.append(x.getRank() - axis, 1);
  auto stat = tensorOf(statShape, x.getElementType());
  types.append({x, stat, stat});
  return success();
}

template <typename Op> static LogicalResult verifySoftmax(Op op) {
  int64_t rank = op.getInput().getType().getRank();
  if (int64_t(op.getAxis()) < 0 || int64_t(op.getAxis()) >= rank)
    return op.emitOpError("axis ")
           << int64_t(op.getAxis()) << " is out of range";
  return success();
}
LogicalResult SoftmaxOp::verify() { return verifySoftmax(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmax(*this); }

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  types.append({x, tensorOf(x.getShape(), IntegerType::get(ctx, 1))});
  return success();
}

LogicalResult DropoutOp::verify() {
  double r = getRatio().convertToDouble();
  if (!(r >= 0.0 && r < 1.0))
    return emitOpError("ratio must be in [0, 1), got ") << r;
  if (getRng() && getRng().getType().getShape() != ArrayRef<int64_t>{2})
    return emitOpError("rng must be [seed, counter], a tensor<2xi64>, not ")
           << getRng().getType();
  return success();
}

LogicalResult RandomOp::verify() {
  double a = getA().convertToDouble(), b = getB().convertToDouble();
  if (!std::isfinite(a) || !std::isfinite(b))
    return emitOpError("a and b must be finite, got ") << a << " and " << b;
  if (getDistribution() == RandomDistribution::uniform && !(a <= b))
    return emitOpError("uniform needs a <= b, got [") << a << ", " << b << ")";
  if (getDistribution() == RandomDistribution::normal && !(b >= 0.0))
    return emitOpError("normal needs a standard deviation b >= 0, got ") << b;
  if (getRng() && getRng().getType().getShape() != ArrayRef<int64_t>{2})
    return emitOpError("rng must be [seed, counter], a tensor<2xi64>, not ")
           << getRng().getType();
  return success();
}

LogicalResult ResizeOp::verify() {
  auto in = getInput().getType(), out = getResult().getType();
  if (int64_t(getScales().size()) != in.getRank() ||
      out.getRank() != in.getRank())
    return emitOpError("scales and result need the input's rank ")
           << in.getRank();
  for (auto [i, s] : llvm::enumerate(getScales()))
    if (!(s > 0.0))
      return emitOpError("scale ") << i << " must be positive, got " << s;
  return success();
}

LogicalResult NllLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  auto t = cast<RankedTensorType>(adaptor.getTarget().getType());
  if (x.getRank() < 2)
    return emitOptionalError(loc, "input needs rank >= 2 ([N, C, ...])");
  SmallVector<int64_t> expected = {x.getDimSize(0)};
  llvm::append_range(expected, x.getShape().drop_front(2));
  if (t.getShape() != ArrayRef<int64_t>(expected))
    return emitOptionalError(loc, "target must have shape ",
                             formatShape(expected), ", got ",
                             formatShape(t.getShape()));
  if (Value w = adaptor.getWeight()) {
    auto wt = cast<RankedTensorType>(w.getType());
    if (wt.getRank() != 1 || wt.getDimSize(0) != x.getDimSize(1))
      return emitOptionalError(loc, "weight must have shape [",
                               x.getDimSize(1), "]");
  }
  if (adaptor.getReduction() == LossReduction::none)
    types.push_back(tensorOf(expected, x.getElementType()));
  else
    types.push_back(tensorOf({}, x.getElementType()));
  return success();
}

Type tcc::batchNormAccumulatorType(Type element) {
  if (isa<FloatType>(element) && element.getIntOrFloatBitWidth() < 64)
    return Float64Type::get(element.getContext());
  return element;
}

/// gather_nd: the slices of DATA at the index tuples INDICES [B..., k]
/// (the result is [B..., D_k, ...]), each component wrapped and clamped into its
/// dimension as scatter_nd's lowering does. Built as one gather along the
/// first k dimensions of DATA flattened, at the tuples' row-major offsets.
Value tcc::buildGatherNd(OpBuilder &b, Location loc, Value data, Value indices) {
  auto dt = cast<RankedTensorType>(data.getType());
  auto it = cast<RankedTensorType>(indices.getType());
  int64_t k = it.getShape().back();
  Type ie = it.getElementType();
  SmallVector<int64_t> batch(it.getShape().drop_back()), column(batch);
  column.push_back(1);
  auto batchType = RankedTensorType::get(batch, ie);
  auto splatInt = [&](int64_t v) -> Value {
    return ConstantOp::create(b, loc, batchType,
                              DenseElementsAttr::get(batchType, IntegerAttr::get(ie, v)));
  };
  Value offset;
  int64_t rows = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    int64_t size = dt.getDimSize(j);
    SmallVector<int64_t> start(it.getRank(), 0), stride(it.getRank(), 1);
    start.back() = j;
    Value c = SliceOp::create(b, loc, RankedTensorType::get(column, ie), indices,
                              b.getDenseI64ArrayAttr(start), b.getDenseI64ArrayAttr(stride));
    c = ReshapeOp::create(b, loc, batchType, c);
    Value negative = CompareOp::create(b, loc, CmpPredicate::lt, c, splatInt(0));
    c = SelectOp::create(b, loc, negative, AddOp::create(b, loc, c, splatInt(size)), c);
    c = MinOp::create(b, loc, MaxOp::create(b, loc, c, splatInt(0)), splatInt(size - 1));
    if (rows != 1)
      c = MulOp::create(b, loc, c, splatInt(rows));
    offset = offset ? Value(AddOp::create(b, loc, offset, c)) : c;
    rows *= size;
  }
  if (!offset)
    offset = splatInt(0);
  SmallVector<int64_t> flat = {rows};
  llvm::append_range(flat, dt.getShape().drop_front(k));
  auto tableType = RankedTensorType::get(flat, dt.getElementType());
  Value table = dt == tableType ? data : Value(ReshapeOp::create(b, loc, tableType, data));
  SmallVector<int64_t> shape(batch);
  llvm::append_range(shape, dt.getShape().drop_front(k));
  auto result = RankedTensorType::get(shape, dt.getElementType());
  return GatherOp::create(b, loc, result, table, offset, b.getI64IntegerAttr(0));
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verify() {
  if (getOperands().empty())
    return emitOpError("needs at least one operand");
  bool onTensors = isa<RankedTensorType>(getOperands().front().getType());
  for (Value v : getOperands()) {
    auto shaped = cast<ShapedType>(v.getType());
    if (isa<RankedTensorType>(shaped) != onTensors)
      return emitOpError("mixes tensor and buffer operands");
    Type element = shaped.getElementType();
    if (!element.isF32() && !element.isF16() && !element.isBF16())
      return emitOpError("averages f32, f16 or bf16 values, not ") << element;
  }
  if (!onTensors) {
    if (!getResults().empty())
      return emitOpError("on buffers has no results (it averages them in place)");
    return success();
  }
  if (getResults().size() != getOperands().size())
    return emitOpError("has ") << getOperands().size() << " operands but " << getResults().size()
                               << " results";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getOperands(), getResults())))
    if (std::get<0>(pair).getType() != std::get<1>(pair).getType())
      return emitOpError("result ") << i << " has type " << std::get<1>(pair).getType()
                                    << ", its operand " << std::get<0>(pair).getType();
  return success();
}

void AllReduceOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  // On buffers: reads every operand and writes it in place. On tensors:
  // pure, like any value semantics op.
  for (OpOperand &operand : getOperandsMutable())
    if (isa<MemRefType>(operand.get().getType())) {
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    }
}
