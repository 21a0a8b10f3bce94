//===- ImportNN.cpp - ONNX neural-network ops to the tcc dialect ----------===//
//
// Matrix products (MatMul, Gemm, Einsum), convolutions, pooling,
// normalizations, softmax, reductions, arg-extrema, dropout and losses, for
// opsets 6 through 23. Operators with a tcc counterpart map onto it after
// their attributes are resolved (auto_pad to explicit pads, legacy opset
// attributes to today's meaning); the others (Einsum, InstanceNormalization,
// GroupNormalization, ReduceL2, ...) are decomposed into tcc ops, and each
// such decision is written down beside the code that makes it.
//
// Every operand and attribute is checked before an op is built: a tcc op
// whose result type cannot be inferred would otherwise abort inside its
// generated builder, and a hostile model must get an error, never a crash.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ImportContext.h"
#include "dialects/TccNames.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace tcc;
using namespace tcc::onnx_frontend;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// A float attribute value as a person would write it (diagnostics print
/// doubles in scientific notation otherwise).
static std::string numStr(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", v);
  return s;
}

/// Window attributes (strides, pads, ...) larger than this are rejected, so
/// that output-size arithmetic on them cannot overflow int64.
static constexpr int64_t kMaxWindowValue = int64_t(1) << 31;

/// Checks that the model's opset has the operator at all.
static LogicalResult requireOpset(NodeContext &ctx, int64_t since) {
  if (ctx.opset >= since)
    return success();
  return ctx.error() << "the operator exists from opset " << since
                     << " on, but the model imports opset " << ctx.opset,
         failure();
}

static LogicalResult requireFloat(NodeContext &ctx, Value v, StringRef what) {
  if (NodeContext::isFloat(v))
    return success();
  return ctx.error() << what << " must be a floating-point tensor, got "
                     << v.getType(),
         failure();
}

static LogicalResult requireSameElementType(NodeContext &ctx, Value a,
                                            StringRef aName, Value b,
                                            StringRef bName) {
  if (NodeContext::elementType(a) == NodeContext::elementType(b))
    return success();
  return ctx.error() << aName << " (" << a.getType() << ") and " << bName
                     << " (" << b.getType()
                     << ") must have the same element type",
         failure();
}

/// A result shape must stay within tcc's element-count limit (an outer
/// product of two large operands can exceed it).
static LogicalResult checkResultShape(NodeContext &ctx,
                                      ArrayRef<int64_t> shape) {
  if (checkedNumElements(shape))
    return success();
  return ctx.error() << "the result would have shape " << formatShape(shape)
                     << ", more elements than tcc supports (2^48)",
         failure();
}

