//===- MarkLibraryCalls.cpp - heavy ops as library calls -------------------===//
//
// The artifact never links oneDNN: the generated code calls the runtime's
// library_call (abi.h), which runs a primitive the runtime created once per
// session. This pass, before memory planning, chooses the calls: each op
// becomes a call of a private declaration (so that liveness sees the
// operands the call really reads, e.g. an unpadded convolution input, or a
// matmul's bias); tcc-lower-library-calls, after planning, turns those
// into the runtime calls.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/ConvBackward.h"
#include "passes/codegen/LibraryCalls.h"
#include "passes/lowering/MatmulMaps.h"
#include "passes/Passes.h"
#include "passes/support/ViewRoot.h"

#include "dialects/TccNames.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/InterleavedRange.h"

#define DEBUG_TYPE "tcc-mark-library-calls"

namespace tcc {
#define GEN_PASS_DEF_MARKLIBRARYCALLSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// A dense row-major buffer of static shape (of element type ELEM when
/// given).
bool isDense(Value v, Type elem = {}) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getLayout().isIdentity() &&
         (!elem || t.getElementType() == elem);
}

/// A dense row-major f32 buffer of static shape.
bool isDenseF32(Value v) {
  return isDense(v) && cast<MemRefType>(v.getType()).getElementType().isF32();
}

/// The element type of a memref.
Type elementOf(Value v) { return cast<MemRefType>(v.getType()).getElementType(); }

/// The tcc_dtype of a float element type that library calls take (0 for
/// others).
int64_t callDtype(Type t) {
  return t.isF32() ? TCC_DTYPE_F32 : t.isBF16() ? TCC_DTYPE_BF16 : t.isF16() ? TCC_DTYPE_F16 : 0;
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<MemRefType>(v.getType()).getShape();
}

/// True when OP writes FILL's value everywhere in OUT and that value is +0.0:
/// a linalg.fill or a linalg.map that yields a constant.
bool isZeroFillOf(Operation *op, Value out) {
  Value value;
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    if (fill.getOutputs()[0] != out)
      return false;
    value = fill.getInputs()[0];
  } else if (auto map = dyn_cast<linalg::MapOp>(op)) {
    if (map.getInit() != out || !map.getInputs().empty())
      return false;
    auto yield = cast<linalg::YieldOp>(map.getMapper().front().getTerminator());
    value = yield.getOperand(0);
  } else {
    return false;
  }
  FloatAttr attr;
  return matchPattern(value, m_Constant(&attr)) && attr.getValue().isPosZero();
}

/// The zero fill of OUT that is the last op before OP to touch OUT (which
/// OP then need not accumulate onto), or null.
Operation *zeroFillBefore(Operation *op, Value out) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (!llvm::is_contained(prev->getOperands(), out))
      continue;
    return isZeroFillOf(prev, out) ? prev : nullptr;
  }
  return nullptr;
}

/// True when OP, or an op nested in it, uses a view of ROOT.
bool touches(Operation *op, Value root) {
  bool found = false;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (isa<BaseMemRefType>(v.getType()) && tcc::viewRoot(v) == root)
        found = true;
  });
  return found;
}

/// True when an op strictly between FROM and TO may write a view of ROOT:
/// any use other than taking a view, being a linalg op's input or an input
/// of a library call this pass made (which writes only its operand #2, the
/// output of every kind).
bool writtenBetween(Operation *from, Operation *to, Value root) {
  for (Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode()) {
    bool writes = false;
    op->walk([&](Operation *inner) {
      if (isa<ViewLikeOpInterface>(inner))
        return;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(inner);
      bool libraryCall = isa<func::CallOp>(inner) && inner->hasAttr(tcc::attr::libraryCall);
      for (OpOperand &use : inner->getOpOperands())
        if (isa<BaseMemRefType>(use.get().getType()) && tcc::viewRoot(use.get()) == root &&
            (linalgOp ? linalgOp.isDpsInit(&use)
                      : !libraryCall || use.getOperandNumber() == 2))
          writes = true;
    });
    if (writes)
      return true;
  }
  return false;
}

/// A convolution input that is a zero-padded copy of another buffer: the
/// allocation, its fill, the subview and the copy into it, and the source.
/// With STRIDED the copy may be strided too (a zero-dilated copy: a data
/// gradient's dY), at strides strideH, strideW.
struct PaddedInput {
  Value source;
  int64_t top, left, bottom, right;
  int64_t strideH = 1, strideW = 1;
  SmallVector<Operation *> dead; // erased once the call reads `source`
};

/// The copy into SUBVIEW when it is the subview's one use, else null.
Operation *copyInto(memref::SubViewOp subview, Value *source) {
  if (!subview->hasOneUse())
    return nullptr;
  Operation *copy = *subview->getUsers().begin();
  if (auto c = dyn_cast<linalg::CopyOp>(copy); c && c.getOutputs()[0] == subview.getResult())
    *source = c.getInputs()[0];
  else if (auto c = dyn_cast<memref::CopyOp>(copy); c && c.getTarget() == subview.getResult())
    *source = c.getSource();
  else
    return nullptr;
  return copy;
}

