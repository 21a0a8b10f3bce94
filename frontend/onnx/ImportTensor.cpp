//===- ImportTensor.cpp - shape and data-movement ONNX ops ----------------===//
//
// Reshape and friends become tcc.reshape; Slice and Split become tcc.slice
// with normalized bounds; Expand and Tile become broadcasts; Shape, Size,
// ConstantOfShape and Range become constants (shapes are static), so the
// shape subgraphs of exported models fold away during import.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ImportContext.h"
#include "dialects/ByteSizes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace tcc;
using namespace tcc::onnx_frontend;

namespace {

using NC = NodeContext;

/// Reads a list-valued operand that moved from an attribute to an input at
/// `inputSince`: the attribute before, the (optional) input from then on.
FailureOr<std::optional<SmallVector<int64_t>>>
attrOrInput(NC &ctx, StringRef name, unsigned inputIndex, int64_t inputSince) {
  if (ctx.opset < inputSince) {
    if (!ctx.hasAttr(name))
      return std::optional<SmallVector<int64_t>>();
    return std::optional<SmallVector<int64_t>>(ctx.getInts(name));
  }
  if (!ctx.hasInput(inputIndex))
    return std::optional<SmallVector<int64_t>>();
  auto v = ctx.intsInput(inputIndex, name);
  if (failed(v))
    return failure();
  return std::optional<SmallVector<int64_t>>(*v);
}

LogicalResult importReshape(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  SmallVector<int64_t> shape;
  if (ctx.opset < 5) {
    shape = ctx.getInts("shape");
  } else {
    auto s = ctx.intsInput(1, "shape");
    if (failed(s))
      return failure();
    shape = *s;
  }
  bool allowZero = ctx.opset >= 14 && ctx.getInt("allowzero", 0);
  int64_t inferIndex = -1, known = 1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == 0 && !allowZero) {
      if (int64_t(i) >= NC::rank(x))
        return ctx.error() << "shape " << formatShape(shape) << " copies dimension "
                           << i << ", which " << formatShape(NC::shape(x))
                           << " lacks",
               failure();
      d = NC::shape(x)[i];
    }
    if (d == -1) {
      if (inferIndex >= 0)
        return ctx.error() << "shape " << formatShape(shape)
                           << " has more than one -1",
               failure();
      inferIndex = i;
      continue;
    }
    if (d < 0)
      return ctx.error() << "shape " << formatShape(shape)
                         << " has a negative dimension",
             failure();
    auto n = checkedNumElements({known, d});
    if (!n)
      return ctx.error() << "shape " << formatShape(shape) << " overflows",
             failure();
    known = *n;
  }
  int64_t total = NC::type(x).getNumElements();
  if (inferIndex >= 0) {
    if (known == 0 || total % known)
      return ctx.error() << "cannot reshape " << formatShape(NC::shape(x))
                         << " to " << formatShape(shape),
             failure();
    shape[inferIndex] = total / known;
  } else if (known != total) {
    return ctx.error() << "cannot reshape " << formatShape(NC::shape(x)) << " ("
                       << total << " elements) to " << formatShape(shape),
           failure();
  }
  ctx.setOutput(0, ctx.reshape(x, shape));
  return success();
}

LogicalResult importFlatten(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t r = NC::rank(x), axis = ctx.getInt("axis", 1);
  if (axis < -r || axis > r)
    return ctx.error() << "axis " << axis << " is out of range for rank " << r,
           failure();
  if (axis < 0)
    axis += r;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < r; ++d)
    (d < axis ? outer : inner) *= NC::shape(x)[d];
  ctx.setOutput(0, ctx.reshape(x, {outer, inner}));
  return success();
}

LogicalResult importSqueeze(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto axes = attrOrInput(ctx, "axes", 1, 13);
  if (failed(axes))
    return failure();
  ArrayRef<int64_t> shape = NC::shape(x);
  SmallVector<int64_t> drop;
  if (*axes) {
    auto n = ctx.normalizeAxes(**axes, NC::rank(x));
    if (failed(n))
      return failure();
    drop = *n;
    for (int64_t a : drop)
      if (shape[a] != 1)
        return ctx.error() << "cannot squeeze dimension " << a << " of "
                           << formatShape(shape) << ": its size is not 1",
               failure();
  } else {
    for (auto [i, d] : llvm::enumerate(shape))
      if (d == 1)
        drop.push_back(i);
  }
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(shape))
    if (!llvm::is_contained(drop, int64_t(i)))
      out.push_back(d);
  ctx.setOutput(0, ctx.reshape(x, out));
  return success();
}

LogicalResult importUnsqueeze(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto axes = attrOrInput(ctx, "axes", 1, 13);
  if (failed(axes))
    return failure();
  if (!*axes)
    return ctx.error() << "axes are required", failure();
  int64_t outRank = NC::rank(x) + int64_t((*axes)->size());
  auto n = ctx.normalizeAxes(**axes, outRank);
  if (failed(n))
    return failure();
  SmallVector<int64_t> out;
  auto in = NC::shape(x).begin();
  for (int64_t d = 0; d < outRank; ++d)
    out.push_back(llvm::is_contained(*n, d) ? 1 : *in++);
  ctx.setOutput(0, ctx.reshape(x, out));
  return success();
}

LogicalResult importTranspose(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  SmallVector<int64_t> perm = ctx.getInts("perm");
  int64_t r = NC::rank(x);
  if (!ctx.hasAttr("perm"))
    for (int64_t d = r - 1; d >= 0; --d)
      perm.push_back(d);
  SmallVector<bool> seen(r, false);
  if (int64_t(perm.size()) != r)
    return ctx.error() << "perm has " << perm.size()
                       << " entries for an input of rank " << r,
           failure();
  for (int64_t &p : perm) {
    if (p < 0)
      p += r;
    if (p < 0 || p >= r || seen[p])
      return ctx.error() << "perm is not a permutation of the dimensions",
             failure();
    seen[p] = true;
  }
  ctx.setOutput(0, ctx.transpose(x, perm));
  return success();
}