/// Dry-runs the type inference of a tcc op on the arguments that its
/// inferring builder will get, and turns a failure into an error at the node
/// that quotes the op's own message. (The generated builder would abort with
/// "Failed to infer result type(s)" instead.)
template <typename OpTy, unsigned NumResults, typename... Args>
static LogicalResult checkInferable(NodeContext &ctx, const Args &...args) {
  MLIRContext *mctx = ctx.b.getContext();
  OperationState state(ctx.loc, OpTy::getOperationName());
  SmallVector<Type, 3> placeholders(NumResults, ctx.b.getNoneType());
  OpTy::build(ctx.b, state, TypeRange(placeholders), args...);
  SmallVector<Type, 3> types;
  std::string message;
  LogicalResult inferred = failure();
  {
    ScopedDiagnosticHandler capture(mctx, [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    inferred = OpTy::inferReturnTypes(
        mctx, ctx.loc, state.operands, state.attributes.getDictionary(mctx),
        state.getRawProperties(), state.regions, types);
  }
  if (succeeded(inferred))
    return success();
  return ctx.error() << "cannot build " << OpTy::getOperationName() << ": "
                     << message,
         failure();
}

/// Builds (and folds) a single-result tcc op with type inference, or returns
/// null after an error.
template <typename OpTy, typename... Args>
static Value buildInferred(NodeContext &ctx, const Args &...args) {
  if (failed(checkInferable<OpTy, 1>(ctx, args...)))
    return {};
  return ctx.create<OpTy>(args...);
}

/// Builds a multi-result tcc op with type inference, or returns null.
template <typename OpTy, unsigned NumResults, typename... Args>
static OpTy buildInferredOp(NodeContext &ctx, const Args &...args) {
  if (failed(checkInferable<OpTy, NumResults>(ctx, args...)))
    return {};
  return ctx.createOp<OpTy>(args...);
}

static Value add(NodeContext &ctx, Value a, Value b) {
  return ctx.create<AddOp>(a, b);
}
static Value sub(NodeContext &ctx, Value a, Value b) {
  return ctx.create<SubOp>(a, b);
}
static Value mul(NodeContext &ctx, Value a, Value b) {
  return ctx.create<MulOp>(a, b);
}
static Value mulScalar(NodeContext &ctx, Value v, double s) {
  return mul(ctx, v, ctx.splatLike(v, s));
}

/// Broadcasts a 1-D per-channel tensor onto `shape` along dimension `dim`.
static Value broadcastAlong(NodeContext &ctx, Value v, ArrayRef<int64_t> shape,
                            int64_t dim) {
  auto type = RankedTensorType::get(shape, NodeContext::elementType(v));
  return ctx.create<BroadcastInDimOp>(type, v, ArrayRef<int64_t>{dim});
}

/// Whether `from` broadcasts onto `to` in one direction (numpy rules,
/// trailing dimensions aligned, `to` unchanged).
static bool broadcastsOnto(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (auto [i, d] : llvm::enumerate(from))
    if (d != 1 && d != to[offset + i])
      return false;
  return true;
}

/// Checks that `v` is a 1-D tensor of `size` elements; `what` names it.
static LogicalResult requireVector(NodeContext &ctx, Value v, int64_t size,
                                   StringRef what) {
  if (NodeContext::rank(v) == 1 && NodeContext::shape(v)[0] == size)
    return success();
  return ctx.error() << what << " must have shape [" << size << "], got "
                     << formatShape(NodeContext::shape(v)),
         failure();
}

/// Reads an integer-list attribute with one entry per spatial dimension (or
/// `count` entries), each in [min, kMaxWindowValue]; `dflt` fills it when the
/// attribute is absent.
static FailureOr<SmallVector<int64_t>> readIntList(NodeContext &ctx,
                                                   StringRef name, size_t count,
                                                   int64_t dflt, int64_t min) {
  if (!ctx.hasAttr(name))
    return SmallVector<int64_t>(count, dflt);
  SmallVector<int64_t> values = ctx.getInts(name);
  if (values.size() != count)
    return ctx.error() << "attribute '" << name << "' has " << values.size()
                       << " entries, expected " << count,
           failure();
  for (int64_t v : values)
    if (v < min || v > kMaxWindowValue)
      return ctx.error() << "attribute '" << name << "' = " << formatShape(values)
                         << " must hold values in [" << min << ", 2^31]",
             failure();
  return values;
}

/// The smallest floating-point type at least as wide as both arguments
/// (used to honour `stash_type`: statistics of f16/bf16 inputs are computed
/// in the wider stash type, never in a narrower one).
static Type widerFloat(Type a, Type b) {
  return b.getIntOrFloatBitWidth() > a.getIntOrFloatBitWidth() ? b : a;
}

/// Reads the `stash_type` attribute (default 1, FLOAT) as an MLIR type.
static FailureOr<Type> readStashType(NodeContext &ctx) {
  int64_t stash = ctx.getInt("stash_type", onnx::TensorProto::FLOAT);
  Type t = convertElementType(ctx.b.getContext(), int32_t(stash));
  if (!t || !isa<FloatType>(t))
    return ctx.error() << "stash_type " << stash
                       << " is not a floating-point ONNX data type",
           failure();
  return t;
}

//===----------------------------------------------------------------------===//
// MatMul, Gemm
//===----------------------------------------------------------------------===//

/// numpy matmul: a 1-D operand is promoted to a matrix (a row for A, a column
/// for B) and the promoted dimension is removed from the result; batch
/// dimensions broadcast, since tcc.matmul needs identical ones.
static LogicalResult importMatMul(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b)
    return failure();
  if (failed(requireSameElementType(ctx, a, "A", b, "B")))
    return failure();
  if (ctx.rank(a) == 0 || ctx.rank(b) == 0)
    return ctx.error() << "operands must have rank >= 1, got shapes "
                       << formatShape(ctx.shape(a)) << " and "
                       << formatShape(ctx.shape(b)),
           failure();
  bool vecA = ctx.rank(a) == 1, vecB = ctx.rank(b) == 1;
  if (vecA)
    a = ctx.reshape(a, {1, ctx.shape(a)[0]});
  if (vecB)
    b = ctx.reshape(b, {ctx.shape(b)[0], 1});
  ArrayRef<int64_t> sa = ctx.shape(a), sb = ctx.shape(b);
  int64_t m = sa[sa.size() - 2], k = sa.back();
  int64_t kb = sb[sb.size() - 2], n = sb.back();
  if (k != kb)
    return ctx.error() << "the contracted dimensions differ: A has shape "
                       << formatShape(ctx.shape(ctx.input(0))) << ", B has shape "
                       << formatShape(ctx.shape(ctx.input(1))),
           failure();
  auto batch = ctx.broadcastShape({sa.drop_back(2), sb.drop_back(2)});
  if (failed(batch))
    return failure();
  SmallVector<int64_t> shapeA(*batch), shapeB(*batch), result(*batch);
  shapeA.append({m, k});
  shapeB.append({k, n});
  result.append({m, n});
  // Broadcasting can make an operand (not only the result) too large.
  for (ArrayRef<int64_t> shape :
       {ArrayRef<int64_t>(shapeA), ArrayRef<int64_t>(shapeB),
        ArrayRef<int64_t>(result)})
    if (failed(checkResultShape(ctx, shape)))
      return failure();
  Value y = buildInferred<MatmulOp>(ctx, ctx.broadcastTo(a, shapeA),
                                    ctx.broadcastTo(b, shapeB));
  if (!y)
    return failure();
  SmallVector<int64_t> out(*batch);
  if (!vecA)
    out.push_back(m);
  if (!vecB)
    out.push_back(n);
  ctx.setOutput(0, ctx.reshape(y, out));
  return success();
}

/// Y = alpha * A' B' + beta * C. C is optional from opset 11; before opset 7
/// it broadcasts only with the legacy `broadcast=1` attribute, from 7 on by
/// unidirectional numpy rules. beta = 0 drops C entirely (as PyTorch's addmm
/// does), so that infinities in an unused C do not turn into NaN.
static LogicalResult importGemm(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b)
    return failure();
  if (ctx.rank(a) != 2 || ctx.rank(b) != 2)
    return ctx.error() << "A and B must be matrices, got shapes "
                       << formatShape(ctx.shape(a)) << " and "
                       << formatShape(ctx.shape(b)),
           failure();
  if (failed(requireSameElementType(ctx, a, "A", b, "B")))
    return failure();
  bool transA = ctx.getInt("transA", 0) != 0;
  bool transB = ctx.getInt("transB", 0) != 0;
  if (transA)
    a = ctx.transpose(a, {1, 0});
  if (transB)
    b = ctx.transpose(b, {1, 0});
  int64_t m = ctx.shape(a)[0], k = ctx.shape(a)[1], n = ctx.shape(b)[1];
  if (ctx.shape(b)[0] != k)
    return ctx.error() << "the contracted dimensions differ: A"
                       << (transA ? "^T" : "") << " is "
                       << formatShape(ctx.shape(a)) << " and B"
                       << (transB ? "^T" : "") << " is "
                       << formatShape(ctx.shape(b)),
           failure();
  if (failed(checkResultShape(ctx, {m, n})))
    return failure();
  double alpha = ctx.getFloat("alpha", 1.0), beta = ctx.getFloat("beta", 1.0);
  bool isFloat = ctx.isFloat(a);
  for (auto [name, value] : {std::pair<StringRef, double>{"alpha", alpha},
                             std::pair<StringRef, double>{"beta", beta}})
    if (!isFloat && value != std::trunc(value))
      return ctx.error() << name << " = " << numStr(value)
                         << " is not an integer, but the operands are "
                         << ctx.elementType(a),
             failure();

  Value y = buildInferred<MatmulOp>(ctx, a, b);
  if (!y)
    return failure();
  if (alpha != 1.0)
    y = mulScalar(ctx, y, alpha);

  if (!ctx.hasInput(2)) {
    if (ctx.opset < 11)
      return ctx.error() << "input C is required before opset 11", failure();
  } else if (beta != 0.0) {
    Value c = ctx.input(2);
    if (!c)
      return failure();
    if (failed(requireSameElementType(ctx, c, "C", a, "A")))
      return failure();
    SmallVector<int64_t> target = {m, n};
    if (ctx.opset < 7 && ctx.getInt("broadcast", 0) == 0) {
      if (ctx.shape(c) != ArrayRef<int64_t>(target))
        return ctx.error() << "C has shape " << formatShape(ctx.shape(c))
                           << " but the result is " << formatShape(target)
                           << "; before opset 7, C broadcasts only with "
                              "broadcast=1",
               failure();
    } else if (!broadcastsOnto(ctx.shape(c), target)) {
      return ctx.error() << "C of shape " << formatShape(ctx.shape(c))
                         << " does not broadcast to the result shape "
                         << formatShape(target),
             failure();
    }
    c = ctx.broadcastTo(c, target);
    if (beta != 1.0)
      c = mulScalar(ctx, c, beta);
    y = add(ctx, y, c);
  }
  ctx.setOutput(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//
//
// An einsum is evaluated as a left fold of pairwise contractions, each one
// tcc.matmul between transposed and reshaped operands:
//   - labels of one operand that no later operand and not the output needs
//     are summed out first (tcc.reduce_sum);
//   - labels shared by both operands and still needed later are batch
//     dimensions, shared labels needed nowhere else are contracted, the rest
//     are free (M for the left operand, N for the right one);
//   - a pair without contracted labels is a broadcast multiply instead.
// The dimensions covered by `...` get labels of their own, right-aligned, and
// broadcast numpy-style across operands before anything else happens.
// Repeated labels within one operand (diagonals, traces) are not supported.

namespace {
/// An operand of an einsum with one label per dimension. Letters are their
/// character codes; ellipsis dimension i (right-aligned over all operands)
/// is kEllipsisLabel + i.
struct EinsumOperand {
  Value value;
  SmallVector<int> labels;
};
} // namespace

static constexpr int kEllipsisLabel = 1000;

static std::string labelStr(int label) {
  if (label >= kEllipsisLabel)
    return "... dimension " + std::to_string(label - kEllipsisLabel);
  return std::string("'") + char(label) + "'";
}

/// Parses one term: letters, and at most one `...` (returned as -1).
static FailureOr<SmallVector<int>> parseEinsumTerm(NodeContext &ctx,
                                                   StringRef term) {
  SmallVector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size();) {
    char c = term[i];
    if (llvm::isAlpha(c)) {
      labels.push_back(c);
      ++i;
    } else if (term.substr(i).starts_with("...")) {
      if (ellipsis)
        return ctx.error() << "term '" << term << "' has more than one '...'",
               failure();
      ellipsis = true;
      labels.push_back(-1);
      i += 3;
    } else {
      return ctx.error() << "unexpected character '" << c << "' in term '"
                         << term << "' of the equation",
             failure();
    }
  }
  return labels;
}

static Value einsumTranspose(NodeContext &ctx, const EinsumOperand &op,
                             ArrayRef<int> order) {
  SmallVector<int64_t> perm;
  for (int l : order)
    perm.push_back(llvm::find(op.labels, l) - op.labels.begin());
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return op.value;
  return ctx.transpose(op.value, perm);
}

/// Sums out the labels of `op` for which `drop` holds.
static void einsumSumOut(NodeContext &ctx, EinsumOperand &op,
                         llvm::function_ref<bool(int)> drop) {
  SmallVector<int64_t> axes;
  SmallVector<int> kept;
  for (auto [i, l] : llvm::enumerate(op.labels)) {
    if (drop(l))
      axes.push_back(i);
    else
      kept.push_back(l);
  }
  if (axes.empty())
    return;
  op.value = ctx.reduceSum(op.value, axes, /*keepDims=*/false);
  op.labels = kept;
}

static FailureOr<EinsumOperand>
einsumContract(NodeContext &ctx, EinsumOperand a, EinsumOperand b,
               llvm::function_ref<bool(int)> neededLater,
               const llvm::DenseMap<int, int64_t> &sizes) {
  einsumSumOut(ctx, a, [&](int l) {
    return !llvm::is_contained(b.labels, l) && !neededLater(l);
  });
  einsumSumOut(ctx, b, [&](int l) {
    return !llvm::is_contained(a.labels, l) && !neededLater(l);
  });
  SmallVector<int> batch, contracted, freeA, freeB;
  for (int l : a.labels) {
    if (!llvm::is_contained(b.labels, l))
      freeA.push_back(l);
    else if (neededLater(l))
      batch.push_back(l);
    else
      contracted.push_back(l);
  }
  for (int l : b.labels)
    if (!llvm::is_contained(a.labels, l))
      freeB.push_back(l);

  auto sizesOf = [&](ArrayRef<int> labels) {
    SmallVector<int64_t> out;
    for (int l : labels)
      out.push_back(sizes.lookup(l));
    return out;
  };
  auto product = [&](ArrayRef<int> labels) {
    int64_t p = 1;
    for (int l : labels)
      p *= sizes.lookup(l);
    return p;
  };
  SmallVector<int> resultLabels(batch);
  resultLabels.append(freeA);
  resultLabels.append(freeB);
  SmallVector<int64_t> resultShape = sizesOf(resultLabels);
  if (failed(checkResultShape(ctx, resultShape)))
    return failure();

  SmallVector<int> orderA(batch), orderB(batch);
  orderA.append(freeA);
  orderB.append(freeB);
  EinsumOperand result{{}, resultLabels};
  if (contracted.empty()) {
    // An outer product over the free labels, elementwise over the batch
    // labels: a broadcast multiply fuses better than a matmul with K = 1.
    SmallVector<int64_t> shapeA = sizesOf(orderA), shapeB = sizesOf(batch);
    shapeA.append(freeB.size(), 1);
    shapeB.append(freeA.size(), 1);
    llvm::append_range(shapeB, sizesOf(freeB));
    Value va = ctx.reshape(einsumTranspose(ctx, a, orderA), shapeA);
    Value vb = ctx.reshape(einsumTranspose(ctx, b, orderB), shapeB);
    Value wideA = ctx.broadcastTo(va, resultShape);
    result.value = mul(ctx, wideA, ctx.broadcastTo(vb, resultShape));
    return result;
  }
  orderA.append(contracted);
  SmallVector<int> orderBFull(batch);
  orderBFull.append(contracted);
  orderBFull.append(freeB);
  int64_t m = product(freeA), n = product(freeB), k = product(contracted);
  SmallVector<int64_t> shapeA, shapeB;
  if (!batch.empty()) {
    shapeA.push_back(product(batch));
    shapeB.push_back(product(batch));
  }
  shapeA.append({m, k});
  shapeB.append({k, n});
  Value va = ctx.reshape(einsumTranspose(ctx, a, orderA), shapeA);
  Value vb = ctx.reshape(einsumTranspose(ctx, b, orderBFull), shapeB);
  Value y = buildInferred<MatmulOp>(ctx, va, vb);
  if (!y)
    return failure();
  result.value = ctx.reshape(y, resultShape);
  return result;
}

namespace {
/// An Einsum node's operands: each input with its term's labels (-1 for
/// the ellipsis) and the rank its ellipsis stands for.
struct EinsumTerms {
  SmallVector<EinsumOperand> operands;
  SmallVector<SmallVector<int>> parsed;
  SmallVector<int64_t> ellipsisRanks;
  int64_t maxEllipsis = 0;
};
} // namespace

/// Parses TERMS (one per input) and sizes each ellipsis.
static FailureOr<EinsumTerms> parseEinsumOperands(NodeContext &ctx, ArrayRef<StringRef> terms) {
  EinsumTerms e;
  for (auto [i, term] : llvm::enumerate(terms)) {
    Value v = ctx.input(i);
    if (!v)
      return failure();
    if (i > 0 &&
        failed(requireSameElementType(ctx, v, "every input", e.operands[0].value,
                                      "the first input")))
      return failure();
    auto labels = parseEinsumTerm(ctx, term);
    if (failed(labels))
      return failure();
    bool hasEllipsis = llvm::is_contained(*labels, -1);
    int64_t letters = int64_t(labels->size()) - (hasEllipsis ? 1 : 0);
    int64_t ell = ctx.rank(v) - letters;
    if (ell < 0 || (!hasEllipsis && ell != 0))
      return ctx.error() << "term '" << term << "' has " << letters
                         << " labels, but input " << i << " has shape "
                         << formatShape(ctx.shape(v)),
             failure();
    e.maxEllipsis = std::max(e.maxEllipsis, ell);
    e.ellipsisRanks.push_back(ell);
    e.parsed.push_back(*labels);
    e.operands.push_back({v, {}});
  }
  return e;
}

/// Expands each operand's ellipsis into labels, sizes every label (SIZES;
/// OCCURRENCES counts the letters' uses), rejects diagonals, and broadcasts
/// each operand's ellipsis dimensions as numpy does.
static LogicalResult sizeEinsumLabels(NodeContext &ctx, ArrayRef<StringRef> terms,
                                      EinsumTerms &e, llvm::DenseMap<int, int64_t> &sizes,
                                      llvm::DenseMap<int, int> &occurrences) {
  for (auto [i, op] : llvm::enumerate(e.operands)) {
    for (int l : e.parsed[i]) {
      if (l != -1) {
        op.labels.push_back(l);
        continue;
      }
      for (int64_t j = 0; j < e.ellipsisRanks[i]; ++j)
        op.labels.push_back(kEllipsisLabel + int(e.maxEllipsis) -
                            int(e.ellipsisRanks[i]) + int(j));
    }
    for (auto [d, l] : llvm::enumerate(op.labels)) {
      if (llvm::count(op.labels, l) > 1)
        return ctx.error() << "label " << labelStr(l)
                           << " repeats within term '" << terms[i]
                           << "'; diagonals and traces are not supported",
               failure();
      int64_t size = ctx.shape(op.value)[d];
      auto [it, inserted] = sizes.try_emplace(l, size);
      if (!inserted && it->second != size) {
        // Ellipsis dimensions broadcast like numpy; letters must agree.
        bool broadcastable =
            l >= kEllipsisLabel && (size == 1 || it->second == 1);
        if (!broadcastable)
          return ctx.error()
                     << "label " << labelStr(l) << " has size " << it->second
                     << " in one input and " << size << " in input " << i,
                 failure();
        it->second = std::max(it->second, size);
      }
      if (l < kEllipsisLabel)
        ++occurrences[l];
    }
  }
  // numpy broadcasts every operand's ellipsis dimensions first.
  for (EinsumOperand &op : e.operands) {
    SmallVector<int64_t> target;
    for (int l : op.labels)
      target.push_back(sizes.lookup(l));
    if (ArrayRef<int64_t>(target) != ctx.shape(op.value)) {
      if (failed(checkResultShape(ctx, target)))
        return failure();
      auto type = RankedTensorType::get(target, ctx.elementType(op.value));
      op.value = ctx.create<BroadcastInDimOp>(
          type, op.value,
          llvm::to_vector(llvm::seq<int64_t>(0, op.labels.size())));
    }
  }
  return success();
}

/// The output labels: RHS's when the equation has one (EXPLICIT), else the
/// ellipsis followed by the letters that occur exactly once, in
/// alphabetical (ASCII) order.
static FailureOr<SmallVector<int>>
einsumOutputLabels(NodeContext &ctx, StringRef rhs, bool explicitOutput, int64_t maxEllipsis,
                   const llvm::DenseMap<int, int64_t> &sizes,
                   const llvm::DenseMap<int, int> &occurrences) {
  SmallVector<int> output;
  if (!explicitOutput) {
    for (int64_t j = 0; j < maxEllipsis; ++j)
      output.push_back(kEllipsisLabel + int(j));
    SmallVector<int> once;
    for (auto [l, count] : occurrences)
      if (count == 1)
        once.push_back(l);
    llvm::sort(once);
    output.append(once);
    return output;
  }
  auto labels = parseEinsumTerm(ctx, rhs);
  if (failed(labels))
    return failure();
  for (int l : *labels) {
    if (l == -1) {
      for (int64_t j = 0; j < maxEllipsis; ++j)
        output.push_back(kEllipsisLabel + int(j));
      continue;
    }
    if (!sizes.count(l))
      return ctx.error() << "output label " << labelStr(l)
                         << " appears in no input term",
             failure();
    if (llvm::is_contained(output, l))
      return ctx.error() << "output label " << labelStr(l) << " repeats",
             failure();
    output.push_back(l);
  }
  return output;
}

static LogicalResult importEinsum(NodeContext &ctx) {
  if (failed(requireOpset(ctx, 12)))
    return failure();
  std::string equation = ctx.getString("equation", "");
  llvm::erase_if(equation, [](char c) { return llvm::isSpace(c); });
  if (equation.empty())
    return ctx.error() << "the 'equation' attribute is required", failure();
  StringRef eq(equation);
  auto [lhs, rhs] = eq.split("->");
  bool explicitOutput = lhs.size() != eq.size();
  if (rhs.contains("->"))
    return ctx.error() << "equation '" << eq << "' has more than one '->'",
           failure();
  SmallVector<StringRef> terms;
  lhs.split(terms, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  if (terms.size() != ctx.numInputs())
    return ctx.error() << "equation '" << eq << "' has " << terms.size()
                       << " operand terms, but the node has " << ctx.numInputs()
                       << " inputs",
           failure();

  FailureOr<EinsumTerms> parsed = parseEinsumOperands(ctx, terms);
  if (failed(parsed))
    return failure();
  llvm::DenseMap<int, int64_t> sizes;
  llvm::DenseMap<int, int> occurrences;
  if (failed(sizeEinsumLabels(ctx, terms, *parsed, sizes, occurrences)))
    return failure();
  FailureOr<SmallVector<int>> output =
      einsumOutputLabels(ctx, rhs, explicitOutput, parsed->maxEllipsis, sizes, occurrences);
  if (failed(output))
    return failure();

  // Left fold; a label is needed later if a later operand or the output has
  // it.
  ArrayRef<EinsumOperand> operands = parsed->operands;
  EinsumOperand current = operands[0];
  for (size_t i = 1; i < operands.size(); ++i) {
    auto neededLater = [&](int l) {
      if (llvm::is_contained(*output, l))
        return true;
      for (size_t j = i + 1; j < operands.size(); ++j)
        if (llvm::is_contained(operands[j].labels, l))
          return true;
      return false;
    };
    auto next = einsumContract(ctx, current, operands[i], neededLater, sizes);
    if (failed(next))
      return failure();
    current = *next;
  }
  einsumSumOut(ctx, current,
               [&](int l) { return !llvm::is_contained(*output, l); });
  ctx.setOutput(0, einsumTranspose(ctx, current, *output));
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling windows
//===----------------------------------------------------------------------===//

namespace {
/// A sliding window with explicit padding, as the tcc ops take it.
struct Window {
  SmallVector<int64_t> strides, dilations, padLow, padHigh;
  /// SAME_* or VALID: the pads were derived and ceil_mode does not apply.
  bool autoPad = false;
};
} // namespace

/// Reads strides, dilations, pads and auto_pad for a window of `kernel` over
/// the spatial dimensions `in` (Conv, MaxPool, AveragePool). SAME_UPPER and
/// SAME_LOWER give ceil(in / stride) outputs with the total padding split
/// evenly, the odd element at the end (UPPER) or at the start (LOWER); an
/// explicit `pads` attribute is ignored then, as ONNX Runtime does.
/// `dilationsSince` is the first opset whose operator has dilations.
static FailureOr<Window> readWindow(NodeContext &ctx, ArrayRef<int64_t> in,
                                    ArrayRef<int64_t> kernel,
                                    int64_t dilationsSince) {
  size_t k = in.size();
  Window w;
  auto strides = readIntList(ctx, "strides", k, 1, 1);
  auto dilations = readIntList(ctx, "dilations", k, 1, 1);
  if (failed(strides) || failed(dilations))
    return failure();
  w.strides = *strides;
  w.dilations = *dilations;
  if (ctx.opset < dilationsSince &&
      llvm::any_of(w.dilations, [](int64_t d) { return d != 1; }))
    return ctx.error() << "dilations exist from opset " << dilationsSince
                       << " on, but the model imports opset " << ctx.opset,
           failure();
  for (int64_t kd : kernel)
    if (kd < 1 || kd > kMaxWindowValue)
      return ctx.error() << "kernel " << formatShape(kernel)
                         << " must have sizes in [1, 2^31]",
             failure();

  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET" || autoPad.empty()) {
    auto pads = readIntList(ctx, "pads", 2 * k, 0, 0);
    if (failed(pads))
      return failure();
    w.padLow.assign(pads->begin(), pads->begin() + k);
    w.padHigh.assign(pads->begin() + k, pads->end());
    return w;
  }
  w.autoPad = true;
  if (autoPad == "VALID") {
    w.padLow.assign(k, 0);
    w.padHigh.assign(k, 0);
    return w;
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return ctx.error() << "auto_pad '" << autoPad
                       << "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, "
                          "VALID",
           failure();
  for (size_t i = 0; i < k; ++i) {
    int64_t out = llvm::divideCeil(in[i], w.strides[i]);
    int64_t effective = w.dilations[i] * (kernel[i] - 1) + 1;
    int64_t total =
        std::max<int64_t>(0, (out - 1) * w.strides[i] + effective - in[i]);
    int64_t low = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    w.padLow.push_back(low);
    w.padHigh.push_back(total - low);
  }
  return w;
}

/// Checks that a kernel fits every spatial dimension.
static LogicalResult checkWindowFits(NodeContext &ctx, ArrayRef<int64_t> in,
                                     ArrayRef<int64_t> kernel, const Window &w,
                                     bool ceilMode) {
  for (size_t i = 0; i < in.size(); ++i)
    if (windowOutputSize(in[i], kernel[i], w.strides[i], w.dilations[i],
                         w.padLow[i], w.padHigh[i], ceilMode) < 1)
      return ctx.error() << "the window (kernel " << kernel[i] << ", dilation "
                         << w.dilations[i]
                         << ") does not fit spatial dimension " << i
                         << " of size " << in[i] << " padded by " << w.padLow[i]
                         << "+" << w.padHigh[i],
             failure();
  return success();
}

/// The kernel is the filter's spatial shape; a `kernel_shape` attribute, when
/// present, must agree with it.
static FailureOr<SmallVector<int64_t>> filterKernel(NodeContext &ctx, Value w) {
  SmallVector<int64_t> kernel(ctx.shape(w).drop_front(2));
  if (ctx.hasAttr("kernel_shape") && ctx.getInts("kernel_shape") != kernel)
    return ctx.error() << "kernel_shape "
                       << formatShape(ctx.getInts("kernel_shape"))
                       << " disagrees with the filter's spatial shape "
                       << formatShape(kernel),
           failure();
  return kernel;
}

/// Adds the optional bias input `index` ([M]) along the channel dimension.
static FailureOr<Value> addChannelBias(NodeContext &ctx, Value y,
                                       unsigned index) {
  if (!ctx.hasInput(index))
    return y;
  Value bias = ctx.input(index);
  if (!bias)
    return failure();
  if (failed(requireVector(ctx, bias, ctx.shape(y)[1], "bias B")) ||
      failed(requireSameElementType(ctx, bias, "bias B", y, "the input")))
    return failure();
  return add(ctx, y, broadcastAlong(ctx, bias, ctx.shape(y), 1));
}

/// Checks X [N, C, D...] and W [.., .., K...] of a convolution.
static LogicalResult checkConvOperands(NodeContext &ctx, Value x, Value w) {
  if (failed(requireFloat(ctx, x, "input X")) ||
      failed(requireSameElementType(ctx, x, "X", w, "W")))
    return failure();
  if (ctx.rank(x) < 3 || ctx.rank(w) != ctx.rank(x))
    return ctx.error() << "X " << formatShape(ctx.shape(x)) << " and W "
                       << formatShape(ctx.shape(w))
                       << " need one rank >= 3 ([N, C, spatial...])",
           failure();
  return success();
}

static LogicalResult importConv(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1);
  if (!x || !w || failed(checkConvOperands(ctx, x, w)))
    return failure();
  ArrayRef<int64_t> xs = ctx.shape(x), ws = ctx.shape(w);
  auto kernel = filterKernel(ctx, w);
  if (failed(kernel))
    return failure();
  int64_t group = ctx.getInt("group", 1);
  if (group < 1 || xs[1] % group || ws[1] * group != xs[1] || ws[0] % group)
    return ctx.error() << "X has " << xs[1] << " channels and W has shape "
                       << formatShape(ws) << ", which do not match with group "
                       << group << " (W must be [M, C/group, ...] with M "
                       << "divisible by group)",
           failure();
  auto window =
      readWindow(ctx, xs.drop_front(2), *kernel, /*dilationsSince=*/1);
  if (failed(window) ||
      failed(checkWindowFits(ctx, xs.drop_front(2), *kernel, *window, false)))
    return failure();
  SmallVector<int64_t> result = {xs[0], ws[0]};
  for (size_t i = 0; i < kernel->size(); ++i)
    result.push_back(windowOutputSize(
        xs[i + 2], (*kernel)[i], window->strides[i], window->dilations[i],
        window->padLow[i], window->padHigh[i], false));
  if (failed(checkResultShape(ctx, result)))
    return failure();
  Value y = buildInferred<ConvOp>(
      ctx, x, w, ArrayRef<int64_t>(window->strides),
      ArrayRef<int64_t>(window->dilations), ArrayRef<int64_t>(window->padLow),
      ArrayRef<int64_t>(window->padHigh), uint64_t(group));
  if (!y)
    return failure();
  auto biased = addChannelBias(ctx, y, 2);
  if (failed(biased))
    return failure();
  ctx.setOutput(0, *biased);
  return success();
}

/// ConvTranspose: the full output of spatial dimension i has
///   full = stride * (in - 1) + output_padding + dilation * (K - 1) + 1
/// elements, and pads crop it. An `output_shape` attribute (or SAME_*, which
/// asks for in * stride) sets the total crop `full - output_shape`, split with
/// the odd element at the start, except under SAME_UPPER where it goes at the
/// end (the rule of ConvTranspose-11 and later, which tcc applies to every
/// opset). When the requested output is larger than the full result (a
/// negative total crop), the pads are 0 and the difference becomes extra
/// output_padding, i.e. zeros appended at the end: ONNX Runtime's rule, and
/// the ONNX reference's for the common case of a difference of 1.
static LogicalResult importConvTranspose(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1);
  if (!x || !w || failed(checkConvOperands(ctx, x, w)))
    return failure();
  ArrayRef<int64_t> xs = ctx.shape(x), ws = ctx.shape(w);
  size_t k = xs.size() - 2;
  auto kernel = filterKernel(ctx, w);
  if (failed(kernel))
    return failure();
  int64_t group = ctx.getInt("group", 1);
  if (group < 1 || xs[1] != ws[0] || xs[1] % group)
    return ctx.error() << "X has " << xs[1] << " channels and W has shape "
                       << formatShape(ws) << ", which do not match with group "
                       << group << " (W must be [C, M/group, ...])",
           failure();
  auto strides = readIntList(ctx, "strides", k, 1, 1);
  auto dilations = readIntList(ctx, "dilations", k, 1, 1);
  auto outputPadding = readIntList(ctx, "output_padding", k, 0, 0);
  if (failed(strides) || failed(dilations) || failed(outputPadding))
    return failure();
  for (int64_t kd : *kernel)
    if (kd < 1 || kd > kMaxWindowValue)
      return ctx.error() << "kernel " << formatShape(*kernel)
                         << " must have sizes in [1, 2^31]",
             failure();

  // The uncropped output size of each spatial dimension.
  SmallVector<int64_t> full;
  for (size_t i = 0; i < k; ++i) {
    auto scaled = llvm::checkedMul<int64_t>((*strides)[i], xs[i + 2] - 1);
    int64_t extent = (*dilations)[i] * ((*kernel)[i] - 1) + 1;
    if (!scaled || *scaled > kMaxElements)
      return ctx.error() << "spatial dimension " << i
                         << " of the output is too large",
             failure();
    full.push_back(*scaled + (*outputPadding)[i] + extent);
  }

  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  if (autoPad.empty())
    autoPad = "NOTSET";
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return ctx.error() << "auto_pad '" << autoPad
                       << "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, "
                          "VALID",
           failure();
  SmallVector<int64_t> padLow(k, 0), padHigh(k, 0);
  std::optional<SmallVector<int64_t>> target;
  if (ctx.hasAttr("output_shape")) {
    // Some exporters write the whole shape [N, M, spatial...].
    SmallVector<int64_t> os = ctx.getInts("output_shape");
    if (os.size() == k + 2)
      os.erase(os.begin(), os.begin() + 2);
    if (os.size() != k)
      return ctx.error() << "output_shape "
                         << formatShape(ctx.getInts("output_shape"))
                         << " needs one entry per spatial dimension (" << k
                         << ")",
             failure();
    target = os;
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    target.emplace();
    for (size_t i = 0; i < k; ++i)
      target->push_back(
          llvm::checkedMul<int64_t>(xs[i + 2], (*strides)[i]).value_or(-1));
  } else if (autoPad == "NOTSET") {
    auto pads = readIntList(ctx, "pads", 2 * k, 0, 0);
    if (failed(pads))
      return failure();
    padLow.assign(pads->begin(), pads->begin() + k);
    padHigh.assign(pads->begin() + k, pads->end());
  }
  if (target) {
    for (size_t i = 0; i < k; ++i) {
      int64_t t = (*target)[i];
      if (t < 1 || t > kMaxElements)
        return ctx.error() << "output spatial size " << t << " is out of range",
               failure();
      int64_t total = full[i] - t;
      if (total < 0) {
        (*outputPadding)[i] -= total;
        full[i] -= total;
        continue;
      }
      padLow[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      padHigh[i] = total - padLow[i];
    }
  }

  SmallVector<int64_t> result = {xs[0], ws[1] * group};
  for (size_t i = 0; i < k; ++i) {
    int64_t o = full[i] - padLow[i] - padHigh[i];
    if (o < 1)
      return ctx.error() << "pads " << padLow[i] << "+" << padHigh[i]
                         << " crop all of spatial dimension " << i
                         << " (full size " << full[i] << ")",
             failure();
    result.push_back(o);
  }
  if (failed(checkResultShape(ctx, result)))
    return failure();
  Value y = buildInferred<ConvTransposeOp>(
      ctx, x, w, ArrayRef<int64_t>(*strides), ArrayRef<int64_t>(*dilations),
      ArrayRef<int64_t>(padLow), ArrayRef<int64_t>(padHigh),
      ArrayRef<int64_t>(*outputPadding), uint64_t(group));
  if (!y)
    return failure();
  auto biased = addChannelBias(ctx, y, 2);
  if (failed(biased))
    return failure();
  ctx.setOutput(0, *biased);
  return success();
}

/// MaxPool and AveragePool. ceil_mode exists from opset 10 (both), dilations
/// from 10 (MaxPool) and 19 (AveragePool), count_include_pad from 7. With
/// ceil_mode, a window that would start in the high padding is dropped (the
/// rule ONNX states since opset 19 and PyTorch always applied); tcc applies it
/// at every opset. Under auto_pad the output size is fixed by the derived
/// pads, so ceil_mode does not apply. MaxPool's storage_order only concerns
/// the Indices output, which tcc does not produce.
static LogicalResult importPool(NodeContext &ctx, bool isMax) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (isMax && ctx.hasOutput(1))
    return ctx.error() << "the Indices output is not supported: tcc.max_pool "
                          "does not compute argmax indices",
           failure();
  if (!isMax && failed(requireFloat(ctx, x, "input X")))
    return failure();
  if (ctx.rank(x) < 3)
    return ctx.error() << "input X must be [N, C, spatial...], got shape "
                       << formatShape(ctx.shape(x)),
           failure();
  ArrayRef<int64_t> in = ctx.shape(x).drop_front(2);
  if (!ctx.hasAttr("kernel_shape"))
    return ctx.error() << "the 'kernel_shape' attribute is required", failure();
  SmallVector<int64_t> kernel = ctx.getInts("kernel_shape");
  if (kernel.size() != in.size())
    return ctx.error() << "kernel_shape " << formatShape(kernel)
                       << " needs one entry per spatial dimension of "
                       << formatShape(ctx.shape(x)),
           failure();
  auto window = readWindow(ctx, in, kernel, isMax ? 10 : 19);
  if (failed(window))
    return failure();
  int64_t ceilMode = ctx.getInt("ceil_mode", 0);
  if (ceilMode && ctx.opset < 10)
    return ctx.error() << "ceil_mode exists from opset 10 on, but the model "
                          "imports opset "
                       << ctx.opset,
           failure();
  bool ceil = ceilMode != 0 && !window->autoPad;
  // tcc (like ONNX Runtime and PyTorch) needs each pad to be smaller than
  // the dilated window, so that every window sees some input.
  for (size_t i = 0; i < in.size(); ++i)
    if (window->padLow[i] >= kernel[i] * window->dilations[i] ||
        window->padHigh[i] >= kernel[i] * window->dilations[i])
      return ctx.error() << "pads " << window->padLow[i] << "+"
                         << window->padHigh[i] << " of spatial dimension " << i
                         << " are not smaller than the window "
                         << kernel[i] * window->dilations[i],
             failure();
  if (failed(checkWindowFits(ctx, in, kernel, *window, ceil)))
    return failure();
  ArrayRef<int64_t> strides = window->strides, dilations = window->dilations,
                    low = window->padLow, high = window->padHigh;
  Value y;
  if (isMax) {
    y = buildInferred<MaxPoolOp>(ctx, x, ArrayRef<int64_t>(kernel), strides,
                                 dilations, low, high, ceil);
  } else {
    int64_t countIncludePad = ctx.getInt("count_include_pad", 0);
    if (countIncludePad && ctx.opset < 7)
      return ctx.error() << "count_include_pad exists from opset 7 on, but "
                            "the model imports opset "
                         << ctx.opset,
             failure();
    y = buildInferred<AvgPoolOp>(ctx, x, ArrayRef<int64_t>(kernel), strides,
                                 dilations, low, high, ceil,
                                 countIncludePad != 0);
  }
  if (!y)
    return failure();
  ctx.setOutput(0, y);
  return success();
}

static LogicalResult importMaxPool(NodeContext &ctx) {
  return importPool(ctx, /*isMax=*/true);
}
static LogicalResult importAveragePool(NodeContext &ctx) {
  return importPool(ctx, /*isMax=*/false);
}

/// Global pooling is a reduction over the spatial dimensions that keeps them
/// as size 1.
template <typename ReduceOpTy>
static LogicalResult importGlobalPool(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (ctx.rank(x) < 3)
    return ctx.error() << "input X must be [N, C, spatial...], got shape "
                       << formatShape(ctx.shape(x)),
           failure();
  if (std::is_same_v<ReduceOpTy, ReduceMeanOp> &&
      failed(requireFloat(ctx, x, "input X")))
    return failure();
  SmallVector<int64_t> axes =
      llvm::to_vector(llvm::seq<int64_t>(2, ctx.rank(x)));
  ctx.setOutput(0, ctx.create<ReduceOpTy>(x, ArrayRef<int64_t>(axes), true));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// BatchNormalization. Which statistics normalize:
///   - opset 14+: the batch's when training_mode=1, else the given ones;
///   - opset 7..13: the batch's when any output beyond Y is requested (the
///     spec's "training mode" output case), else the given ones;
///   - opset 6: as 7..13, except that is_test=1 always means the given ones.
/// In training mode the running statistics are updated per the spec,
///   running = input_running * momentum + batch * (1 - momentum),
/// with the population (biased) batch variance; before opset 14 the
/// saved_mean / saved_var outputs are the batch mean and variance (as in the
/// ONNX reference implementation). In inference mode the running-statistics
/// outputs, if requested anyway, pass the inputs through.
/// Parameters of another float type than X (allowed from opset 15) are cast
/// to X's type for the computation and the updated statistics back to theirs.
static LogicalResult importBatchNorm(NodeContext &ctx) {
  SmallVector<Value, 5> in;
  for (unsigned i = 0; i < 5; ++i) {
    in.push_back(ctx.input(i));
    if (!in.back())
      return failure();
  }
  Value x = in[0];
  if (failed(requireFloat(ctx, x, "input X")))
    return failure();
  if (ctx.rank(x) < 2)
    return ctx.error() << "input X must be [N, C, ...], got shape "
                       << formatShape(ctx.shape(x)),
           failure();
  int64_t channels = ctx.shape(x)[1];
  static const char *const names[] = {"X", "scale", "B", "mean", "var"};

  // spatial=0 (opsets 6 and 7) normalizes every activation on its own, with
  // parameters shaped like X without N. That is the per-channel computation
  // only when X has no spatial extent; then [C, 1, ...] parameters reshape
  // to [C].
  if (ctx.opset < 9 && ctx.getInt("spatial", 1) == 0) {
    if (llvm::any_of(ctx.shape(x).drop_front(2),
                     [](int64_t d) { return d != 1; }))
      return ctx.error() << "spatial=0 (per-activation statistics) is not "
                            "supported for X of shape "
                         << formatShape(ctx.shape(x))
                         << "; it equals spatial batch normalization only "
                            "when every dimension after C is 1",
             failure();
    for (unsigned i = 1; i < 5; ++i)
      if (checkedNumElements(ctx.shape(in[i])) == std::optional(channels))
        in[i] = ctx.reshape(in[i], {channels});
  }
  for (unsigned i = 1; i < 5; ++i)
    if (failed(requireFloat(ctx, in[i], names[i])) ||
        failed(requireVector(ctx, in[i], channels, names[i])))
      return failure();

  bool training;
  if (ctx.opset >= 14) {
    training = ctx.getInt("training_mode", 0) != 0;
    if (ctx.numOutputs() > 3)
      return ctx.error() << "has " << ctx.numOutputs()
                         << " outputs; from opset 14 on there are at most 3 "
                            "(Y, running_mean, running_var)",
             failure();
  } else {
    training = false;
    for (unsigned i = 1; i < 5; ++i)
      training |= ctx.hasOutput(i);
    if (ctx.opset < 7 && ctx.getInt("is_test", 0) != 0)
      training = false;
  }

  Type et = ctx.elementType(x);
  Value scale = ctx.cast(in[1], et), bias = ctx.cast(in[2], et);
  double epsilon = ctx.getFloat("epsilon", 1e-5);
  FloatAttr epsAttr = ctx.b.getF64FloatAttr(epsilon);
  if (!training) {
    Value mean = ctx.cast(in[3], et), var = ctx.cast(in[4], et);
    ctx.setOutput(0, ctx.create<BatchNormInferenceOp>(
                         ctx.type(x), x, scale, bias, mean, var, epsAttr));
    ctx.setOutput(1, in[3]);
    ctx.setOutput(2, in[4]);
    ctx.setOutput(3, in[3]);
    ctx.setOutput(4, in[4]);
    return success();
  }
  auto bn =
      buildInferredOp<BatchNormTrainingOp, 3>(ctx, x, scale, bias, epsAttr);
  if (!bn)
    return failure();
  double momentum = ctx.getFloat("momentum", 0.9);
  // Running statistics that are parameters (initializers): the training
  // step updates them and the inference entry normalizes with them
  // (tcc-build-train-step reads these attributes).
  auto argOf = [](Value v) -> int64_t {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg ? int64_t(arg.getArgNumber()) : -1;
  };
  if (argOf(in[3]) >= 0 && argOf(in[4]) >= 0 && ctx.elementType(in[3]) == et &&
      ctx.elementType(in[4]) == et) {
    bn->setAttr(tcc::attr::runningStats,
                ctx.b.getDenseI64ArrayAttr({argOf(in[3]), argOf(in[4])}));
    bn->setAttr(tcc::attr::momentum, ctx.b.getF64FloatAttr(momentum));
  }
  auto update = [&](Value running, Value batch) {
    batch = ctx.cast(batch, ctx.elementType(running));
    Value kept = mulScalar(ctx, running, momentum);
    return add(ctx, kept, mulScalar(ctx, batch, 1.0 - momentum));
  };
  ctx.setOutput(0, bn.getResult());
  if (ctx.hasOutput(1))
    ctx.setOutput(1, update(in[3], bn.getBatchMean()));
  if (ctx.hasOutput(2))
    ctx.setOutput(2, update(in[4], bn.getBatchVariance()));
  ctx.setOutput(3, ctx.cast(bn.getBatchMean(), ctx.elementType(in[3])));
  ctx.setOutput(4, ctx.cast(bn.getBatchVariance(), ctx.elementType(in[4])));
  return success();
}

/// LayerNormalization (opset 17): tcc.layer_norm over axis..rank-1. Scale
/// and B broadcast to the normalized shape. Statistics are computed in the
/// wider of X's type and stash_type (so f16 inputs get f32 statistics, while
/// f64 inputs are not narrowed); Mean and InvStdDev have the stash type.
static LogicalResult importLayerNorm(NodeContext &ctx) {
  if (failed(requireOpset(ctx, 17)))
    return failure();
  Value x = ctx.input(0), scale = ctx.input(1);
  if (!x || !scale || failed(requireFloat(ctx, x, "input X")) ||
      failed(requireFloat(ctx, scale, "Scale")))
    return failure();
  if (ctx.rank(x) == 0)
    return ctx.error() << "input X must have rank >= 1", failure();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", -1), ctx.rank(x));
  auto stash = readStashType(ctx);
  if (failed(axis) || failed(stash))
    return failure();
  Type compute = widerFloat(ctx.elementType(x), *stash);
  ArrayRef<int64_t> normalized = ctx.shape(x).drop_front(*axis);
  auto prepare = [&](Value p, StringRef what) -> Value {
    if (!broadcastsOnto(ctx.shape(p), normalized)) {
      ctx.error() << what << " of shape " << formatShape(ctx.shape(p))
                  << " does not broadcast to the normalized shape "
                  << formatShape(normalized);
      return {};
    }
    return ctx.cast(ctx.broadcastTo(p, normalized), compute);
  };
  scale = prepare(scale, "Scale");
  if (!scale)
    return failure();
  Value bias;
  if (ctx.hasInput(2)) {
    bias = ctx.input(2);
    if (!bias || failed(requireFloat(ctx, bias, "B")))
      return failure();
    bias = prepare(bias, "B");
    if (!bias)
      return failure();
  }
  auto ln = buildInferredOp<LayerNormOp, 3>(
      ctx, ctx.cast(x, compute), scale, bias, ctx.b.getI64IntegerAttr(*axis),
      ctx.b.getF64FloatAttr(ctx.getFloat("epsilon", 1e-5)));
  if (!ln)
    return failure();
  ctx.setOutput(0, ctx.cast(ln.getResult(), ctx.elementType(x)));
  ctx.setOutput(1, ctx.cast(ln.getMean(), *stash));
  ctx.setOutput(2, ctx.cast(ln.getInvStdDev(), *stash));
  return success();
}

/// (x - mean) / sqrt(var + epsilon) over `axes` (sorted, valid), with the
/// population variance: the shared core of instance and group normalization,
/// which tcc has no op for.
static Value normalizeOver(NodeContext &ctx, Value x, ArrayRef<int64_t> axes,
                           double epsilon) {
  ArrayRef<int64_t> shape = ctx.shape(x);
  Value mean = ctx.create<ReduceMeanOp>(x, axes, true);
  Value centered = sub(ctx, x, ctx.broadcastTo(mean, shape));
  Value var =
      ctx.create<ReduceMeanOp>(mul(ctx, centered, centered), axes, true);
  Value inv = ctx.create<RsqrtOp>(add(ctx, var, ctx.splatLike(var, epsilon)));
  return mul(ctx, centered, ctx.broadcastTo(inv, shape));
}

/// InstanceNormalization: per (sample, channel) statistics over the spatial
/// dimensions, then a per-channel scale and bias.
static LogicalResult importInstanceNorm(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1), bias = ctx.input(2);
  if (!x || !scale || !bias || failed(requireFloat(ctx, x, "input")))
    return failure();
  if (ctx.rank(x) < 3)
    return ctx.error() << "input must be [N, C, spatial...], got shape "
                       << formatShape(ctx.shape(x)),
           failure();
  int64_t channels = ctx.shape(x)[1];
  if (failed(requireFloat(ctx, scale, "scale")) ||
      failed(requireFloat(ctx, bias, "B")) ||
      failed(requireVector(ctx, scale, channels, "scale")) ||
      failed(requireVector(ctx, bias, channels, "B")))
    return failure();
  Type et = ctx.elementType(x);
  SmallVector<int64_t> axes =
      llvm::to_vector(llvm::seq<int64_t>(2, ctx.rank(x)));
  Value y = normalizeOver(ctx, x, axes, ctx.getFloat("epsilon", 1e-5));
  y = mul(ctx, y, broadcastAlong(ctx, ctx.cast(scale, et), ctx.shape(x), 1));
  y = add(ctx, y, broadcastAlong(ctx, ctx.cast(bias, et), ctx.shape(x), 1));
  ctx.setOutput(0, y);
  return success();
}

/// GroupNormalization: X [N, C, D...] is viewed as [N, G, C/G * prod(D)] and
/// normalized over its last dimension. Opset 18 scales and shifts per group
/// (scale, bias of shape [G]); opset 21 per channel ([C]) and adds
/// stash_type, the precision of the statistics (handled as for
/// LayerNormalization).
static LogicalResult importGroupNorm(NodeContext &ctx) {
  if (failed(requireOpset(ctx, 18)))
    return failure();
  Value x = ctx.input(0), scale = ctx.input(1), bias = ctx.input(2);
  if (!x || !scale || !bias || failed(requireFloat(ctx, x, "input X")) ||
      failed(requireFloat(ctx, scale, "scale")) ||
      failed(requireFloat(ctx, bias, "bias")))
    return failure();
  ArrayRef<int64_t> xs = ctx.shape(x);
  if (xs.size() < 2)
    return ctx.error() << "input X must be [N, C, ...], got shape "
                       << formatShape(xs),
           failure();
  if (!ctx.hasAttr("num_groups"))
    return ctx.error() << "the 'num_groups' attribute is required", failure();
  int64_t groups = ctx.getInt("num_groups", 1);
  if (groups < 1 || xs[1] % groups)
    return ctx.error() << "num_groups " << groups
                       << " must be positive and divide the " << xs[1]
                       << " channels",
           failure();
  bool perChannel = ctx.opset >= 21;
  int64_t paramSize = perChannel ? xs[1] : groups;
  StringRef what = perChannel ? "scale and bias (per channel from opset 21)"
                              : "scale and bias (per group before opset 21)";
  if (failed(requireVector(ctx, scale, paramSize, what)) ||
      failed(requireVector(ctx, bias, paramSize, what)))
    return failure();
  Type et = ctx.elementType(x), compute = et;
  if (perChannel) {
    auto stash = readStashType(ctx);
    if (failed(stash))
      return failure();
    compute = widerFloat(et, *stash);
  }
  int64_t rest = *checkedNumElements(xs.drop_front(2));
  SmallVector<int64_t> grouped = {xs[0], groups, xs[1] / groups * rest};
  Value y = normalizeOver(ctx, ctx.reshape(ctx.cast(x, compute), grouped), {2},
                          ctx.getFloat("epsilon", 1e-5));
  ArrayRef<int64_t> affineShape = perChannel ? xs : ArrayRef<int64_t>(grouped);
  y = ctx.reshape(y, affineShape);
  y = mul(ctx, y,
          broadcastAlong(ctx, ctx.cast(scale, compute), affineShape, 1));
  y = add(ctx, y, broadcastAlong(ctx, ctx.cast(bias, compute), affineShape, 1));
  ctx.setOutput(0, ctx.cast(ctx.reshape(y, xs), et));
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// Softmax and LogSoftmax. From opset 13: along one axis (default -1).
/// Before: X is coerced to 2-D [prod(d_0..d_axis-1), prod(d_axis..)]
/// (default axis 1) and normalized along its second dimension, which the
/// importer expresses as reshape, tcc.softmax on axis 1, reshape back (no
/// reshape when axis is the last dimension, where both agree).
template <typename OpTy>
static LogicalResult importSoftmaxLike(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x, "input")))
    return failure();
  int64_t r = ctx.rank(x);
  if (r == 0)
    return ctx.error() << "input must have rank >= 1", failure();
  auto along = [&](Value v, int64_t axis) {
    return ctx.create<OpTy>(ctx.type(v), v, ctx.b.getI64IntegerAttr(axis));
  };
  if (ctx.opset >= 13) {
    auto axis = ctx.normalizeAxis(ctx.getInt("axis", -1), r);
    if (failed(axis))
      return failure();
    ctx.setOutput(0, along(x, *axis));
    return success();
  }
  int64_t axis = ctx.getInt("axis", 1);
  if (axis < -r || axis > r)
    return ctx.error() << "axis " << axis << " is out of range for rank " << r,
           failure();
  if (axis < 0)
    axis += r;
  if (axis == r - 1) {
    ctx.setOutput(0, along(x, axis));
    return success();
  }
  ArrayRef<int64_t> shape = ctx.shape(x);
  int64_t outer = *checkedNumElements(shape.take_front(axis));
  int64_t inner = *checkedNumElements(shape.drop_front(axis));
  Value y = along(ctx.reshape(x, {outer, inner}), 1);
  ctx.setOutput(0, ctx.reshape(y, shape));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