/// The padded copy that CONV reads as INPUT: the allocation itself, or an
/// expand_shape of it that only CONV reads (a grouped convolution's
/// [N, G, C/G, H, W] view). Other ops may read the copy too (a forward
/// convolution and its filter gradient share the padded input): it is then
/// kept, and erasePaddedCopies drops it once the last reader is a call.
std::optional<PaddedInput> paddedInput(Operation *conv, Value input, bool strided = false) {
  Operation *via = nullptr;
  if (auto expand = input.getDefiningOp<memref::ExpandShapeOp>(); expand && expand->hasOneUse()) {
    via = expand;
    input = expand.getSrc();
  }
  auto alloc = input.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != conv->getBlock())
    return std::nullopt;
  Operation *fill = nullptr, *copy = nullptr;
  memref::SubViewOp subview;
  Value source;
  bool shared = false;
  for (Operation *user : alloc->getUsers()) {
    if (user == conv || user == via)
      continue;
    auto sv = dyn_cast<memref::SubViewOp>(user);
    if (sv && !subview && (copy = copyInto(sv, &source)))
      subview = sv;
    else if (!fill && isZeroFillOf(user, input))
      fill = user;
    else if (!isa<memref::DeallocOp>(user))
      shared = true;
  }
  // The call reads the source where CONV read the copy: neither may change
  // in between.
  if (!fill || !subview || !source || !isDense(source, elementOf(input)) ||
      fill->getBlock() != conv->getBlock() ||
      copy->getBlock() != conv->getBlock() || !fill->isBeforeInBlock(copy) ||
      !copy->isBeforeInBlock(conv) || writtenBetween(copy, conv, tcc::viewRoot(source)) ||
      (shared && writtenBetween(copy, conv, input)))
    return std::nullopt;
  // Only the spatial dimensions may be padded (and, STRIDED, dilated).
  ArrayRef<int64_t> offsets = subview.getStaticOffsets();
  ArrayRef<int64_t> sizes = subview.getStaticSizes();
  ArrayRef<int64_t> strides = subview.getStaticStrides();
  if (offsets.size() != 4 || offsets[0] != 0 || offsets[1] != 0 || strides[0] != 1 ||
      strides[1] != 1 || llvm::any_of(offsets, ShapedType::isDynamic) ||
      llvm::any_of(strides, [&](int64_t s) { return s < 1 || (!strided && s != 1); }) ||
      sizes != shapeOf(source))
    return std::nullopt;
  ArrayRef<int64_t> padded = shapeOf(input);
  PaddedInput result{source,
                     offsets[2],
                     offsets[3],
                     padded[2] - (sizes[2] - 1) * strides[2] - 1 - offsets[2],
                     padded[3] - (sizes[3] - 1) * strides[3] - 1 - offsets[3],
                     strides[2],
                     strides[3],
                     {}};
  if (!shared)
    result.dead = {copy, subview, fill};
  if (via)
    result.dead.insert(result.dead.begin(), via);
  return result;
}

/// A call to make: kind, parameters and operands, plus the ops that become
/// dead once it is made (erased in order; those with results only when
/// unused) and, when not the op itself, where the call goes.
struct Call {
  int32_t kind;
  SmallVector<int64_t> params;
  SmallVector<Value> operands;
  SmallVector<Operation *> dead;
  Operation *at = nullptr;
  int64_t groups = 1; // CONV2D
  int64_t dtype = TCC_DTYPE_F32;
  int64_t cDtype = 0; // C's (a convolution's output's) dtype when not the call's (abi.h)
};

/// What the elementwise op after a matmul applies to its product C, which
/// the call then does instead (abi.h's MATMUL epilogue).
struct Epilogue {
  int64_t bits = 0;
  Value output, bias, residual; // residual null without the bit
  Operation *generic = nullptr;
  SmallVector<Operation *> views; // views of C that only the generic read
};

int64_t numElements(Value v) { return cast<MemRefType>(v.getType()).getNumElements(); }

bool isPosZeroConstant(Value v) {
  FloatAttr attr;
  return matchPattern(v, m_Constant(&attr)) && attr.getValue().isPosZero();
}

/// The other operand of V's defining addf when one of its operands is X.
Value otherAddend(Value v, Value x) {
  auto add = v.getDefiningOp<arith::AddFOp>();
  if (!add)
    return {};
  return add.getLhs() == x ? add.getRhs() : add.getRhs() == x ? add.getLhs() : Value();
}

/// The epilogue of MATMUL (operands A, B, C; N columns; C zero-filled
/// before it), in the forms elementwise fusion leaves behind a dense layer.
/// The next op to touch C (views of C aside) must be a parallel
/// linalg.generic that reads C, or a dense reshape of all of C, with an
/// identity map, a bias of N elements along the last loop, optionally a
/// residual D with an identity map, writes one dense output Y with an
/// identity map, and computes exactly
///     [max(] [D +] (C + bias) [, 0.0)]      (addf / maximumf, either order)
/// Y may be C itself (the generic updates it in place; later ops read Y);
/// otherwise C must have no other reader (e.g. a backward op re-reading the
/// pre-activation), since it is no longer computed. The call replaces the
/// generic where it stands, so A and B must not be written in between.
/// The next op after MATMUL to touch C, which must be all of a fresh
/// allocation ROOT; the views of it taken on the way go to E's views. Null
/// when C is not such a buffer or nothing touches it.
Operation *nextTouching(Operation *matmul, Value c, Epilogue &e) {
  Value root = tcc::viewRoot(c);
  auto alloc = root.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != matmul->getBlock() || numElements(c) != numElements(root))
    return nullptr;
  for (Operation *next = matmul->getNextNode(); next; next = next->getNextNode()) {
    auto view = dyn_cast<ViewLikeOpInterface>(next);
    if (view && tcc::viewRoot(view.getViewSource()) == root) {
      e.views.push_back(next);
      continue;
    }
    if (touches(next, root))
      return next;
  }
  return nullptr;
}

/// True when nothing but MATMUL, GENERIC, deallocations and zero fills of C
/// uses C's buffer (through views).
bool onlyUsedBy(Value c, Operation *matmul, Operation *generic) {
  SmallVector<Value> worklist = {tcc::viewRoot(c)};
  while (!worklist.empty()) {
    Value buffer = worklist.pop_back_val();
    for (Operation *user : buffer.getUsers()) {
      if (isa<ViewLikeOpInterface>(user)) {
        llvm::append_range(worklist, user->getResults());
        continue;
      }
      if (user != matmul && user != generic && !isa<memref::DeallocOp>(user) &&
          !isZeroFillOf(user, c))
        return false;
    }
  }
  return true;
}