/// Every input of the node, in order; failure (reported) when one is absent.
FailureOr<SmallVector<Value>> allInputs(NC &ctx) {
  SmallVector<Value> xs;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    Value v = ctx.input(i);
    if (!v)
      return failure();
    xs.push_back(v);
  }
  return xs;
}

/// Checks that SIZES are non-negative and add up to DIM (a Split's pieces).
LogicalResult checkSplitSizes(NC &ctx, ArrayRef<int64_t> sizes, int64_t dim) {
  int64_t start = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return ctx.error() << "split sizes must be non-negative", failure();
    // Compared before adding, so that huge sizes cannot wrap the sum.
    if (s > dim - start)
      return ctx.error() << "split sizes " << formatShape(sizes)
                         << " add up to more than " << dim,
             failure();
    start += s;
  }
  if (start != dim)
    return ctx.error() << "split sizes add up to " << start << ", not " << dim, failure();
  return success();
}

LogicalResult importConcat(NC &ctx) {
  auto inputs = allInputs(ctx);
  if (failed(inputs))
    return failure();
  SmallVector<Value> xs = std::move(*inputs);
  if (xs.empty())
    return ctx.error() << "needs at least one input", failure();
  int64_t r = NC::rank(xs[0]);
  if (r == 0)
    return ctx.error() << "cannot concatenate scalars", failure();
  for (Value v : xs)
    if (NC::rank(v) != r || NC::elementType(v) != NC::elementType(xs[0]))
      return ctx.error() << "inputs differ in rank or element type: "
                         << NC::type(xs[0]) << " and " << NC::type(v),
             failure();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", ctx.opset < 4 ? 1 : 0), r);
  if (failed(axis))
    return failure();
  for (Value v : xs)
    for (int64_t d = 0; d < r; ++d)
      if (d != *axis && NC::shape(v)[d] != NC::shape(xs[0])[d])
        return ctx.error() << "inputs " << formatShape(NC::shape(xs[0])) << " and "
                           << formatShape(NC::shape(v))
                           << " differ outside the axis " << *axis,
               failure();
  ctx.setOutput(0, ctx.create<ConcatOp>(xs, *axis));
  return success();
}

/// The sequence named by input I; an error when it is none.
const std::vector<Value> *sequenceInput(NC &ctx, unsigned i) {
  if (!ctx.hasInput(i)) {
    ctx.error() << "input " << i << " is required but absent";
    return nullptr;
  }
  const std::vector<Value> *seq = ctx.graph.lookupSequence(ctx.node.input(i));
  if (!seq)
    ctx.error() << "input '" << ctx.node.input(i) << "' is not a sequence";
  return seq;
}

/// Output I as the sequence VALUES.
void setSequenceOutput(NC &ctx, unsigned i, std::vector<Value> values) {
  if (ctx.hasOutput(i))
    ctx.graph.defineSequence(ctx.node.output(i), std::move(values));
}

/// SplitToSequence: the pieces of X along AXIS: SPLIT sizes (a list), or
/// pieces of SPLIT elements (a scalar; the last may be smaller), or, without
/// SPLIT, single elements (their axis removed when keepdims = 0).
LogicalResult importSplitToSequence(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), NC::rank(x));
  if (failed(axis))
    return failure();
  int64_t dim = NC::shape(x)[*axis];
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (ctx.hasInput(1)) {
    DenseElementsAttr split = ctx.constantInput(1);
    if (!split)
      return ctx.error() << "split must be a compile-time constant", failure();
    SmallVector<int64_t> given;
    for (const APInt &v : split.getValues<APInt>())
      given.push_back(v.getSExtValue());
    if (split.getType().getRank() == 0) {
      if (given[0] <= 0)
        return ctx.error() << "split " << given[0] << " is not positive", failure();
      for (int64_t start = 0; start < dim; start += given[0])
        sizes.push_back(std::min(given[0], dim - start));
    } else {
      sizes = given;
    }
  } else {
    sizes.assign(size_t(dim), 1);
    squeeze = ctx.getInt("keepdims", 1) == 0;
  }
  if (failed(checkSplitSizes(ctx, sizes, dim)))
    return failure();
  std::vector<Value> pieces;
  int64_t start = 0;
  for (int64_t s : sizes) {
    Value piece = ctx.sliceAxis(x, *axis, start, s);
    if (squeeze) {
      SmallVector<int64_t> shape(NC::shape(piece));
      shape.erase(shape.begin() + *axis);
      piece = ctx.reshape(piece, shape);
    }
    pieces.push_back(piece);
    start += s;
  }
  setSequenceOutput(ctx, 0, std::move(pieces));
  return success();
}

/// SequenceAt: the tensor at a compile-time POSITION (negative from the end).
LogicalResult importSequenceAt(NC &ctx) {
  const std::vector<Value> *seq = sequenceInput(ctx, 0);
  if (!seq)
    return failure();
  auto position = ctx.intsInput(1, "position");
  if (failed(position))
    return failure();
  if (position->size() != 1)
    return ctx.error() << "position must be a scalar", failure();
  int64_t n = int64_t(seq->size()), p = (*position)[0];
  if (p < -n || p >= n)
    return ctx.error() << "position " << p << " is outside a sequence of " << n << " tensors",
           failure();
  ctx.setOutput(0, (*seq)[size_t(p < 0 ? p + n : p)]);
  return success();
}

/// SequenceLength: the number of tensors, a constant int64 scalar.
LogicalResult importSequenceLength(NC &ctx) {
  const std::vector<Value> *seq = sequenceInput(ctx, 0);
  if (!seq)
    return failure();
  Value n = ctx.constI64({int64_t(seq->size())});
  ctx.setOutput(0, ctx.reshape(n, {}));
  return success();
}

/// SequenceConstruct: a sequence of its inputs.
LogicalResult importSequenceConstruct(NC &ctx) {
  auto inputs = allInputs(ctx);
  if (failed(inputs))
    return failure();
  setSequenceOutput(ctx, 0, std::vector<Value>(inputs->begin(), inputs->end()));
  return success();
}