enum class ReduceKind {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  SumSquare,
  LogSum,
  LogSumExp
};
} // namespace

/// Builds reduction `OpTy` over `axes`; no axes is the identity.
template <typename OpTy>
static Value reduce(NodeContext &ctx, Value v, ArrayRef<int64_t> axes,
                    bool keepDims) {
  if (axes.empty())
    return v;
  return ctx.create<OpTy>(v, axes, keepDims);
}

/// log(sum(exp(x))) computed as m + log(sum(exp(x - m))) with m the maximum,
/// so that large inputs do not overflow. An infinite maximum is replaced by 0
/// (x - m would be NaN where x = m = -inf, e.g. a fully masked row); the
/// result is then the correct -inf or +inf.
static Value logSumExp(NodeContext &ctx, Value x, ArrayRef<int64_t> axes,
                       bool keepDims) {
  ArrayRef<int64_t> shape = ctx.shape(x);
  Value m = reduce<ReduceMaxOp>(ctx, x, axes, true);
  Value infinite = ctx.create<CompareOp>(
      CmpPredicate::eq, ctx.create<AbsOp>(m),
      ctx.splatLike(m, std::numeric_limits<double>::infinity()));
  m = ctx.create<SelectOp>(ctx.type(m), infinite, ctx.splatLike(m, 0.0), m);
  Value e = ctx.create<ExpOp>(sub(ctx, x, ctx.broadcastTo(m, shape)));
  Value y =
      add(ctx, ctx.create<LogOp>(reduce<ReduceSumOp>(ctx, e, axes, true)), m);
  if (!keepDims)
    y = ctx.reshape(y, reducedShape(shape, axes, false));
  return y;
}