std::optional<Epilogue> matchEpilogue(Operation *matmul, ArrayRef<Value> operands, int64_t n) {
  Value c = operands[2], root = tcc::viewRoot(c);
  Epilogue e;
  Operation *next = nextTouching(matmul, c, e);
  auto generic = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!generic || !generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops())
    return std::nullopt;
  MLIRContext *ctx = generic.getContext();
  unsigned rank = generic.getNumLoops();
  if (rank == 0)
    return std::nullopt;
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap lastDim = AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, ctx));
  OpOperand *out = generic.getDpsInitOperand(0);
  e.output = out->get();
  // Row-major dense: element (row, j) of C is element (..., j) of a view
  // whose last dimension is N, so the bias broadcast is the same.
  if (!isDenseF32(e.output) || generic.getMatchingIndexingMap(out) != identity ||
      shapeOf(e.output).back() != n || numElements(e.output) != numElements(c))
    return std::nullopt;
  BlockArgument cArg, biasArg, residualArg;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    Value v = in->get();
    AffineMap map = generic.getMatchingIndexingMap(in);
    BlockArgument arg = generic.getMatchingBlockArgument(in);
    if (!isDenseF32(v))
      return std::nullopt;
    if (tcc::viewRoot(v) == root && !cArg && map == identity && numElements(v) == numElements(c))
      cArg = arg;
    else if (tcc::viewRoot(v) != root && !biasArg && map == lastDim && shapeOf(v) == ArrayRef<int64_t>{n})
      biasArg = arg, e.bias = v;
    else if (tcc::viewRoot(v) != root && !residualArg && map == identity)
      residualArg = arg, e.residual = v;
    else
      return std::nullopt;
  }
  if (!cArg || !biasArg)
    return std::nullopt;

  // The body, from the yielded value back to C + bias.
  Block &body = generic.getRegion().front();
  if (!generic.getMatchingBlockArgument(out).use_empty())
    return std::nullopt;
  Value v = cast<linalg::YieldOp>(body.getTerminator()).getOperand(0);
  size_t ops = 1; // the yield
  bool relu = false;
  if (auto max = v.getDefiningOp<arith::MaximumFOp>()) {
    Value x = isPosZeroConstant(max.getRhs())   ? max.getLhs()
              : isPosZeroConstant(max.getLhs()) ? max.getRhs()
                                                : Value();
    if (!x)
      return std::nullopt;
    relu = true, v = x, ++ops;
  }
  if (residualArg) {
    v = otherAddend(v, residualArg);
    ++ops;
  }
  if (!v || otherAddend(v, cArg) != biasArg || body.getOperations().size() != ops + 1)
    return std::nullopt;
  e.bits = TCC_MATMUL_EPILOGUE_BIAS | (residualArg ? TCC_MATMUL_EPILOGUE_RESIDUAL : 0) |
           (relu ? TCC_MATMUL_EPILOGUE_RELU : 0);
  e.generic = generic;

  // Aliasing. The call writes Y while reading A, B, bias and D: none may
  // share Y's buffer, except that Y may be C (updated in place).
  Value outRoot = tcc::viewRoot(e.output);
  for (Value read : {operands[0], operands[1], e.bias, e.residual})
    if (read && tcc::viewRoot(read) == outRoot)
      return std::nullopt;
  for (Value read : {operands[0], operands[1]})
    if (writtenBetween(matmul, generic, tcc::viewRoot(read)))
      return std::nullopt;
  if (outRoot == root)
    return e;
  // Y is another buffer: C must have no reader but the generic.
  if (!onlyUsedBy(c, matmul, generic))
    return std::nullopt;
  return e;
}

/// The rounding of a 16-bit matmul's f32 sums C (operands A, B, C; C
/// zero-filled before it) to its ELEM result, when the next op to touch C is
/// a parallel linalg.generic that does only that: reads all of C (or a
/// dense reshape of it) with an identity map and writes truncf of it to one
/// dense ELEM output Y with an identity map, Y another buffer than A, B and
/// C, and C has no other reader. The call then writes Y in ELEM itself (the
/// library rounds its f32 sums once, as the generic did): Y is the result
/// the tcc op had, and C is never stored.
std::optional<Epilogue> matchRounding(Operation *matmul, ArrayRef<Value> operands, Type elem) {
  Value c = operands[2], root = tcc::viewRoot(c);
  Epilogue e;
  auto generic = dyn_cast_or_null<linalg::GenericOp>(nextTouching(matmul, c, e));
  if (!generic || !generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 ||
      generic.getNumDpsInputs() != 1 || generic.getNumLoops() == 0 ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
    return std::nullopt;
  Value in = generic.getDpsInputs()[0];
  e.output = generic.getDpsInits()[0];
  if (tcc::viewRoot(in) != root || !isDense(in) || numElements(in) != numElements(c) ||
      !isDense(e.output, elem) || numElements(e.output) != numElements(c))
    return std::nullopt;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto trunc = yield.getOperand(0).getDefiningOp<arith::TruncFOp>();
  if (body.getOperations().size() != 2 || !trunc || trunc.getIn() != body.getArgument(0))
    return std::nullopt;
  Value outRoot = tcc::viewRoot(e.output);
  for (Value read : {operands[0], operands[1]})
    if (tcc::viewRoot(read) == outRoot || writtenBetween(matmul, generic, tcc::viewRoot(read)))
      return std::nullopt;
  if (outRoot == root || !onlyUsedBy(c, matmul, generic))
    return std::nullopt;
  e.generic = generic;
  return e;
}

/// A CONV2D call's geometry from a channels-first 2-D convolution: plain
/// (x [N, C, H, W], w [F, C, KH, KW]), depthwise (w [C, KH, KW], one filter
/// per channel) or grouped (x [N, G, C/G, H, W], w [G, F/G, C/G, KH, KW],
/// y [N, G, F/G, OH, OW], views of the plain buffers). Params up to the
/// padding (which the caller fills in) and the groups.
struct ConvShape {
  int64_t n, c, h, w, f, kh, kw, oh, ow, groups;
};

std::optional<ConvShape> convShape(linalg::LinalgOp op, ArrayRef<Value> operands, bool grouped) {
  if (!isa<linalg::Conv2DNchwFchwOp, linalg::DepthwiseConv2DNchwChwOp, linalg::Conv2DNgchwGfchwOp>(
          op.getOperation()))
    return std::nullopt;
  ArrayRef<int64_t> x = shapeOf(operands[0]), w = shapeOf(operands[1]), y = shapeOf(operands[2]);
  if (isa<linalg::Conv2DNchwFchwOp>(op))
    return ConvShape{x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3], 1};
  if (!grouped)
    return std::nullopt;
  if (isa<linalg::DepthwiseConv2DNchwChwOp>(op))
    return ConvShape{x[0], x[1], x[2], x[3], x[1], w[1], w[2], y[2], y[3], x[1]};
  if (isa<linalg::Conv2DNgchwGfchwOp>(op))
    return ConvShape{x[0], x[1] * x[2], x[3], x[4], w[0] * w[1], w[3], w[4], y[3], y[4], x[1]};
  return std::nullopt;
}