/// ConcatFromSequence: the tensors joined along AXIS, or stacked along a
/// new AXIS when new_axis = 1.
LogicalResult importConcatFromSequence(NC &ctx) {
  const std::vector<Value> *seq = sequenceInput(ctx, 0);
  if (!seq)
    return failure();
  if (seq->empty())
    return ctx.error() << "cannot join an empty sequence", failure();
  bool stack = ctx.getInt("new_axis", 0) != 0;
  int64_t rank = NC::rank(seq->front());
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank + (stack ? 1 : 0));
  if (failed(axis))
    return failure();
  SmallVector<Value> parts;
  for (Value v : *seq) {
    if (NC::rank(v) != rank || NC::elementType(v) != NC::elementType(seq->front()))
      return ctx.error() << "the tensors differ in rank or element type: "
                         << NC::type(seq->front()) << " and " << NC::type(v),
             failure();
    if (stack) {
      SmallVector<int64_t> shape(NC::shape(v));
      shape.insert(shape.begin() + *axis, 1);
      v = ctx.reshape(v, shape);
    }
    parts.push_back(v);
  }
  ctx.setOutput(0, parts.size() == 1 ? parts[0] : ctx.create<ConcatOp>(parts, *axis));
  return success();
}

LogicalResult importSplit(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), NC::rank(x));
  if (failed(axis))
    return failure();
  int64_t dim = NC::shape(x)[*axis];
  int64_t n = ctx.numOutputs();
  SmallVector<int64_t> sizes;
  auto split = attrOrInput(ctx, "split", 1, 13);
  if (failed(split))
    return failure();
  if (*split) {
    sizes = **split;
  } else {
    int64_t parts = n;
    if (ctx.opset >= 18 && ctx.hasAttr("num_outputs")) {
      parts = ctx.getInt("num_outputs", n);
      if (parts != n)
        return ctx.error() << "num_outputs is " << parts << " but the node has "
                           << n << " outputs",
               failure();
    }
    if (parts <= 0)
      return ctx.error() << "needs at least one output", failure();
    // Equal parts; since opset 18 the last may be smaller.
    int64_t chunk = (dim + parts - 1) / parts;
    if (ctx.opset < 18 && dim % parts)
      return ctx.error() << "dimension " << dim << " does not split into "
                         << parts << " equal parts",
             failure();
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  if (int64_t(sizes.size()) != n)
    return ctx.error() << "split has " << sizes.size() << " sizes for " << n
                       << " outputs",
           failure();
  if (failed(checkSplitSizes(ctx, sizes, dim)))
    return failure();
  int64_t start = 0;
  for (auto [i, s] : llvm::enumerate(sizes)) {
    ctx.setOutput(i, ctx.sliceAxis(x, *axis, start, s));
    start += s;
  }
  return success();
}

LogicalResult importSlice(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (ctx.opset < 10) {
    starts = ctx.getInts("starts");
    ends = ctx.getInts("ends");
    axes = ctx.getInts("axes");
  } else {
    auto s = ctx.intsInput(1, "starts");
    auto e = ctx.intsInput(2, "ends");
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (ctx.hasInput(3)) {
      auto a = ctx.intsInput(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (ctx.hasInput(4)) {
      auto st = ctx.intsInput(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  int64_t r = NC::rank(x);
  if (axes.empty())
    for (int64_t i = 0; i < int64_t(starts.size()); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.error() << "starts, ends, axes and steps differ in length",
           failure();
  SmallVector<int64_t> start(r, 0), stride(r, 1), shape(NC::shape(x));
  SmallVector<bool> seen(r, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto a = ctx.normalizeAxis(axes[i], r);
    if (failed(a))
      return failure();
    if (seen[*a])
      return ctx.error() << "axis " << *a << " is sliced twice", failure();
    seen[*a] = true;
    int64_t dim = shape[*a], step = steps[i];
    if (step == 0)
      return ctx.error() << "step of axis " << *a << " is zero", failure();
    auto clampIndex = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0)
        v = v < -dim ? lo : v + dim;
      return std::clamp(v, lo, hi);
    };
    int64_t b, e;
    if (step > 0) {
      b = clampIndex(starts[i], 0, dim);
      e = clampIndex(ends[i], 0, dim);
    } else {
      b = clampIndex(starts[i], -1, dim - 1);
      e = ends[i] < -dim ? -1 : clampIndex(ends[i], -1, dim - 1);
    }
    // ceil(span / |step|) without overflow: steps may be as large as
    // INT64_MAX (or as small as INT64_MIN) to mean "one element".
    int64_t span = step > 0 ? e - b : b - e;
    uint64_t magnitude = step > 0 ? uint64_t(step) : 0 - uint64_t(step);
    int64_t count = span <= 0 ? 0 : int64_t(1 + (uint64_t(span) - 1) / magnitude);
    start[*a] = count ? b : 0;
    stride[*a] = step;
    shape[*a] = count;
  }
  ctx.setOutput(0, ctx.create<SliceOp>(
                       RankedTensorType::get(shape, NC::elementType(x)), x,
                       start, stride));
  return success();
}

/// Checks that indices are int32 or int64 (ONNX's Tind, tcc's index tensor);
/// the folders read them as integers.
LogicalResult checkIndexType(NC &ctx, Value idx) {
  Type et = NC::elementType(idx);
  if (et.isSignlessInteger(32) || et.isSignlessInteger(64))
    return success();
  return ctx.error() << "indices must be int32 or int64, got " << et,
         failure();
}

/// Checks the type of the indices and constant indices against the indexed
/// dimension's size.
LogicalResult checkIndices(NC &ctx, unsigned input, int64_t dim) {
  if (failed(checkIndexType(ctx, ctx.input(input))))
    return failure();
  DenseElementsAttr c = ctx.constantInput(input);
  if (!c)
    return success();
  for (const APInt &v : c.getValues<APInt>()) {
    int64_t i = v.getSExtValue();
    if (i < -dim || i >= dim)
      return ctx.error() << "index " << i << " is out of range for a dimension "
                         << "of size " << dim,
             failure();
  }
  return success();
}

LogicalResult importGather(NC &ctx) {
  Value x = ctx.input(0), idx = ctx.input(1);
  if (!x || !idx)
    return failure();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), NC::rank(x));
  if (failed(axis) || failed(checkIndices(ctx, 1, NC::shape(x)[*axis])))
    return failure();
  ctx.setOutput(0, ctx.create<GatherOp>(x, idx, *axis));
  return success();
}

LogicalResult importGatherElements(NC &ctx) {
  Value x = ctx.input(0), idx = ctx.input(1);
  if (!x || !idx)
    return failure();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), NC::rank(x));
  if (failed(axis) || failed(checkIndices(ctx, 1, NC::shape(x)[*axis])))
    return failure();
  if (NC::rank(idx) != NC::rank(x))
    return ctx.error() << "indices must have the rank of the data", failure();
  ctx.setOutput(0, ctx.create<GatherElementsOp>(x, idx, *axis));
  return success();
}