/// Reduce*: axes are an attribute before opset 18 (13 for ReduceSum) and an
/// optional constant input from then on, together with
/// noop_with_empty_axes. No axes reduce everything, unless
/// noop_with_empty_axes=1, which reduces nothing: then the elementwise parts
/// still apply (ReduceL1 gives |x|, ReduceSumSquare x*x, as in the current
/// ONNX reference implementation). ReduceL2, ReduceLogSum and ReduceLogSumExp
/// compute integer inputs in f32 and cast the result back.
template <ReduceKind kind> static LogicalResult importReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t axesInputSince = kind == ReduceKind::Sum ? 13 : 18;
  SmallVector<int64_t> axes;
  bool noop = false;
  if (ctx.opset >= axesInputSince) {
    if (ctx.hasAttr("axes"))
      return ctx.error() << "from opset " << axesInputSince
                         << " on, axes are an input, not an attribute",
             failure();
    if (ctx.hasInput(1)) {
      auto given = ctx.intsInput(1, "axes");
      if (failed(given))
        return failure();
      axes = *given;
    }
    noop = ctx.getInt("noop_with_empty_axes", 0) != 0;
  } else {
    if (ctx.numInputs() > 1)
      return ctx.error() << "before opset " << axesInputSince
                         << ", axes are an attribute and the operator has "
                            "one input, not "
                         << ctx.numInputs(),
             failure();
    axes = ctx.getInts("axes");
  }
  int64_t r = ctx.rank(x);
  if (axes.empty() && !noop)
    axes = llvm::to_vector(llvm::seq<int64_t>(0, r));
  auto normalized = ctx.normalizeAxes(axes, r);
  if (failed(normalized))
    return failure();
  if (r == 0 && !normalized->empty())
    return ctx.error() << "a scalar input has no axis to reduce", failure();
  bool keepDims = ctx.getInt("keepdims", 1) != 0;

  Type et = ctx.elementType(x);
  bool needsFloat = kind == ReduceKind::L2 || kind == ReduceKind::LogSum ||
                    kind == ReduceKind::LogSumExp;
  Value v = x;
  if (needsFloat && !isa<FloatType>(et))
    v = ctx.cast(v, ctx.b.getF32Type());
  Value y;
  switch (kind) {
  case ReduceKind::Sum:
    y = reduce<ReduceSumOp>(ctx, v, *normalized, keepDims);
    break;
  case ReduceKind::Mean:
    y = reduce<ReduceMeanOp>(ctx, v, *normalized, keepDims);
    break;
  case ReduceKind::Max:
    y = reduce<ReduceMaxOp>(ctx, v, *normalized, keepDims);
    break;
  case ReduceKind::Min:
    y = reduce<ReduceMinOp>(ctx, v, *normalized, keepDims);
    break;
  case ReduceKind::Prod:
    y = reduce<ReduceProdOp>(ctx, v, *normalized, keepDims);
    break;
  case ReduceKind::L1:
    y = reduce<ReduceSumOp>(ctx, ctx.create<AbsOp>(v), *normalized, keepDims);
    break;
  case ReduceKind::L2:
    y = ctx.create<SqrtOp>(
        reduce<ReduceSumOp>(ctx, mul(ctx, v, v), *normalized, keepDims));
    break;
  case ReduceKind::SumSquare:
    y = reduce<ReduceSumOp>(ctx, mul(ctx, v, v), *normalized, keepDims);
    break;
  case ReduceKind::LogSum:
    y = ctx.create<LogOp>(reduce<ReduceSumOp>(ctx, v, *normalized, keepDims));
    break;
  case ReduceKind::LogSumExp:
    y = logSumExp(ctx, v, *normalized, keepDims);
    break;
  }
  ctx.setOutput(0, ctx.cast(y, et));
  return success();
}