/// The flipped filter copy that a data gradient's convolution reads as
/// FILTER: the generic that writes it (one input, read by
/// tcc::flippedFilterMap, yielded as it is) and the filter it reads; the
/// generic and the views between it and CONV are dead once the call reads
/// the filter itself, unless something else reads the copy.
struct FlippedFilter {
  Value filter;
  SmallVector<Operation *> dead;
  /// Non-null when FILTER is a strided view (a filter sliced to the taps
  /// that meet the input) that no earlier dense copy holds: the call reads
  /// a dense copy of it, made at COPYAT (makeDenseFilter).
  Value copyFrom;
  Operation *copyAt = nullptr;
};

/// Two subviews of one buffer with the same static offsets, sizes and
/// strides (the same elements).
bool sameSubview(memref::SubViewOp a, memref::SubViewOp b) {
  return a.getSource() == b.getSource() && a.getType() == b.getType() &&
         a.getOffsets().empty() && b.getOffsets().empty() && a.getSizes().empty() &&
         b.getSizes().empty() && a.getStrides().empty() && b.getStrides().empty() &&
         a.getStaticOffsets() == b.getStaticOffsets() && a.getStaticSizes() == b.getStaticSizes() &&
         a.getStaticStrides() == b.getStaticStrides();
}

/// The dense copy of VIEW's elements that an earlier op made (densifyInputs,
/// for the forward convolution reading the same sliced filter), when
/// neither the filter nor the copy is written from it up to BEFORE; null
/// when there is none. Of several (the forward's and a recomputed
/// forward's), the last before BEFORE: its buffer lives the shortest, and
/// the choice does not depend on the order of the filter's use list (which
/// bufferization leaves different from run to run).
Value earlierDenseCopy(Value view, Operation *before) {
  auto sv = view.getDefiningOp<memref::SubViewOp>();
  if (!sv)
    return {};
  Value root = tcc::viewRoot(view);
  linalg::CopyOp last;
  for (Operation *user : sv.getSource().getUsers()) {
    auto other = dyn_cast<memref::SubViewOp>(user);
    if (!other || !sameSubview(sv, other))
      continue;
    for (Operation *reader : other->getUsers()) {
      auto copy = dyn_cast<linalg::CopyOp>(reader);
      if (!copy || copy.getDpsInputs()[0] != other.getResult() ||
          copy->getBlock() != before->getBlock() || !copy->isBeforeInBlock(before) ||
          (last && copy->isBeforeInBlock(last)))
        continue;
      Value target = copy.getDpsInits()[0];
      if (!target.getDefiningOp<memref::AllocOp>() || !isDense(target, elementOf(view)) ||
          writtenBetween(copy, before, root) || writtenBetween(copy, before, target))
        continue;
      last = copy;
    }
  }
  return last ? last.getDpsInits()[0] : Value();
}

/// A dense copy of W's view, made right before its flipped copy.
Value makeDenseFilter(const FlippedFilter &w) {
  OpBuilder b(w.copyAt);
  auto type = cast<MemRefType>(w.copyFrom.getType());
  Value copy = memref::AllocOp::create(b, w.copyAt->getLoc(),
                                       MemRefType::get(type.getShape(), type.getElementType()),
                                       b.getI64IntegerAttr(64));
  linalg::CopyOp::create(b, w.copyAt->getLoc(), w.copyFrom, copy);
  return copy;
}

std::optional<FlippedFilter> flippedFilter(Operation *conv, Value filter, int64_t groups,
                                           ArrayRef<int64_t> kernel) {
  FlippedFilter result;
  Value v = filter;
  SmallVector<Operation *> views;
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>()) {
    if (!v.hasOneUse())
      return std::nullopt;
    views.push_back(view);
    v = view.getViewSource();
  }
  auto alloc = v.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return std::nullopt;
  linalg::GenericOp flip;
  bool othersRead = false;
  for (Operation *user : alloc->getUsers()) {
    if ((!views.empty() && user == views.back()) || (views.empty() && user == conv) ||
        isa<memref::DeallocOp>(user))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (generic && !flip && generic.getNumDpsInits() == 1 && generic.getDpsInits()[0] == v)
      flip = generic;
    else
      othersRead = true;
  }
  if (!flip || flip->getBlock() != conv->getBlock() || !flip->isBeforeInBlock(conv) ||
      flip.getNumDpsInputs() != 1 || !flip.hasPureBufferSemantics())
    return std::nullopt;
  Block &body = flip.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  SmallVector<AffineMap> maps = flip.getIndexingMapsArray();
  if (body.getOperations().size() != 1 || yield.getOperand(0) != body.getArgument(0) ||
      maps[0] != tcc::flippedFilterMap(conv->getContext(), groups, kernel) ||
      !maps[1].isIdentity())
    return std::nullopt;
  result.filter = flip.getDpsInputs()[0];
  Type elem = elementOf(v);
  if (!isDense(result.filter, elem)) {
    // A sliced filter: the flipped copy would read it across its slowest
    // dimension (a 512x512 filter's center tap 18 KiB apart); a dense copy
    // (the forward's, when it made one) reads it in order.
    auto type = dyn_cast<MemRefType>(result.filter.getType());
    if (!type || !type.hasStaticShape() || type.getElementType() != elem)
      return std::nullopt;
    if (Value copy = earlierDenseCopy(result.filter, flip)) {
      result.filter = copy;
    } else {
      result.copyFrom = result.filter;
      result.copyAt = flip;
    }
  }
  if (writtenBetween(flip, conv, tcc::viewRoot(result.filter)))
    return std::nullopt;
  if (!othersRead) {
    result.dead = views;
    result.dead.push_back(flip);
    // The view of the filter that only the copy read (its group split).
    if (auto view = result.filter.getDefiningOp<ViewLikeOpInterface>(); view && result.filter.hasOneUse())
      result.dead.push_back(view);
  }
  return result;
}

/// The dtypes of a product (matmul, 2-D convolution or marked gradient)
/// whose inputs are all of ELEM and whose output is of OUT: the call's dtype
/// and C's (0: the call's). f32 throughout, or with SIXTEENBIT bf16 / f16
/// operands into f32 sums (abi.h's C_DTYPE / OUT_DTYPE); nullopt for others.
std::optional<std::pair<int64_t, int64_t>> productDtypes(Type elem, Type out, bool sixteenBit) {
  if (elem.isF32() && out.isF32())
    return std::make_pair(int64_t(TCC_DTYPE_F32), int64_t(0));
  if (!sixteenBit || (!elem.isBF16() && !elem.isF16()) || !out.isF32())
    return std::nullopt;
  return std::make_pair(callDtype(elem), int64_t(TCC_DTYPE_F32));
}