FailureOr<ScatterReduction> scatterReduction(NC &ctx) {
  std::string r = ctx.getString("reduction", "none");
  if (r == "none") return ScatterReduction::none;
  if (r == "add") return ScatterReduction::add;
  if (r == "mul") return ScatterReduction::mul;
  if (r == "max") return ScatterReduction::max;
  if (r == "min") return ScatterReduction::min;
  return ctx.error() << "unknown reduction '" << r << "'", failure();
}

LogicalResult importScatterElements(NC &ctx) {
  Value x = ctx.input(0), idx = ctx.input(1), upd = ctx.input(2);
  if (!x || !idx || !upd)
    return failure();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), NC::rank(x));
  auto red = scatterReduction(ctx);
  if (failed(axis) || failed(red))
    return failure();
  if (NC::shape(idx) != NC::shape(upd) || NC::rank(idx) != NC::rank(x) ||
      NC::elementType(x) != NC::elementType(upd))
    return ctx.error() << "indices " << formatShape(NC::shape(idx))
                       << " and updates " << formatShape(NC::shape(upd))
                       << " must have one shape and the data's rank",
           failure();
  if (failed(checkIndices(ctx, 1, NC::shape(x)[*axis])))
    return failure();
  ctx.setOutput(0, ctx.create<ScatterElementsOp>(x, idx, upd, *axis, *red));
  return success();
}

/// GatherND: one gather at the index tuples' row-major offsets (dialect
/// helper buildGatherNd), so it differentiates like gather. With batch_dims
/// b > 0, the b leading dimensions of data and indices are the batch: data
/// becomes [B, D_b...] (B their product) and each index tuple gains its
/// batch position in front, a constant, so that the gather is batch_dims 0's.
LogicalResult importGatherND(NC &ctx) {
  Value x = ctx.input(0), idx = ctx.input(1);
  if (!x || !idx || failed(checkIndexType(ctx, idx)))
    return failure();
  ArrayRef<int64_t> xs = NC::shape(x), is = NC::shape(idx);
  int64_t b = ctx.getInt("batch_dims", 0);
  int64_t limit = std::min<int64_t>(NC::rank(x), NC::rank(idx) - 1);
  if (b < 0 || b > std::max<int64_t>(limit, 0))
    return ctx.error() << "batch_dims " << b << " must be in [0, " << std::max<int64_t>(limit, 0)
                       << "] for data " << formatShape(xs) << " and indices " << formatShape(is),
           failure();
  for (int64_t d = 0; d < b; ++d)
    if (xs[d] != is[d])
      return ctx.error() << "batch dimension " << d << " is " << xs[d] << " in data "
                         << formatShape(xs) << " but " << is[d] << " in indices "
                         << formatShape(is),
             failure();
  int64_t k = NC::rank(idx) ? is.back() : -1;
  if (k < 1 || b + k > NC::rank(x))
    return ctx.error() << "indices " << formatShape(is) << " do not fit data " << formatShape(xs)
                       << ": the last dimension must be in [1, " << NC::rank(x) - b << "]",
           failure();
  if (DenseElementsAttr c = ctx.constantInput(1)) {
    auto values = llvm::to_vector(c.getValues<APInt>());
    for (auto [i, v] : llvm::enumerate(values)) {
      int64_t dim = xs[b + int64_t(i) % k], at = v.getSExtValue();
      if (at < -dim || at >= dim)
        return ctx.error() << "index " << at << " is out of range for dimension "
                           << b + int64_t(i) % k << " of size " << dim,
               failure();
    }
  }
  if (b > 0) {
    // data [B1..Bb, D...] -> [B, D...]; indices [B1..Bb, I..., k] -> [.., k + 1]
    // with each tuple's batch position (row-major over B1..Bb) in front.
    int64_t batch = 1;
    for (int64_t d = 0; d < b; ++d)
      batch *= xs[d];
    SmallVector<int64_t> flat = {batch};
    llvm::append_range(flat, xs.drop_front(b));
    x = ctx.create<ReshapeOp>(RankedTensorType::get(flat, NC::elementType(x)), x);
    // The positions 0..B-1 as [B1..Bb], broadcast over the index tuples.
    Type ie = NC::elementType(idx);
    SmallVector<APInt> positions;
    for (int64_t i = 0; i < batch; ++i)
      positions.push_back(APInt(ie.getIntOrFloatBitWidth(), uint64_t(i), true));
    auto batchType = RankedTensorType::get(is.take_front(b), ie);
    Value position = ctx.constant(DenseElementsAttr::get(batchType, positions));
    SmallVector<int64_t> positionShape(is.drop_back());
    positionShape.push_back(1);
    position = ctx.create<BroadcastInDimOp>(RankedTensorType::get(positionShape, ie), position,
                                            ctx.b.getDenseI64ArrayAttr(llvm::to_vector(
                                                llvm::seq<int64_t>(0, b))));
    SmallVector<int64_t> widened(is);
    widened.back() = k + 1;
    idx = ctx.create<ConcatOp>(RankedTensorType::get(widened, ie), ValueRange{position, idx},
                               NC::rank(idx) - 1);
  }
  ctx.setOutput(0, buildGatherNd(ctx.b, ctx.loc, x, idx));
  return success();
}