template <typename OpTy>
static LogicalResult importArgReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (ctx.rank(x) == 0)
    return ctx.error() << "input must have rank >= 1", failure();
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), ctx.rank(x));
  if (failed(axis))
    return failure();
  if (ctx.shape(x)[*axis] == 0)
    return ctx.error() << "cannot take the index of an extremum over the "
                          "empty dimension "
                       << *axis << " of shape " << formatShape(ctx.shape(x)),
           failure();
  Value y = buildInferred<OpTy>(ctx, x, uint64_t(*axis),
                                ctx.getInt("keepdims", 1) != 0,
                                ctx.getInt("select_last_index", 0) != 0);
  if (!y)
    return failure();
  ctx.setOutput(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// A scalar input that tcc needs at compile time (Dropout's ratio and
/// training_mode); `what` names it.
static FailureOr<double> scalarInput(NodeContext &ctx, unsigned i,
                                     StringRef what) {
  if (!ctx.constantInput(i))
    return ctx.error() << "the " << what << " ('" << ctx.node.input(i)
                       << "') must be a compile-time constant (an "
                          "initializer or a Constant): tcc.dropout takes it "
                          "as an attribute",
           failure();
  auto values = ctx.floatsInput(i, what);
  if (failed(values))
    return failure();
  if (values->size() != 1)
    return ctx.error() << "the " << what << " must be a scalar, got "
                       << values->size() << " values",
           failure();
  return values->front();
}

/// Dropout becomes tcc.dropout whatever the model's mode (is_test before
/// opset 7, the training_mode input from 12): tcc.dropout is the identity in
/// the forward and inference functions and drops with the step's Philox state
/// once the training-step passes have built the train step. A model exported
/// in eval mode therefore still trains with dropout, and a model exported with
/// training_mode=true still infers deterministically; the seed attribute is
/// ignored for the same reason. The mask is bool from opset 10 and X's type
/// before.
static LogicalResult importDropout(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x || failed(requireFloat(ctx, x, "input")))
    return failure();
  double ratio = 0.5;
  if (ctx.opset >= 12) {
    if (ctx.hasAttr("ratio"))
      return ctx.error() << "from opset 12 on, ratio is an input, not an "
                            "attribute",
             failure();
    if (ctx.hasInput(1)) {
      auto given = scalarInput(ctx, 1, "ratio");
      if (failed(given))
        return failure();
      ratio = *given;
    }
    // training_mode must be known, though it does not change what is built.
    if (ctx.hasInput(2) && failed(scalarInput(ctx, 2, "training_mode")))
      return failure();
  } else {
    ratio = ctx.getFloat("ratio", 0.5);
  }
  if (!(ratio >= 0.0 && ratio < 1.0))
    return ctx.error() << "ratio " << numStr(ratio) << " is outside [0, 1)",
           failure();
  // Each Dropout node draws from its own random stream (see tcc.dropout).
  auto op = ctx.createOp<DropoutOp>(x, /*rng=*/Value(), ctx.b.getF64FloatAttr(ratio),
                                    ctx.b.getI64IntegerAttr(ctx.nodeIndex));
  ctx.setOutput(0, op.getResult());
  Value mask = op.getMask();
  if (ctx.opset < 10)
    mask = ctx.cast(mask, ctx.elementType(x));
  ctx.setOutput(1, mask);
  return success();
}