/// A convolution gradient that the lowering marked (tcc.conv_backward):
/// a CONV2D_BACKWARD_WEIGHTS generic reads {padded X, dY} into dW; a
/// CONV2D_BACKWARD_DATA named convolution reads {dY zero-dilated and
/// padded, W flipped} into dX. The call reads X, dY and W themselves, so
/// the copies go. Nothing (the op stays generated code) unless every
/// operand is found and dense and the copies' geometry is the marker's.
/// Inputs of f32, or with SIXTEENBIT of bf16 / f16 into an f32 output.
std::optional<Call> planBackwardConv(linalg::LinalgOp op, const tcc::ConvBackwardMarker &m,
                                     bool sixteenBit) {
  SmallVector<Value> operands(op->getOperands());
  if (operands.size() != 3 || !op.hasPureBufferSemantics() ||
      !llvm::all_of(operands, [](Value v) { return isa<MemRefType>(v.getType()); }))
    return std::nullopt;
  ArrayRef<int64_t> p = m.params;
  int64_t sizeX = p[0] * p[1] * p[2] * p[3], sizeW = p[4] * (p[1] / m.groups) * p[5] * p[6],
          sizeY = p[0] * p[4] * p[7] * p[8];
  Type elem = elementOf(operands[0]), outElem = elementOf(operands[2]);
  auto dtypes = productDtypes(elem, outElem, sixteenBit);
  if (!dtypes || elementOf(operands[1]) != elem)
    return std::nullopt;
  auto dense = [&](Value v, int64_t elements) {
    return isDense(v, v == operands[2] ? outElem : elem) && numElements(v) == elements;
  };
  Call call;
  std::tie(call.dtype, call.cDtype) = *dtypes;
  call.kind = m.kind;
  call.params.assign(p.begin(), p.end());
  call.groups = m.groups;
  bool padded = p[13] || p[14] || p[15] || p[16];
  // A depthwise / grouped filter gradient whose kernel is larger than its
  // input (3x3 on mobilenet's 2x2 and 1x1 maps) falls to oneDNN 2.6's gemm
  // implementation: 3.9 ms where its depthwise kernel takes 0.04-0.07 ms on
  // larger maps and the loops microseconds. Those stay loops.
  if (m.kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS && m.groups > 1 &&
      (p[2] < p[5] || p[3] < p[6]))
    return std::nullopt;
  if (m.kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS) {
    // The padding may reach further than the windows (bottom / right).
    if (std::optional<PaddedInput> x = paddedInput(op, operands[0])) {
      if (x->top != p[13] || x->left != p[14] || x->bottom < p[15] || x->right < p[16])
        return std::nullopt;
      operands[0] = x->source;
      call.dead = x->dead;
    } else if (padded) {
      return std::nullopt;
    }
    if (!dense(operands[0], sizeX) || !dense(operands[1], sizeY) || !dense(operands[2], sizeW))
      return std::nullopt;
  } else {
    // dY sits at (dilation * (K - 1) - pad_low) in the zeros, at the stride.
    int64_t at[2] = {p[11] * (p[5] - 1) - p[13], p[12] * (p[6] - 1) - p[14]};
    if (std::optional<PaddedInput> dy = paddedInput(op, operands[0], /*strided=*/true)) {
      if (dy->top != at[0] || dy->left != at[1] || dy->strideH != p[9] || dy->strideW != p[10])
        return std::nullopt;
      operands[0] = dy->source;
      call.dead = dy->dead;
    } else if (at[0] || at[1] || p[9] != 1 || p[10] != 1) {
      return std::nullopt;
    }
    std::optional<FlippedFilter> w = flippedFilter(op, operands[1], m.groups, {p[5], p[6]});
    if (!w)
      return std::nullopt;
    operands[1] = w->filter;
    call.dead.append(w->dead);
    bool filterOk = w->copyFrom ? numElements(operands[1]) == sizeW : dense(operands[1], sizeW);
    if (!dense(operands[0], sizeY) || !filterOk || !dense(operands[2], sizeX))
      return std::nullopt;
    if (w->copyFrom)
      operands[1] = makeDenseFilter(*w);
  }
  call.operands = operands;
  return call;
}

/// The dtypes of a matmul or 2-D convolution OP (productDtypes).
std::optional<std::pair<int64_t, int64_t>> forwardDtypes(linalg::LinalgOp op, bool sixteenBit) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp,
           linalg::DepthwiseConv2DNchwChwOp, linalg::Conv2DNgchwGfchwOp>(op.getOperation()) ||
      op->getNumOperands() != 3)
    return std::nullopt;
  Value a = op->getOperand(0), b = op->getOperand(1), c = op->getOperand(2);
  if (!isDense(a) || !isDense(b, elementOf(a)) || !isDense(c))
    return std::nullopt;
  return productDtypes(elementOf(a), elementOf(c), sixteenBit);
}