/// NonZero: its output's shape is the number of nonzero elements, so only a
/// compile-time input can be imported (its coordinates become a constant).
LogicalResult importNonZero(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  DenseElementsAttr c = ctx.constantInput(0);
  if (!c) {
    auto diag = ctx.error() << "the output's shape is the number of nonzero elements of '"
                            << ctx.node.input(0)
                            << "', which is computed at run time; tcc compiles static shapes "
                               "(select with a mask of fixed shape, e.g. Where, instead)";
    if (isa<BlockArgument>(x))
      diag << "; a graph input's value can be fixed with --const-input " << ctx.node.input(0)
           << "=FILE";
    return failure();
  }
  ArrayRef<int64_t> shape = NC::shape(x);
  int64_t rank = shape.size();
  SmallVector<int64_t> hits;
  auto nonzero = [&](int64_t i) {
    if (isa<FloatType>(c.getElementType()))
      return !c.getValues<APFloat>()[i].isZero();
    return !c.getValues<APInt>()[i].isZero();
  };
  for (int64_t i = 0, e = c.getNumElements(); i < e; ++i)
    if (nonzero(i))
      hits.push_back(i);
  int64_t n = hits.size();
  SmallVector<int64_t> coords(rank * n);
  for (auto [j, flat] : llvm::enumerate(hits))
    for (int64_t d = rank - 1, rest = flat; d >= 0; --d) {
      coords[d * n + j] = rest % shape[d];
      rest /= shape[d];
    }
  auto type = RankedTensorType::get({rank, n}, ctx.b.getI64Type());
  ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(type, ArrayRef<int64_t>(coords))));
  return success();
}

LogicalResult importScatterND(NC &ctx) {
  Value x = ctx.input(0), idx = ctx.input(1), upd = ctx.input(2);
  if (!x || !idx || !upd)
    return failure();
  auto red = scatterReduction(ctx);
  if (failed(red) || failed(checkIndexType(ctx, idx)))
    return failure();
  int64_t k = NC::rank(idx) ? NC::shape(idx).back() : -1;
  SmallVector<int64_t> expected;
  if (NC::rank(idx))
    llvm::append_range(expected, NC::shape(idx).drop_back());
  if (k >= 0 && k <= NC::rank(x))
    llvm::append_range(expected, NC::shape(x).drop_front(k));
  if (k < 1 || k > NC::rank(x) || ArrayRef<int64_t>(expected) != NC::shape(upd))
    return ctx.error() << "indices " << formatShape(NC::shape(idx))
                       << " and updates " << formatShape(NC::shape(upd))
                       << " do not fit data " << formatShape(NC::shape(x)),
           failure();
  ctx.setOutput(0, ctx.create<ScatterNdOp>(x, idx, upd, *red));
  return success();
}

LogicalResult importExpand(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto shape = ctx.intsInput(1, "shape");
  if (failed(shape))
    return failure();
  auto target = ctx.broadcastShape({NC::shape(x), *shape});
  if (failed(target))
    return failure();
  ctx.setOutput(0, ctx.broadcastTo(x, *target));
  return success();
}

/// tile(x, r) = reshape(broadcast(x to [r0, d0, r1, d1, ...])).
LogicalResult importTile(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto repeats = ctx.intsInput(1, "repeats");
  if (failed(repeats))
    return failure();
  int64_t r = NC::rank(x);
  if (int64_t(repeats->size()) != r)
    return ctx.error() << "repeats has " << repeats->size()
                       << " entries for an input of rank " << r,
           failure();
  SmallVector<int64_t> wide, dims, out;
  for (int64_t d = 0; d < r; ++d) {
    int64_t rep = (*repeats)[d];
    if (rep < 0)
      return ctx.error() << "repeats must be non-negative", failure();
    wide.append({rep, NC::shape(x)[d]});
    dims.push_back(2 * d + 1);
    auto n = checkedNumElements({rep, NC::shape(x)[d]});
    if (!n)
      return ctx.error() << "the tiled shape overflows", failure();
    out.push_back(*n);
  }
  if (!checkedNumElements(out))
    return ctx.error() << "the tiled shape overflows", failure();
  Value b = ctx.create<BroadcastInDimOp>(
      RankedTensorType::get(wide, NC::elementType(x)), x, dims);
  ctx.setOutput(0, ctx.reshape(b, out));
  return success();
}