//===----------------------------------------------------------------------===//
// Random numbers
//===----------------------------------------------------------------------===//

/// The element type a random node draws: its dtype attribute, else DFLT. tcc
/// draws floats only.
static FailureOr<Type> randomElementType(NodeContext &ctx, Type dflt) {
  if (ctx.hasAttr("dtype")) {
    int64_t dtype = ctx.getInt("dtype", 0);
    dflt = convertElementType(ctx.b.getContext(), int32_t(dtype));
    if (!dflt || !isa<FloatType>(dflt))
      return ctx.error() << "dtype " << onnxTypeName(int32_t(dtype))
                         << " is not a float type: tcc draws float random numbers",
             failure();
  }
  if (!isa<FloatType>(dflt))
    return ctx.error() << "the input is not a float tensor: give a float dtype "
                          "attribute",
           failure();
  return dflt;
}

/// RandomUniform / RandomNormal (shape attribute, f32 unless dtype says) and
/// RandomUniformLike / RandomNormalLike (the input's shape and type) become
/// tcc.random with the node's own stream: the training step draws from its
/// Philox state (seed, step), so a run is reproducible and resumes exactly;
/// eval_step and infer draw one fixed sample (tcc.random). The seed
/// attribute is ignored, as Dropout's is: the run's --seed decides.
template <RandomDistribution D, bool Like>
static LogicalResult importRandom(NodeContext &ctx) {
  SmallVector<int64_t> shape;
  Type dflt = ctx.b.getF32Type();
  if (Like) {
    Value x = ctx.input(0);
    if (!x)
      return failure();
    shape.assign(NodeContext::shape(x).begin(), NodeContext::shape(x).end());
    dflt = NodeContext::elementType(x);
  } else {
    if (!ctx.hasAttr("shape"))
      return ctx.error() << "the 'shape' attribute is required", failure();
    shape = ctx.getInts("shape");
    for (int64_t d : shape)
      if (d < 0)
        return ctx.error() << "shape has a negative dimension " << d, failure();
  }
  auto et = randomElementType(ctx, dflt);
  if (failed(et))
    return failure();
  bool uniform = D == RandomDistribution::uniform;
  double a = uniform ? ctx.getFloat("low", 0.0) : ctx.getFloat("mean", 0.0);
  double b = uniform ? ctx.getFloat("high", 1.0) : ctx.getFloat("scale", 1.0);
  if (!std::isfinite(a) || !std::isfinite(b))
    return ctx.error() << (uniform ? "low and high" : "mean and scale")
                       << " must be finite, got " << numStr(a) << " and " << numStr(b),
           failure();
  if (uniform && !(a <= b))
    return ctx.error() << "low " << numStr(a) << " is above high " << numStr(b), failure();
  if (!uniform && !(b >= 0.0))
    return ctx.error() << "scale " << numStr(b) << " is negative", failure();
  auto op = ctx.createOp<RandomOp>(RankedTensorType::get(shape, *et), /*rng=*/Value(), D,
                                   APFloat(a), APFloat(b), uint64_t(ctx.nodeIndex));
  ctx.setOutput(0, op.getResult());
  return success();
}