/// The call of a matmul or forward 2-D convolution OP, up to its
/// accumulate parameter.
std::optional<Call> planForward(linalg::LinalgOp op, bool grouped, bool sixteenBit) {
  if (!op.hasPureBufferSemantics())
    return std::nullopt;
  Call call;
  auto dtypes = forwardDtypes(op, sixteenBit);
  if (!dtypes)
    return std::nullopt;
  std::tie(call.dtype, call.cDtype) = *dtypes;
  SmallVector<Value> operands(op->getOperands());
  if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
    auto t = tcc::matmulTransposes(mm);
    if (!t)
      return std::nullopt;
    ArrayRef<int64_t> a = shapeOf(operands[0]), c = shapeOf(operands[2]);
    call.kind = TCC_LIBRARY_CALL_MATMUL;
    call.params = {1, c[0], c[1], t->first ? a[0] : a[1], t->first, t->second};
    call.operands = operands;
  } else if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation())) {
    auto t = tcc::batchMatmulTransposes(bmm);
    if (!t)
      return std::nullopt;
    ArrayRef<int64_t> a = shapeOf(operands[0]), c = shapeOf(operands[2]);
    call.kind = TCC_LIBRARY_CALL_MATMUL;
    call.params = {c[0], c[1], c[2], t->first ? a[1] : a[2], t->first, t->second};
    call.operands = operands;
  } else if (std::optional<ConvShape> g = convShape(op, operands, grouped)) {
    int64_t pads[4] = {0, 0, 0, 0};
    if (std::optional<PaddedInput> p = paddedInput(op, operands[0])) {
      operands[0] = p->source;
      pads[0] = p->top, pads[1] = p->left, pads[2] = p->bottom, pads[3] = p->right;
      call.dead = p->dead;
      g->h = shapeOf(p->source)[2];
      g->w = shapeOf(p->source)[3];
    }
    SmallVector<int64_t> s, d;
    auto read = [&](auto conv) {
      s = llvm::to_vector(conv.getStrides().template getValues<int64_t>());
      d = llvm::to_vector(conv.getDilations().template getValues<int64_t>());
    };
    if (auto c = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation()))
      read(c);
    else if (auto c = dyn_cast<linalg::DepthwiseConv2DNchwChwOp>(op.getOperation()))
      read(c);
    else
      read(cast<linalg::Conv2DNgchwGfchwOp>(op.getOperation()));
    call.kind = TCC_LIBRARY_CALL_CONV2D;
    call.params = {g->n, g->c, g->h, g->w, g->f, g->kh, g->kw, g->oh, g->ow, s[0], s[1],
                   d[0], d[1], pads[0], pads[1], pads[2], pads[3]};
    call.groups = g->groups;
    call.operands = operands;
  } else {
    return std::nullopt;
  }
  return call;
}

/// A copy of one buffer into another of the same element type through a
/// permutation of their dimensions: a linalg.generic with one input and one
/// output, all loops parallel, the output read with the identity map and
/// the input with PERMUTATION (the input's dimension i is loop
/// PERMUTATION[i]), whose body yields the input element.
bool isPermutationCopy(Operation *op, ArrayRef<unsigned> permutation) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureBufferSemantics() || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic.getNumLoops() != permutation.size() ||
      generic.getNumParallelLoops() != permutation.size())
    return false;
  OpOperand *in = generic.getDpsInputOperand(0), *out = generic.getDpsInitOperand(0);
  MLIRContext *ctx = generic.getContext();
  if (elementOf(in->get()) != elementOf(out->get()) ||
      generic.getMatchingIndexingMap(out) !=
          AffineMap::getMultiDimIdentityMap(unsigned(permutation.size()), ctx) ||
      generic.getMatchingIndexingMap(in) != AffineMap::getPermutationMap(permutation, ctx))
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == generic.getMatchingBlockArgument(in);
}

/// True when nothing uses ROOT (through views) but the ops in KEEP and
/// deallocations.
bool usedOnlyBy(Value root, ArrayRef<Operation *> keep) {
  SmallVector<Value> worklist = {root};
  while (!worklist.empty()) {
    Value buffer = worklist.pop_back_val();
    for (Operation *user : buffer.getUsers()) {
      if (isa<ViewLikeOpInterface>(user))
        llvm::append_range(worklist, user->getResults());
      else if (!isa<memref::DeallocOp>(user) && !llvm::is_contained(keep, user))
        return false;
    }
  }
  return true;
}

/// Moves V's definition, and the views and allocation it is a view of,
/// before AT where they come after it (in AT's block).
void defineBefore(Value v, Operation *at) {
  SmallVector<Operation *> chain;
  for (Operation *def = v.getDefiningOp(); def;) {
    chain.push_back(def);
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    def = view ? view.getViewSource().getDefiningOp() : nullptr;
  }
  for (Operation *def : llvm::reverse(chain))
    if (def->getBlock() == at->getBlock() && at->isBeforeInBlock(def))
      def->moveBefore(at);
}