LogicalResult importPad(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t r = NC::rank(x);
  SmallVector<int64_t> pads;
  double value = 0.0;
  std::string modeName = ctx.getString("mode", "constant");
  if (ctx.opset < 11) {
    pads = ctx.getInts(ctx.opset < 2 ? "paddings" : "pads");
    value = ctx.getFloat("value", 0.0);
  } else {
    auto p = ctx.intsInput(1, "pads");
    if (failed(p))
      return failure();
    pads = *p;
    if (ctx.hasInput(2)) {
      auto v = ctx.floatsInput(2, "constant_value");
      if (failed(v))
        return failure();
      if (v->size() != 1)
        return ctx.error() << "constant_value must be a scalar", failure();
      value = (*v)[0];
    }
  }
  SmallVector<int64_t> axes;
  if (ctx.opset >= 18 && ctx.hasInput(3)) {
    auto a = ctx.intsInput(3, "axes");
    if (failed(a))
      return failure();
    for (int64_t ax : *a) {
      auto n = ctx.normalizeAxis(ax, r);
      if (failed(n))
        return failure();
      if (llvm::is_contained(axes, *n))
        return ctx.error() << "axes repeat dimension " << *n, failure();
      axes.push_back(*n);
    }
  } else {
    for (int64_t d = 0; d < r; ++d)
      axes.push_back(d);
  }
  int64_t k = axes.size();
  if (int64_t(pads.size()) != 2 * k)
    return ctx.error() << "pads has " << pads.size() << " entries; expected "
                       << 2 * k,
           failure();
  PadMode mode;
  if (modeName == "constant") mode = PadMode::constant;
  else if (modeName == "reflect") mode = PadMode::reflect;
  else if (modeName == "edge") mode = PadMode::edge;
  else if (modeName == "wrap" && ctx.opset >= 19) mode = PadMode::wrap;
  else
    return ctx.error() << "unknown padding mode '" << modeName << "'", failure();
  // Negative pads crop: pad by the positive parts, then slice.
  SmallVector<int64_t> low(r, 0), high(r, 0), cropLow(r, 0), cropHigh(r, 0);
  SmallVector<int64_t> padded(NC::shape(x));
  for (int64_t i = 0; i < k; ++i) {
    int64_t a = axes[i], lo = pads[i], hi = pads[i + k];
    if (lo < -padded[a] || hi < -padded[a])
      return ctx.error() << "negative pads remove more than dimension " << a
                         << " holds",
             failure();
    (lo >= 0 ? low[a] : cropLow[a]) = std::abs(lo);
    (hi >= 0 ? high[a] : cropHigh[a]) = std::abs(hi);
    if (cropLow[a] + cropHigh[a] > NC::shape(x)[a])
      return ctx.error() << "negative pads remove more than dimension " << a
                         << " holds",
             failure();
    std::optional<int64_t> grown = llvm::checkedAdd(padded[a], low[a]);
    if (grown)
      grown = llvm::checkedAdd(*grown, high[a]);
    if (!grown)
      return ctx.error() << "pads " << formatShape(pads) << " overflow dimension "
                         << a,
             failure();
    padded[a] = *grown;
    if (mode != PadMode::constant && (low[a] || high[a]) && NC::shape(x)[a] == 0)
      return ctx.error() << modeName << " padding of dimension " << a
                         << " needs elements to repeat, but it is empty",
             failure();
    if (mode == PadMode::reflect && (low[a] >= NC::shape(x)[a] ||
                                     high[a] >= NC::shape(x)[a]))
      return ctx.error() << "reflect padding of dimension " << a
                         << " must be smaller than its size "
                         << NC::shape(x)[a],
             failure();
  }
  if (failed(checkedCount(padded, [&] { return ctx.error(); },
                          "the padded shape")))
    return failure();
  Value y = x;
  if (llvm::any_of(low, [](int64_t v) { return v; }) ||
      llvm::any_of(high, [](int64_t v) { return v; })) {
    y = ctx.create<PadOp>(y, low, high, mode, APFloat(value));
  }
  if (llvm::any_of(cropLow, [](int64_t v) { return v; }) ||
      llvm::any_of(cropHigh, [](int64_t v) { return v; })) {
    SmallVector<int64_t> shape(NC::shape(y)), strides(r, 1);
    for (int64_t d = 0; d < r; ++d)
      shape[d] -= cropLow[d] + cropHigh[d];
    y = ctx.create<SliceOp>(RankedTensorType::get(shape, NC::elementType(y)), y,
                            cropLow, strides);
  }
  ctx.setOutput(0, y);
  return success();
}

LogicalResult importShape(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t r = NC::rank(x);
  int64_t start = ctx.getInt("start", 0), end = ctx.getInt("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  SmallVector<int64_t> dims;
  for (int64_t d = start; d < end; ++d)
    dims.push_back(NC::shape(x)[d]);
  ctx.setOutput(0, ctx.constI64(dims));
  return success();
}

LogicalResult importSize(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto t = RankedTensorType::get({}, ctx.b.getI64Type());
  ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(
                       t, NC::type(x).getNumElements())));
  return success();
}

LogicalResult importConstantOfShape(NC &ctx) {
  auto shape = ctx.intsInput(0, "shape");
  if (failed(shape))
    return failure();
  if (failed(checkedCount(*shape, [&] { return ctx.error(); }, "the shape")))
    return failure();
  Attribute element = FloatAttr::get(ctx.b.getF32Type(), 0.0);
  if (ctx.hasAttr("value")) {
    auto v = ctx.getTensor("value");
    if (failed(v))
      return failure();
    if (v->getNumElements() != 1)
      return ctx.error() << "value must hold one element", failure();
    element = v->getValues<Attribute>()[0];
  }
  auto t = RankedTensorType::get(*shape, cast<TypedAttr>(element).getType());
  ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(t, element)));
  return success();
}

LogicalResult importRange(NC &ctx) {
  auto start = ctx.floatsInput(0, "start");
  auto limit = ctx.floatsInput(1, "limit");
  auto delta = ctx.floatsInput(2, "delta");
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1)
    return ctx.error() << "start, limit and delta must be scalars", failure();
  double a = (*start)[0], l = (*limit)[0], d = (*delta)[0];
  if (d == 0)
    return ctx.error() << "delta is zero", failure();
  double count = std::max(std::ceil((l - a) / d), 0.0);
  // Range is materialized as a constant: keep it to a sane size.
  if (!(count <= double(1 << 24)))
    return ctx.error() << "the range has " << int64_t(std::min(count, 9e18))
                       << " elements; tcc folds Range to a constant and "
                          "allows at most 2^24",
           failure();
  // Read through constantInput, not input(): a float initializer must not
  // become a parameter here.
  Type et = ctx.constantInput(0).getElementType();
  auto t = RankedTensorType::get({int64_t(count)}, et);
  // Written as raw little-endian storage: one Attribute per element would
  // unique up to 2^24 attributes in the context (tens of seconds, gigabytes).
  if (et.isInteger(1))
    return ctx.error() << "expects a numeric type, got a bool", failure();
  size_t width = size_t(tcc::elementBytes(et));
  std::vector<char> bytes(size_t(count) * width);
  auto ft = dyn_cast<FloatType>(et);
  // Integers are computed exactly, not through double: start + i * delta
  // (wrapping, but the true value lies between start and limit).
  uint64_t intStart = 0, intDelta = 0;
  if (!ft) {
    auto s0 = ctx.intsInput(0, "start"), d0 = ctx.intsInput(2, "delta");
    if (failed(s0) || failed(d0))
      return failure();
    intStart = uint64_t((*s0)[0]);
    intDelta = uint64_t((*d0)[0]);
  }
  for (int64_t i = 0; i < int64_t(count); ++i) {
    uint64_t raw;
    if (ft) {
      APFloat f(a + double(i) * d);
      bool lost;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      raw = f.bitcastToAPInt().getZExtValue();
    } else {
      raw = intStart + uint64_t(i) * intDelta;
    }
    std::memcpy(bytes.data() + i * width, &raw, width);
  }
  ctx.setOutput(0, ctx.constant(DenseElementsAttr::getFromRawBuffer(
                       t, ArrayRef<char>(bytes))));
  return success();
}