/// Bernoulli(p): 1 where a uniform draw u in [0, 1) (tcc.random on the node's
/// stream) is below p, else 0, in dtype (default p's type). What PyTorch's
/// torch.bernoulli exports as; p outside [0, 1] saturates.
static LogicalResult importBernoulli(NodeContext &ctx) {
  Value p = ctx.input(0);
  if (!p || failed(requireFloat(ctx, p, "input")))
    return failure();
  Type et = NodeContext::elementType(p);
  if (ctx.hasAttr("dtype")) {
    int64_t dtype = ctx.getInt("dtype", 0);
    et = convertElementType(ctx.b.getContext(), int32_t(dtype));
    if (!et)
      return ctx.error() << "dtype " << onnxTypeName(int32_t(dtype))
                         << " is not supported by tcc",
             failure();
  }
  auto u = ctx.createOp<RandomOp>(NodeContext::type(p), /*rng=*/Value(),
                                  RandomDistribution::uniform, APFloat(0.0), APFloat(1.0),
                                  uint64_t(ctx.nodeIndex));
  Value hit = ctx.create<CompareOp>(CmpPredicate::lt, u.getResult(), p);
  ctx.setOutput(0, ctx.cast(hit, et));
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// tcc.nll_loss on log-probabilities [N, C, d...] with the node's reduction,
/// ignore_index and optional weight input `weightIndex`.
static Value buildNllLoss(NodeContext &ctx, Value logProb, Value target,
                          unsigned weightIndex) {
  ArrayRef<int64_t> xs = ctx.shape(logProb);
  Type targetType = ctx.elementType(target);
  if (!targetType.isSignlessInteger(32) && !targetType.isSignlessInteger(64)) {
    ctx.error() << "the target must hold int32 or int64 class indices, got "
                << target.getType();
    return {};
  }
  SmallVector<int64_t> expected = {xs[0]};
  llvm::append_range(expected, xs.drop_front(2));
  if (ctx.shape(target) != ArrayRef<int64_t>(expected)) {
    ctx.error() << "the target has shape " << formatShape(ctx.shape(target))
                << ", expected " << formatShape(expected) << " for input of shape "
                << formatShape(xs);
    return {};
  }
  Value weight;
  if (ctx.hasInput(weightIndex)) {
    weight = ctx.input(weightIndex);
    if (!weight || failed(requireFloat(ctx, weight, "the weight")) ||
        failed(requireVector(ctx, weight, xs[1], "the weight")))
      return {};
    weight = ctx.cast(weight, ctx.elementType(logProb));
  }
  std::string reductionName = ctx.getString("reduction", "mean");
  LossReduction reduction;
  if (reductionName == "none")
    reduction = LossReduction::none;
  else if (reductionName == "sum")
    reduction = LossReduction::sum;
  else if (reductionName == "mean")
    reduction = LossReduction::mean;
  else {
    ctx.error() << "reduction '" << reductionName
                << "' is not one of none, sum, mean";
    return {};
  }
  IntegerAttr ignoreIndex;
  if (ctx.hasAttr("ignore_index"))
    ignoreIndex = ctx.b.getI64IntegerAttr(ctx.getInt("ignore_index", 0));
  return buildInferred<NllLossOp>(ctx, logProb, target, weight, reduction,
                                  ignoreIndex);
}

/// Checks that the scores / log-probabilities are [N, C, d...] floats.
static LogicalResult checkClassScores(NodeContext &ctx, Value x) {
  if (failed(requireFloat(ctx, x, "the input")))
    return failure();
  if (ctx.rank(x) < 2)
    return ctx.error() << "the input must be [N, C, d...], got shape "
                       << formatShape(ctx.shape(x)),
           failure();
  return success();
}

static LogicalResult importNllLoss(NodeContext &ctx) {
  if (failed(requireOpset(ctx, 12)))
    return failure();
  Value x = ctx.input(0), target = ctx.input(1);
  if (!x || !target || failed(checkClassScores(ctx, x)))
    return failure();
  Value loss = buildNllLoss(ctx, x, target, 2);
  if (!loss)
    return failure();
  ctx.setOutput(0, loss);
  return success();
}

/// SoftmaxCrossEntropyLoss = tcc.log_softmax over the classes (dimension 1),
/// then tcc.nll_loss; the optional second output is the log-probabilities.
static LogicalResult importSoftmaxCrossEntropyLoss(NodeContext &ctx) {
  if (failed(requireOpset(ctx, 12)))
    return failure();
  Value scores = ctx.input(0), labels = ctx.input(1);
  if (!scores || !labels || failed(checkClassScores(ctx, scores)))
    return failure();
  Value logProb = ctx.create<LogSoftmaxOp>(ctx.type(scores), scores,
                                           ctx.b.getI64IntegerAttr(1));
  Value loss = buildNllLoss(ctx, logProb, labels, 2);
  if (!loss)
    return failure();
  ctx.setOutput(0, loss);
  ctx.setOutput(1, logProb);
  return success();
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void tcc::onnx_frontend::registerNNHandlers(HandlerTable &table) {
  table["MatMul"] = importMatMul;
  table["Gemm"] = importGemm;
  table["Einsum"] = importEinsum;
  table["Conv"] = importConv;
  table["ConvTranspose"] = importConvTranspose;
  table["MaxPool"] = importMaxPool;
  table["AveragePool"] = importAveragePool;
  table["GlobalAveragePool"] = importGlobalPool<ReduceMeanOp>;
  table["GlobalMaxPool"] = importGlobalPool<ReduceMaxOp>;
  table["BatchNormalization"] = importBatchNorm;
  table["LayerNormalization"] = importLayerNorm;
  table["InstanceNormalization"] = importInstanceNorm;
  table["GroupNormalization"] = importGroupNorm;
  table["Softmax"] = importSoftmaxLike<SoftmaxOp>;
  table["LogSoftmax"] = importSoftmaxLike<LogSoftmaxOp>;
  table["ReduceSum"] = importReduce<ReduceKind::Sum>;
  table["ReduceMean"] = importReduce<ReduceKind::Mean>;
  table["ReduceMax"] = importReduce<ReduceKind::Max>;
  table["ReduceMin"] = importReduce<ReduceKind::Min>;
  table["ReduceProd"] = importReduce<ReduceKind::Prod>;
  table["ReduceL1"] = importReduce<ReduceKind::L1>;
  table["ReduceL2"] = importReduce<ReduceKind::L2>;
  table["ReduceSumSquare"] = importReduce<ReduceKind::SumSquare>;
  table["ReduceLogSum"] = importReduce<ReduceKind::LogSum>;
  table["ReduceLogSumExp"] = importReduce<ReduceKind::LogSumExp>;
  table["ArgMax"] = importArgReduce<ArgMaxOp>;
  table["ArgMin"] = importArgReduce<ArgMinOp>;
  table["Dropout"] = importDropout;
  table["RandomUniform"] = importRandom<RandomDistribution::uniform, false>;
  table["RandomUniformLike"] = importRandom<RandomDistribution::uniform, true>;
  table["RandomNormal"] = importRandom<RandomDistribution::normal, false>;
  table["RandomNormalLike"] = importRandom<RandomDistribution::normal, true>;
  table["Bernoulli"] = importBernoulli;
  table["NegativeLogLikelihoodLoss"] = importNllLoss;
  table["SoftmaxCrossEntropyLoss"] = importSoftmaxCrossEntropyLoss;
}