/// Attention heads as strides instead of copies (abi.h's MATMUL HEADS and
/// INTERLEAVED). The lowering moves heads between [B, T, H, D] (the
/// projections' layout) and [B, H, T, D] (one matrix per head) with
/// transposing copies around the batched products. A batched CALL of OP
/// whose
///   - input (A or B) is all of a buffer that a copy from a dense
///     [B, rows, H, cols] buffer S filled (the last op before OP to touch
///     it) reads S instead, when nothing writes S in between;
///   - result C (overwritten, no epilogue) is all of a fresh buffer whose
///     only reader, the next op to touch it, copies it into a dense
///     [B, rows, H, cols] buffer Y, writes Y instead when nothing touches Y
///     in between (Y's allocation moves before the call); a copy into
///     [B, cols, H, rows] (heads and the matrix transposed, as Q^T dS comes
///     out) makes the call compute C^T = B^T A^T.
/// A copy goes with its last reader. oneDNN's AMX matmul reads and writes
/// these strides at about its dense speed, where a [B, T, 3 H, D]
/// projection's rows would not be (docs/cpu-codegen.md "Attention heads").
void interleaveHeads(linalg::LinalgOp op, Call &call) {
  SmallVector<int64_t> &p = call.params;
  const int64_t batch = p[0];
  if (call.kind != TCC_LIBRARY_CALL_MATMUL || batch == 1 || p[6] != 0 || p[7] != 0)
    return;
  Operation *at = call.at ? call.at : op.getOperation();
  int64_t heads = 0, interleaved = 0;
  // The heads of V, a 4-D [batch / H, H, ROWS, COLS] buffer (the same H for
  // every operand); 0 for another shape.
  auto headsOf = [&](Value v, int64_t rows, int64_t cols) -> int64_t {
    ArrayRef<int64_t> s = shapeOf(v);
    if (s.size() != 4 || s[0] * s[1] != batch || s[2] != rows || s[3] != cols ||
        (heads && s[1] != heads))
      return 0;
    return s[1];
  };
  static constexpr unsigned kInterleave[] = {0, 2, 1, 3}, kTranspose[] = {0, 2, 3, 1};
  // The result first: its transposed form swaps A and B.
  Value c = call.operands[2], cRoot = tcc::viewRoot(c);
  Epilogue views;
  if (Operation *next = nextTouching(at, c, views)) {
    bool plainCopy = isPermutationCopy(next, kInterleave),
         transposed = !plainCopy && isPermutationCopy(next, kTranspose);
    auto copy = dyn_cast<linalg::GenericOp>(next);
    Value from = copy ? copy.getDpsInputOperand(0)->get() : Value(),
          to = copy ? copy.getDpsInitOperand(0)->get() : Value();
    SmallVector<Operation *> keep = {op.getOperation(), next};
    if (call.at)
      keep.push_back(call.at);
    llvm::append_range(keep, call.dead); // C's zero fill
    int64_t h = 0;
    bool fold = (plainCopy || transposed) && tcc::viewRoot(from) == cRoot && isDense(from) &&
                isDense(to) && numElements(from) == numElements(cRoot) &&
                (h = headsOf(from, p[1], p[2])) && usedOnlyBy(cRoot, keep);
    Value yRoot = fold ? tcc::viewRoot(to) : Value();
    fold = fold && yRoot != tcc::viewRoot(call.operands[0]) &&
           yRoot != tcc::viewRoot(call.operands[1]);
    for (Operation *o = at->getNextNode(); fold && o != next; o = o->getNextNode())
      fold = !touches(o, yRoot);
    if (fold) {
      heads = h;
      defineBefore(to, at);
      call.operands[2] = to;
      call.dead.push_back(next);
      interleaved |= TCC_MATMUL_INTERLEAVED_C;
      if (transposed) {
        std::swap(call.operands[0], call.operands[1]);
        std::swap(p[1], p[2]);
        int64_t ta = p[4];
        p[4] = !p[5];
        p[5] = !ta;
      }
    }
  }
  // The inputs: a buffer that a plain interleaving copy filled.
  for (int k = 0; k < 2; ++k) {
    Value x = call.operands[k], root = tcc::viewRoot(x);
    auto alloc = root.getDefiningOp<memref::AllocOp>();
    ArrayRef<int64_t> stored = shapeOf(x);
    if (!alloc || stored.size() != 3 || numElements(x) != numElements(root))
      continue;
    Operation *fill = nullptr;
    for (Operation *prev = op->getPrevNode(); prev && !fill; prev = prev->getPrevNode())
      if (!isa<ViewLikeOpInterface>(prev) && touches(prev, root))
        fill = prev;
    if (!isPermutationCopy(fill, kInterleave))
      continue;
    auto copy = cast<linalg::GenericOp>(fill);
    Value from = copy.getDpsInputOperand(0)->get(), to = copy.getDpsInitOperand(0)->get();
    int64_t h = 0;
    if (tcc::viewRoot(to) != root || numElements(to) != numElements(root) || !isDense(from) ||
        !(h = headsOf(to, stored[1], stored[2])) ||
        writtenBetween(fill, at, tcc::viewRoot(from)) ||
        tcc::viewRoot(from) == tcc::viewRoot(call.operands[2]))
      continue;
    heads = h;
    call.operands[k] = from;
    interleaved |= k == 0 ? TCC_MATMUL_INTERLEAVED_A : TCC_MATMUL_INTERLEAVED_B;
    // The copy goes once this call was its last reader.
    if (usedOnlyBy(root, {fill, op.getOperation()}))
      call.dead.push_back(fill);
  }
  if (!interleaved)
    return;
  if (p.size() == 8)
    p.append({0, TCC_LIBRARY_MATH_EXACT});
  p.append({heads, interleaved});
}

std::optional<Call> planCall(linalg::LinalgOp op, bool grouped, bool sixteenBit,
                             bool interleavedHeads) {
  // Grouped convolutions' gradients too, whatever `grouped` says (which is
  // about forward ones: see its description).
  std::optional<Call> planned;
  if (std::optional<tcc::ConvBackwardMarker> marker = tcc::getConvBackwardMarker(op))
    planned = planBackwardConv(op, *marker, sixteenBit);
  if (!planned)
    planned = planForward(op, grouped, sixteenBit);
  if (!planned)
    return std::nullopt;
  Call &call = *planned;
  SmallVector<Value> &operands = call.operands;
  int64_t accumulate = 1;
  if (Operation *fill = zeroFillBefore(op, operands[2])) {
    call.dead.push_back(fill);
    accumulate = 0;
  }
  call.params.push_back(accumulate);
  // A 16-bit call may write its rounded result itself instead of f32 sums.
  if (call.cDtype && !accumulate)
    if (std::optional<Epilogue> e = matchRounding(op, operands, elementOf(operands[0]))) {
      call.operands[2] = e->output;
      call.cDtype = 0;
      call.at = e->generic;
      call.dead.push_back(e->generic);
      call.dead.append(e->views.rbegin(), e->views.rend());
    }
  if (call.kind != TCC_LIBRARY_CALL_MATMUL) {
    // Appended, and only when needed: a CONV2D of 18 parameters has one
    // group (what older runtimes and the CUDA runtime read); the output's
    // dtype follows the math mode.
    if (call.groups > 1 || call.cDtype)
      call.params.push_back(call.groups);
    if (call.cDtype)
      call.params.append({TCC_LIBRARY_MATH_EXACT, call.cDtype});
    return call;
  }
  // A matmul that overwrites its output may take the elementwise op after
  // it as its epilogue: operands {A, B, Y, bias[, D]}, at the op's place.
  int64_t epilogue = 0;
  if (!accumulate && call.dtype == TCC_DTYPE_F32)
    if (std::optional<Epilogue> e = matchEpilogue(op, call.operands, call.params[2])) {
      epilogue = e->bits;
      call.operands[2] = e->output;
      call.operands.push_back(e->bias);
      if (e->residual)
        call.operands.push_back(e->residual);
      call.at = e->generic;
      call.dead.push_back(e->generic);
      call.dead.append(e->views.rbegin(), e->views.rend());
    }
  call.params.push_back(epilogue);
  if (call.cDtype)
    call.params.append({call.cDtype, TCC_LIBRARY_MATH_EXACT});
  if (interleavedHeads)
    interleaveHeads(op, call);
  return call;
}