LogicalResult importConstant(NC &ctx) {
  MLIRContext *mctx = ctx.b.getContext();
  Builder &b = ctx.b;
  DenseElementsAttr value;
  if (ctx.hasAttr("value")) {
    auto v = ctx.getTensor("value");
    if (failed(v))
      return failure();
    value = *v;
  } else if (ctx.hasAttr("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                   float(ctx.getFloat("value_float", 0)));
  } else if (ctx.hasAttr("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   ctx.getInt("value_int", 0));
  } else if (ctx.hasAttr("value_floats")) {
    SmallVector<float> f;
    for (double d : ctx.getFloats("value_floats"))
      f.push_back(float(d));
    value = DenseElementsAttr::get(
        RankedTensorType::get({int64_t(f.size())}, b.getF32Type()),
        ArrayRef<float>(f));
  } else if (ctx.hasAttr("value_ints")) {
    SmallVector<int64_t> i = ctx.getInts("value_ints");
    value = DenseElementsAttr::get(
        RankedTensorType::get({int64_t(i.size())}, b.getI64Type()),
        ArrayRef<int64_t>(i));
  } else {
    (void)mctx;
    return ctx.error() << "needs a value, value_float(s) or value_int(s) "
                          "attribute (sparse and string constants are not "
                          "supported)",
           failure();
  }
  ctx.setOutput(0, ctx.constant(value));
  return success();
}

/// trilu(x, k) = select(mask, x, 0) with a constant mask over the last two
/// dimensions.
LogicalResult importTrilu(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (NC::rank(x) < 2)
    return ctx.error() << "needs an input of rank >= 2", failure();
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    auto kv = ctx.intsInput(1, "k");
    if (failed(kv))
      return failure();
    if (kv->size() != 1)
      return ctx.error() << "k must be a scalar", failure();
    k = (*kv)[0];
  }
  bool upper = ctx.getInt("upper", 1);
  int64_t rows = NC::shape(x)[NC::rank(x) - 2], cols = NC::shape(x).back();
  if (!checkedNumElements({rows, cols}) || rows * cols > (int64_t(1) << 26))
    return ctx.error() << "the matrix is too large for a constant mask",
           failure();
  SmallVector<bool> mask;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      mask.push_back(upper ? j - i >= k : j - i <= k);
  auto mt = RankedTensorType::get({rows, cols}, ctx.b.getI1Type());
  Value m = ctx.broadcastTo(ctx.constant(DenseElementsAttr::get(mt, mask)),
                            NC::shape(x));
  ctx.setOutput(0, ctx.create<SelectOp>(m, x, ctx.splatLike(x, 0.0)));
  return success();
}

LogicalResult importCumSum(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto a = ctx.intsInput(1, "axis");
  if (failed(a))
    return failure();
  if (a->size() != 1)
    return ctx.error() << "axis must be a scalar", failure();
  auto axis = ctx.normalizeAxis((*a)[0], NC::rank(x));
  if (failed(axis))
    return failure();
  ctx.setOutput(0, ctx.create<CumSumOp>(x, *axis, ctx.getInt("exclusive", 0) != 0,
                                        ctx.getInt("reverse", 0) != 0));
  return success();
}

/// Resize (opset 10+) and Upsample (opsets 7-9): the output size comes from
/// sizes or from floor(input * scale); the op keeps the effective scales.
LogicalResult importResize(NC &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t r = NC::rank(x);
  bool upsample = ctx.node.op_type() == "Upsample";
  std::string modeName = ctx.getString("mode", "nearest");
  std::string coordName = ctx.getString(
      "coordinate_transformation_mode",
      (upsample || ctx.opset < 11) ? "asymmetric" : "half_pixel");
  std::string nearestName = ctx.getString(
      "nearest_mode", (upsample || ctx.opset < 11) ? "floor" : "round_prefer_floor");
  if (ctx.getInt("antialias", 0))
    return ctx.error() << "antialias=1 is not supported", failure();

  SmallVector<double> scales;
  SmallVector<int64_t> sizes;
  unsigned scalesInput = upsample || ctx.opset < 11 ? 1 : 2;
  if (upsample && ctx.opset < 9) {
    scales = ctx.getFloats("scales");
  } else if (ctx.hasInput(scalesInput) &&
             !(ctx.constantInput(scalesInput) &&
               ctx.constantInput(scalesInput).getNumElements() == 0)) {
    auto s = ctx.floatsInput(scalesInput, "scales");
    if (failed(s))
      return failure();
    scales = *s;
  }
  if (!upsample && ctx.opset >= 11 && ctx.hasInput(3)) {
    auto s = ctx.intsInput(3, "sizes");
    if (failed(s))
      return failure();
    sizes = *s;
  }
  SmallVector<int64_t> axes;
  if (ctx.opset >= 18 && ctx.hasAttr("axes")) {
    auto n = ctx.normalizeAxes(ctx.getInts("axes"), r);
    if (failed(n))
      return failure();
    axes = *n;
  } else {
    for (int64_t d = 0; d < r; ++d)
      axes.push_back(d);
  }
  int64_t k = axes.size();
  if (scales.empty() == sizes.empty())
    return ctx.error() << "needs exactly one of scales and sizes", failure();
  SmallVector<double> fullScales(r, 1.0);
  SmallVector<int64_t> out(NC::shape(x));
  // A size computed in double must fit tcc's shapes before it becomes an
  // int64 (the conversion of a larger double is undefined).
  auto toSize = [&](double v, int64_t d) -> FailureOr<int64_t> {
    if (!(v >= 1.0 && v <= double(kMaxElements)))
      return ctx.error() << "the output size of dimension " << d
                         << " would be " << v,
             failure();
    return int64_t(v);
  };
  if (!scales.empty()) {
    if (int64_t(scales.size()) != k)
      return ctx.error() << "scales has " << scales.size() << " entries for "
                         << k << " axes",
             failure();
    for (int64_t i = 0; i < k; ++i) {
      if (!(scales[i] > 0))
        return ctx.error() << "scales must be positive", failure();
      fullScales[axes[i]] = scales[i];
      auto size = toSize(
          std::floor(double(NC::shape(x)[axes[i]]) * scales[i]), axes[i]);
      if (failed(size))
        return failure();
      out[axes[i]] = *size;
    }
  } else {
    if (int64_t(sizes.size()) != k)
      return ctx.error() << "sizes has " << sizes.size() << " entries for "
                         << k << " axes",
             failure();
    std::string policy = ctx.getString("keep_aspect_ratio_policy", "stretch");
    double common = policy == "not_larger" ? INFINITY : 0.0;
    for (int64_t i = 0; i < k; ++i) {
      double s = double(sizes[i]) / double(NC::shape(x)[axes[i]]);
      if (policy == "not_larger") common = std::min(common, s);
      else if (policy == "not_smaller") common = std::max(common, s);
    }
    for (int64_t i = 0; i < k; ++i) {
      if (sizes[i] <= 0)
        return ctx.error() << "sizes must be positive", failure();
      int64_t in = NC::shape(x)[axes[i]];
      if (in == 0)
        return ctx.error() << "cannot resize the empty dimension " << axes[i],
               failure();
      if (policy == "stretch") {
        out[axes[i]] = sizes[i];
        fullScales[axes[i]] = double(sizes[i]) / double(in);
      } else {
        auto size = toSize(std::round(double(in) * common), axes[i]);
        if (failed(size))
          return failure();
        out[axes[i]] = *size;
        fullScales[axes[i]] = common;
      }
    }
  }
  for (int64_t d = 0; d < r; ++d)
    if (out[d] <= 0)
      return ctx.error() << "the output size of dimension " << d
                         << " would be " << out[d],
             failure();
  if (failed(checkedCount(out, [&] { return ctx.error(); }, "the output")))
    return failure();
  ResizeMode mode;
  if (modeName == "nearest") mode = ResizeMode::nearest;
  else if (modeName == "linear" || modeName == "bilinear") mode = ResizeMode::linear;
  else if (modeName == "cubic") mode = ResizeMode::cubic;
  else return ctx.error() << "unknown mode '" << modeName << "'", failure();
  std::optional<CoordinateMode> coord = symbolizeCoordinateMode(coordName);
  std::optional<NearestMode> nearest = symbolizeNearestMode(nearestName);
  if (!coord)
    return ctx.error() << "unknown coordinate_transformation_mode '"
                       << coordName << "'",
           failure();
  if (!nearest)
    return ctx.error() << "unknown nearest_mode '" << nearestName << "'",
           failure();
  DenseF64ArrayAttr roi;
  if (*coord == CoordinateMode::tf_crop_and_resize) {
    auto rv = ctx.floatsInput(1, "roi");
    if (failed(rv))
      return failure();
    if (int64_t(rv->size()) != 2 * k)
      return ctx.error() << "roi needs " << 2 * k << " values", failure();
    SmallVector<double> full(2 * r, 0.0);
    for (int64_t d = 0; d < r; ++d)
      full[r + d] = 1.0;
    for (int64_t i = 0; i < k; ++i) {
      full[axes[i]] = (*rv)[i];
      full[r + axes[i]] = (*rv)[k + i];
    }
    roi = ctx.b.getDenseF64ArrayAttr(full);
  }
  auto op = ctx.createOp<ResizeOp>(
      RankedTensorType::get(out, NC::elementType(x)), x,
      ArrayRef<double>(fullScales), mode, *coord, *nearest,
      APFloat(ctx.getFloat("cubic_coeff_a", -0.75)),
      ctx.getInt("exclude_outside", 0) != 0,
      APFloat(ctx.getFloat("extrapolation_value", 0.0)), roi);
  ctx.setOutput(0, op.getResult());
  return success();
}

} // namespace

void tcc::onnx_frontend::registerTensorHandlers(HandlerTable &t) {
  t["Reshape"] = importReshape;
  t["Flatten"] = importFlatten;
  t["Squeeze"] = importSqueeze;
  t["Unsqueeze"] = importUnsqueeze;
  t["Transpose"] = importTranspose;
  t["Concat"] = importConcat;
  t["Split"] = importSplit;
  t["SplitToSequence"] = importSplitToSequence;
  t["SequenceAt"] = importSequenceAt;
  t["SequenceLength"] = importSequenceLength;
  t["SequenceConstruct"] = importSequenceConstruct;
  t["ConcatFromSequence"] = importConcatFromSequence;
  t["Slice"] = importSlice;
  t["Gather"] = importGather;
  t["GatherElements"] = importGatherElements;
  t["ScatterElements"] = importScatterElements;
  t["Scatter"] = importScatterElements;
  t["ScatterND"] = importScatterND;
  t["GatherND"] = importGatherND;
  t["NonZero"] = importNonZero;
  t["Expand"] = importExpand;
  t["Tile"] = importTile;
  t["Pad"] = importPad;
  t["Shape"] = importShape;
  t["Size"] = importSize;
  t["ConstantOfShape"] = importConstantOfShape;
  t["Range"] = importRange;
  t["Constant"] = importConstant;
  t["Trilu"] = importTrilu;
  t["CumSum"] = importCumSum;
  t["Resize"] = importResize;
  t["Upsample"] = importResize;
}