/// A library op whose input is a strided view (a filter sliced to the taps
/// that meet the input: tcc's DropPaddingOnlyTaps) would stay generated
/// loops, which read it with the view's strides: the input copied into a
/// dense buffer of its own first (a pass over the view) lets the library
/// run it (a matmul reading a slice of a weight: attention's projection split
/// into Q, K and V). Inputs of f32, and with SIXTEENBIT 16-bit ones.
/// Returns the copies made (undone by the caller when the call still
/// cannot be made).
SmallVector<std::pair<OpOperand *, Value>> densifyInputs(linalg::LinalgOp op, bool sixteenBit) {
  SmallVector<std::pair<OpOperand *, Value>> replaced;
  bool matmul = isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation());
  if ((!matmul && !isa<linalg::Conv2DNchwFchwOp, linalg::DepthwiseConv2DNchwChwOp,
                       linalg::Conv2DNgchwGfchwOp>(op.getOperation())) ||
      !op.hasPureBufferSemantics())
    return replaced;
  OpBuilder b(op);
  DenseMap<Value, Value> copies;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value v = input->get();
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape() || isDense(v))
      continue;
    Type elem = type.getElementType();
    if (!elem.isF32() && (!sixteenBit || (!elem.isBF16() && !elem.isF16())))
      continue;
    Value &copy = copies[v];
    if (!copy) {
      auto dense = MemRefType::get(type.getShape(), type.getElementType());
      copy = memref::AllocOp::create(b, op.getLoc(), dense, b.getI64IntegerAttr(64));
      linalg::CopyOp::create(b, op.getLoc(), v, copy);
    }
    replaced.push_back({input, v});
    input->set(copy);
  }
  return replaced;
}

/// Undoes densifyInputs.
void restoreInputs(ArrayRef<std::pair<OpOperand *, Value>> replaced) {
  SetVector<Value> copies;
  for (auto [input, original] : replaced) {
    copies.insert(input->get());
    input->set(original);
  }
  for (Value copy : copies) {
    for (Operation *user : llvm::make_early_inc_range(copy.getUsers()))
      user->erase(); // the linalg.copy
    copy.getDefiningOp()->erase();
  }
}

/// Appends the TF32 math mode to an f32 CALL (abi.h: a matmul's C dtype
/// and a convolution's groups come first; an f32 call has no output dtype).
void requestTf32(Call &call) {
  if (call.dtype != TCC_DTYPE_F32)
    return;
  if (call.kind == TCC_LIBRARY_CALL_MATMUL) {
    if (call.params.size() == 8)
      call.params.append({0, TCC_LIBRARY_MATH_EXACT});
    call.params[9] = TCC_LIBRARY_MATH_TF32; // before HEADS when it has them
    return;
  }
  if (call.params.size() == 18)
    call.params.push_back(1);
  call.params.push_back(TCC_LIBRARY_MATH_TF32);
}

/// Erases the zero-padded copies that nothing reads any more (their readers
/// became calls that read the unpadded source): allocations used only by
/// their zero fill and the one copy into a subview.
void erasePaddedCopies(func::FuncOp func) {
  SmallVector<memref::AllocOp> allocs;
  func.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  for (memref::AllocOp alloc : allocs) {
    SmallVector<Operation *> dead;
    bool unread = !alloc->use_empty();
    for (Operation *user : alloc->getUsers()) {
      Value source;
      auto sv = dyn_cast<memref::SubViewOp>(user);
      if (Operation *copy = sv ? copyInto(sv, &source) : nullptr)
        dead.append({copy, sv});
      else if (isZeroFillOf(user, alloc.getResult()) || isa<memref::DeallocOp>(user))
        dead.push_back(user);
      else
        unread = false;
    }
    if (!unread)
      continue;
    for (Operation *op : dead)
      op->erase();
    alloc->erase();
  }
}

struct MarkLibraryCallsPass
    : tcc::impl::MarkLibraryCallsPassBase<MarkLibraryCallsPass> {
  using MarkLibraryCallsPassBase::MarkLibraryCallsPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(&getContext());
    int64_t next = 0;
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      SmallVector<linalg::LinalgOp> ops;
      func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
      DenseSet<Operation *> erased; // epilogues taken into calls
      for (linalg::LinalgOp op : ops) {
        if (erased.contains(op))
          continue;
        std::optional<Call> call = planCall(op, grouped, sixteenBit, interleavedHeads);
        if (!call) {
          SmallVector<std::pair<OpOperand *, Value>> copies = densifyInputs(op, sixteenBit);
          if (!copies.empty() && !(call = planCall(op, grouped, sixteenBit, interleavedHeads)))
            restoreInputs(copies);
        }
        if (call && tf32)
          requestTf32(*call);
        if (!call) {
          LLVM_DEBUG({
            if (isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp,
                    linalg::DepthwiseConv2DNchwChwOp, linalg::Conv2DNgchwGfchwOp>(op))
              llvm::dbgs() << "@" << func.getSymName() << ": " << op->getName() << " at "
                           << op.getLoc() << " stays generated code\n";
          });
          continue;
        }
        // One private declaration per call: the operand types differ.
        b.setInsertionPoint(func);
        std::string name = (tcc::libraryCallPrefix + Twine(next++)).str();
        LLVM_DEBUG(llvm::dbgs() << "@" << func.getSymName() << ": " << op->getName() << " at "
                                << op.getLoc() << " -> @" << name << " (kind " << call->kind
                                << ", params " << llvm::interleaved(call->params) << ")"
                                << (call->at ? ", with the epilogue after it" : "") << "\n");
        auto type = b.getFunctionType(ValueRange(call->operands).getTypes(), {});
        auto decl = func::FuncOp::create(b, op.getLoc(), name, type);
        decl.setPrivate();
        b.setInsertionPoint(call->at ? call->at : op.getOperation());
        auto c = func::CallOp::create(b, op.getLoc(), decl, call->operands);
        SmallVector<NamedAttribute> info = {
            b.getNamedAttr("kind", b.getI32IntegerAttr(call->kind)),
            b.getNamedAttr("params", b.getDenseI64ArrayAttr(call->params))};
        if (call->dtype != TCC_DTYPE_F32)
          info.push_back(b.getNamedAttr("dtype", b.getI32IntegerAttr(int32_t(call->dtype))));
        c->setAttr(tcc::attr::libraryCall, b.getDictionaryAttr(info));
        op->erase();
        for (Operation *dead : call->dead) {
          if (!dead->use_empty())
            continue; // a view that something else still reads
          erased.insert(dead);
          dead->erase();
        }
      }
      // Allocations that lost every use (padded copies, a matmul's result
      // that an epilogue now stores elsewhere) go too.
      erasePaddedCopies(func);
      func.walk([](memref::AllocOp alloc) {
        if (alloc->use_empty())
          alloc->erase();
      });
    }
  }
};

} // namespace
