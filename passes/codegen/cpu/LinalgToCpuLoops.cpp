//===- LinalgToCpuLoops.cpp - linalg on buffers to (parallel) loops -------===//
//
// Upstream offers convert-linalg-to-loops (all sequential) and
// convert-linalg-to-parallel-loops (every op parallel, also a 4-element add);
// this pass chooses per op, by its work (iterations times body operations).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/codegen/LinalgPayload.h"

#include "mlir/Analysis/SliceAnalysis.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tcc-linalg-to-cpu-loops"

namespace tcc {
#define GEN_PASS_DEF_LINALGTOCPULOOPSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// Iterations of all loops of OP, or nullopt when a range is dynamic.
std::optional<int64_t> iterationCount(linalg::LinalgOp op) {
  int64_t count = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    if (range != 0 && count > INT64_MAX / range)
      return INT64_MAX;
    count *= range;
  }
  return count;
}

/// OP's work in the units of min-parallel-work: the iterations of all its
/// loops times the operations of its body (at least one; conversions between
/// 16-bit floats and f32 left out), or nullopt when a range is dynamic. A
/// fused elementwise body of thirty operations (batch norm, a residual and a
/// ReLU) or a pooling window unrolled into its body weighs what it costs, not
/// what one add over the same points would.
std::optional<int64_t> workEstimate(linalg::LinalgOp op) {
  std::optional<int64_t> count = iterationCount(op);
  if (!count)
    return std::nullopt;
  // A conversion between a 16-bit float and f32 is nearly free (a shift to
  // widen; one instruction or a few integer ones to round): counting it made
  // a bf16 step fork small kernels that its f32 step runs sequentially.
  auto isSixteenBitConversion = [](Operation &o) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(o))
      return false;
    auto sixteen = [](Type t) { return getElementTypeOrSelf(t).getIntOrFloatBitWidth() == 16; };
    return sixteen(o.getOperand(0).getType()) || sixteen(o.getResult(0).getType());
  };
  int64_t body = std::max<int64_t>(
      1, llvm::count_if(op.getBlock()->without_terminator(),
                        [&](Operation &o) { return !isSixteenBitConversion(o); }));
  return *count > INT64_MAX / body ? INT64_MAX : *count * body;
}

/// Parallel chunks worth having: enough to balance a few dozen threads.
constexpr int64_t kMinParallelIterations = 64;

/// How many of OP's outermost loops to run as one parallel loop: the
/// shortest prefix of its leading parallel dimensions with at least
/// kMinParallelIterations iterations (all of them when none is that long).
/// Only a prefix: collapsing every dimension would make each iteration
/// recover its indices with divisions, and a parallel loop inside a
/// reduction loop would fork once per reduction step.
unsigned parallelPrefix(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned k = 0;
  int64_t product = 1;
  while (k < iterators.size() && iterators[k] == utils::IteratorType::parallel &&
         !ShapedType::isDynamic(ranges[k]) && product < kMinParallelIterations)
    product *= ranges[k++];
  return k;
}

/// OP with its parallel loops moved outermost, each group in its order, when
/// OP is a generic reduction whose innermost loop is a reduction and whose
/// parallel loops do not all lead: batch norm's statistics over NCHW (loops
/// n, c, h, w; c the one parallel loop) become loops c, n, h, w, so that
/// they run as a parallel loop over the channels with register
/// accumulators instead of sequential loops adding into memory. Each
/// output's reduction steps keep their order, and the innermost loop stays
/// the innermost (a reduction whose innermost loop is parallel, a column
/// sum, keeps its order: moving its loop would make the innermost strided).
linalg::LinalgOp parallelLoopsFirst(RewriterBase &rewriter, linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (!generic || op.getNumReductionLoops() == 0 || op.getNumParallelLoops() == 0 ||
      iterators.back() != utils::IteratorType::reduction)
    return op;
  SmallVector<unsigned> order;
  for (auto kind : {utils::IteratorType::parallel, utils::IteratorType::reduction})
    for (auto [d, it] : llvm::enumerate(iterators))
      if (it == kind)
        order.push_back(unsigned(d));
  if (llvm::equal(order, llvm::seq<unsigned>(0, unsigned(order.size()))))
    return op;
  FailureOr<linalg::GenericOp> interchanged = linalg::interchangeGenericOp(rewriter, generic, order);
  return succeeded(interchanged) ? linalg::LinalgOp(*interchanged) : op;
}

/// A max pool (linalg.pooling_nchw_max / pooling_ncw_max) with its window
/// loops moved outside the output's columns: loops n, c, oh, kh, kw, ow
/// instead of n, c, oh, ow, kh, kw. Each output then takes the maximum of its
/// window element by element through memory, the outputs of a row
/// independent of each other, where the window innermost made each output a
/// scalar chain of maxima (zoo resnet18's 3x3 pool: 0.28 -> 0.25 ms in AVX2
/// code, 0.52 -> 0.29 ms in AVX-512 code). LLVM unrolls the short rows
/// rather than vectorize their strided loads. A maximum is exact in any
/// order, so the results do not change.
linalg::LinalgOp windowOutsideColumns(RewriterBase &rewriter, linalg::LinalgOp op) {
  if (!isa<linalg::PoolingNchwMaxOp, linalg::PoolingNcwMaxOp>(op.getOperation()) ||
      !op.hasPureBufferSemantics())
    return op;
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::GenericOp> generic = linalg::generalizeNamedOp(rewriter, op);
  if (failed(generic))
    return op;
  unsigned loops = generic->getNumLoops(), parallel = generic->getNumParallelLoops();
  SmallVector<unsigned> order;
  for (unsigned d = 0; d + 1 < parallel; ++d)
    order.push_back(d);
  for (unsigned d = parallel; d < loops; ++d)
    order.push_back(d);
  order.push_back(parallel - 1);
  FailureOr<linalg::GenericOp> interchanged =
      linalg::interchangeGenericOp(rewriter, *generic, order);
  return succeeded(interchanged) ? linalg::LinalgOp(*interchanged) : linalg::LinalgOp(*generic);
}

/// A reduction whose reduction loops are innermost, as loops that carry the
/// accumulators in registers (scf.for iter_args: one load and one store of
/// each output per output point, not one per reduction step), with
/// reassociation allowed on the combiners so that LLVM vectorizes the
/// innermost loop with several partial sums. The order of the additions is
/// then fixed by the compiled code, not by the thread count.
bool hasAccumulatorForm(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned parallelCount = op.getNumParallelLoops();
  if (op.getNumReductionLoops() == 0 || !op.hasPureBufferSemantics())
    return false;
  for (auto [d, it] : llvm::enumerate(iterators))
    if ((d < parallelCount) != (it == utils::IteratorType::parallel))
      return false; // reductions not innermost: the default order is better
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, [](int64_t r) { return ShapedType::isDynamic(r); }))
    return false;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (op.getMatchingBlockArgument(&init).use_empty())
      return false;
    AffineMap m = op.getMatchingIndexingMap(&init);
    for (unsigned d = parallelCount; d < ranges.size(); ++d)
      if (m.isFunctionOfDim(d))
        return false;
  }
  return true;
}

/// The chunks a full reduction splits its outermost loop into (fewer when
/// that loop is shorter): a constant, so that the order of the sums depends
/// on the shape alone, never on the thread count.
constexpr int64_t kReductionChunks = 64;

/// Whether every output of OP is a scalar (a 0-d map) of f32 or f64 whose
/// one combiner is arith.addf: a sum that may be split into chunks.
bool isScalarFloatSum(linalg::LinalgOp op) {
  for (unsigned i = 0; i < op.getNumDpsInits(); ++i) {
    OpOperand *init = op.getDpsInitOperand(i);
    Type elem = getElementTypeOrSelf(init->get().getType());
    SmallVector<Operation *> combiners;
    if (!(elem.isF32() || elem.isF64()) || op.getMatchingIndexingMap(init).getNumResults() != 0 ||
        !matchReduction(op.getRegionOutputArgs(), i, combiners) || combiners.size() != 1 ||
        !isa<arith::AddFOp>(combiners.front()))
      return false;
  }
  return true;
}

/// A sum of OP (hasAccumulatorForm, no parallel loop, isScalarFloatSum)
/// over its outermost loop split into CHUNKS
/// contiguous ranges: one parallel loop whose iteration sums its range into
/// a partial per output (an alloca), then the partials added to the outputs
/// in chunk order. The sums' order is the shape's, not the thread count's;
/// only the grouping differs from the sequential loop (a gradient norm's
/// per-tensor sums of squares: the 2-thread step's sequential reductions
/// were 3.2 / 5.8 ms of zoo resnet18's bf16 / fp32 step on the Xeon).
/// Returns the parallel loop and the loops inside it.
SmallVector<Operation *> chunkedSum(RewriterBase &rewriter, linalg::LinalgOp op, ValueRange known,
                                    int64_t chunks) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(rewriter, loc, v); };
  Value zero = index(0), one = index(1);
  int64_t per = (ranges[0] + chunks - 1) / chunks;
  chunks = (ranges[0] + per - 1) / per;
  SmallVector<Value> partials;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    Type elem = getElementTypeOrSelf(init.get().getType());
    partials.push_back(memref::AllocaOp::create(rewriter, loc, MemRefType::get({chunks}, elem)));
  }
  SmallVector<Operation *> loops;
  auto par = scf::ParallelOp::create(rewriter, loc, ValueRange{zero}, ValueRange{index(chunks)},
                                     ValueRange{one});
  loops.push_back(par);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(par.getBody());
    Value c = par.getInductionVars()[0];
    Value lo = arith::MulIOp::create(rewriter, loc, c, index(per));
    Value end = arith::AddIOp::create(rewriter, loc, lo, index(per));
    Value hi = arith::MinSIOp::create(rewriter, loc, end, index(ranges[0]));
    SmallVector<Value> lbs(ranges.size(), zero), steps(ranges.size(), one), ubs;
    for (int64_t r : ranges)
      ubs.push_back(index(r));
    lbs[0] = lo;
    ubs[0] = hi;
    // Each partial starts from -0.0, the sum's identity (x + -0.0 = x).
    SmallVector<Value> starts;
    for (Value partial : partials) {
      auto elem = cast<FloatType>(cast<MemRefType>(partial.getType()).getElementType());
      starts.push_back(arith::ConstantOp::create(
          rewriter, loc, rewriter.getFloatAttr(elem, APFloat::getZero(elem.getFloatSemantics(),
                                                                      /*Negative=*/true))));
    }
    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps, starts,
        [&](OpBuilder &nb, Location nl, ValueRange ivs, ValueRange args) {
          return tcc::emitLinalgPayload(nb, nl, op, ivs, args);
        });
    for (auto [partial, value] : llvm::zip(partials, nest.results))
      memref::StoreOp::create(rewriter, loc, value, partial, ValueRange{c});
    for (scf::ForOp f : nest.loops)
      loops.push_back(f);
  }
  // The partials added to the outputs (or to an absorbed fill's constant)
  // in chunk order.
  SmallVector<Value> zeros(ranges.size(), zero);
  SmallVector<Value> outs = tcc::loadLinalgOutputs(rewriter, loc, op, zeros, known);
  auto combine = scf::ForOp::create(
      rewriter, loc, zero, index(chunks), one, outs,
      [&](OpBuilder &b, Location l, Value c, ValueRange acc) {
        SmallVector<Value> next;
        for (auto [partial, a] : llvm::zip(partials, acc))
          next.push_back(arith::AddFOp::create(
              b, l, a, memref::LoadOp::create(b, l, partial, ValueRange{c})));
        scf::YieldOp::create(b, l, next);
      });
  tcc::storeLinalgOutputs(rewriter, loc, op, zeros, combine.getResults());
  rewriter.eraseOp(op);
  return loops;
}

/// Lowers OP (hasAccumulatorForm) so; the accumulators of outputs with a
/// non-null KNOWN value start from it instead of a load (an absorbed fill).
/// With SPLIT, a sum to scalars over an outermost loop of at least two
/// iterations is a chunkedSum. Returns the loops, outermost first.
SmallVector<Operation *> reductionWithAccumulators(RewriterBase &rewriter, linalg::LinalgOp op,
                                                   ValueRange known, bool split) {
  unsigned parallelCount = op.getNumParallelLoops();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // Reassociation on each output's one-op combiner.
  for (unsigned i = 0; i < op.getNumDpsInits(); ++i) {
    SmallVector<Operation *> combiners;
    if (!matchReduction(op.getRegionOutputArgs(), i, combiners) || combiners.size() != 1)
      continue;
    if (auto fm = dyn_cast<arith::ArithFastMathInterface>(combiners.front()))
      combiners.front()->setAttr(
          fm.getFastMathAttrName(),
          arith::FastMathFlagsAttr::get(rewriter.getContext(), arith::FastMathFlags::reassoc |
                                                                   arith::FastMathFlags::contract));
  }
  if (split && parallelCount == 0 && ranges[0] >= 2 && isScalarFloatSum(op))
    return chunkedSum(rewriter, op, known, std::min(ranges[0], kReductionChunks));
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> lbs(ranges.size(), zero), steps(ranges.size(), one), ubs;
  for (int64_t r : ranges)
    ubs.push_back(arith::ConstantIndexOp::create(rewriter, loc, r));
  SmallVector<Operation *> loops;
  auto inner = [&](OpBuilder &b, Location l, ValueRange outerIvs) {
    SmallVector<Value> ivs(outerIvs.begin(), outerIvs.end());
    ivs.resize(ranges.size(), zero);
    SmallVector<Value> outs = tcc::loadLinalgOutputs(b, l, op, ivs, known);
    scf::LoopNest nest = scf::buildLoopNest(
        b, l, ArrayRef(lbs).drop_front(parallelCount), ArrayRef(ubs).drop_front(parallelCount),
        ArrayRef(steps).drop_front(parallelCount), outs,
        [&](OpBuilder &nb, Location nl, ValueRange reductionIvs, ValueRange args) {
          SmallVector<Value> all(ivs);
          for (auto [k, iv] : llvm::enumerate(reductionIvs))
            all[parallelCount + k] = iv;
          return tcc::emitLinalgPayload(nb, nl, op, all, args);
        });
    tcc::storeLinalgOutputs(b, l, op, ivs, nest.results);
    for (scf::ForOp f : nest.loops)
      loops.push_back(f);
  };
  if (parallelCount == 0) {
    inner(rewriter, loc, {});
  } else {
    scf::LoopNest outer = scf::buildLoopNest(
        rewriter, loc, ArrayRef(lbs).take_front(parallelCount),
        ArrayRef(ubs).take_front(parallelCount), ArrayRef(steps).take_front(parallelCount),
        [&](OpBuilder &b, Location l, ValueRange ivs) { inner(b, l, ivs); });
    SmallVector<Operation *> all(outer.loops.begin(), outer.loops.end());
    all.append(loops.begin(), loops.end());
    loops = std::move(all);
  }
  rewriter.eraseOp(op);
  return loops;
}

/// Replaces the K outermost loops of the perfect nest LOOPS by one
/// scf.parallel; returns false (leaving the nest alone) when a loop bound is
/// computed inside the nest.
bool parallelizeOuterLoops(RewriterBase &rewriter, ArrayRef<Operation *> loops,
                           unsigned k) {
  SmallVector<scf::ForOp> fors;
  for (unsigned i = 0; i < k; ++i) {
    auto f = dyn_cast<scf::ForOp>(loops[i]);
    if (!f || f.getNumRegionIterArgs() != 0)
      return false;
    fors.push_back(f);
  }
  scf::ForOp outer = fors.front(), inner = fors.back();
  SmallVector<Value> lbs, ubs, steps;
  for (scf::ForOp f : fors) {
    for (Value v : {f.getLowerBound(), f.getUpperBound(), f.getStep()})
      if (outer->isAncestor(v.getParentRegion()->getParentOp()))
        return false;
    lbs.push_back(f.getLowerBound());
    ubs.push_back(f.getUpperBound());
    steps.push_back(f.getStep());
  }
  rewriter.setInsertionPoint(outer);
  auto par = scf::ParallelOp::create(rewriter, outer.getLoc(), lbs, ubs, steps);
  for (unsigned i = 0; i + 1 < k; ++i)
    rewriter.replaceAllUsesWith(fors[i].getInductionVar(), par.getInductionVars()[i]);
  Block *body = inner.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, par.getBody()->getTerminator(),
                             ValueRange{par.getInductionVars()[k - 1]});
  rewriter.eraseOp(outer);
  return true;
}

/// The largest stride of an input's innermost dimension that a vectorized
/// loop reads as whole rows and deinterleaves (a max pool's stride-2
/// windows, a strided slice): a wider one reads more bytes than it uses.
constexpr int64_t kMaxDeinterleavedStride = 4;

/// A 1-D vector read of a memref whose innermost stride S is static and
/// above 1 (a strided input that vectorWidth admits) as one unit-stride
/// read of the S * (N - 1) + 1 elements it spans, through a view of the
/// same buffer, and a shuffle that keeps every S-th: a wide load and a
/// deinterleave instead of N scalar loads and inserts.
struct StridedRowRead : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<MemRefType>(read.getBase().getType());
    VectorType vector = read.getVectorType();
    if (!type || vector.getRank() != 1 || read.getMask() || !read.getPermutationMap().isMinorIdentity() ||
        !read.getInBounds()[0])
      return failure();
    int64_t offset;
    SmallVector<int64_t> strides;
    if (failed(type.getStridesAndOffset(strides, offset)) || strides.empty() ||
        ShapedType::isDynamic(strides.back()) || strides.back() <= 1 ||
        strides.back() > kMaxDeinterleavedStride)
      return failure();
    int64_t stride = strides.back(), lanes = vector.getNumElements();
    int64_t span = stride * (lanes - 1) + 1;
    Location loc = read.getLoc();
    // The element the read starts at, as a linear index into the buffer.
    auto metadata = memref::ExtractStridedMetadataOp::create(rewriter, loc, read.getBase());
    Value start = metadata.getOffset();
    for (auto [index, dimStride] : llvm::zip(read.getIndices(), metadata.getStrides()))
      start = arith::AddIOp::create(rewriter, loc, start,
                                    arith::MulIOp::create(rewriter, loc, index, dimStride));
    auto row = memref::ReinterpretCastOp::create(
        rewriter, loc, MemRefType::get({span}, type.getElementType(),
                                       StridedLayoutAttr::get(getContext(), ShapedType::kDynamic, {1})),
        metadata.getBaseBuffer(), OpFoldResult(start), ArrayRef<OpFoldResult>{rewriter.getIndexAttr(span)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    auto whole = vector::TransferReadOp::create(
        rewriter, loc, VectorType::get({span}, vector.getElementType()), row, ValueRange{zero},
        read.getPadding(), ArrayRef<bool>{true});
    SmallVector<int64_t> every;
    for (int64_t i = 0; i < lanes; ++i)
      every.push_back(i * stride);
    rewriter.replaceOpWithNewOp<vector::ShuffleOp>(read, whole, whole, every);
    return success();
  }
};

/// SIMD lanes of a vector register of BITS (AVX2: 256, AVX-512: 512) for
/// ELEMENT, or 0.
int64_t vectorLanes(Type element, int64_t bits) {
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() < 8)
    return 0;
  return bits / element.getIntOrFloatBitWidth();
}

/// The vector width for OP's innermost loop, or 0 when the op stays scalar:
/// only elementwise generics (every loop parallel) whose innermost loop walks
/// the innermost dimension of every operand that it indexes (unit stride),
/// with a static extent that is a multiple of the width.
int64_t vectorWidth(linalg::LinalgOp op, int64_t bits) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || op.getNumReductionLoops() != 0 || op.getNumLoops() == 0)
    return 0;
  // A body of arith / math on its block arguments only: loads from other
  // buffers (gathers, resizes) stay scalar.
  for (Operation &inner : generic.getBody()->without_terminator())
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      return 0;
  if (failed(linalg::vectorizeOpPrecondition(op)))
    return 0;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned inner = op.getNumLoops() - 1;
  // The lanes of the narrowest operand of 16 bits or more (bf16: 16 floats
  // over two AVX2 registers); bytes (masks read as bytes) only when nothing
  // is wider.
  int64_t lanes = 0, byteLanes = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    if (operand.get().getType().isIntOrIndexOrFloat())
      continue; // a scalar: broadcast
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape())
      return 0;
    int64_t l = vectorLanes(type.getElementType(), bits);
    if (l == 0)
      return 0;
    if (type.getElementType().getIntOrFloatBitWidth() == 8)
      byteLanes = l;
    else
      lanes = std::max(lanes, l);
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation())
      return 0;
    // Uses the innermost loop: it must be the operand's last dimension, and
    // that dimension contiguous, or for an input a short static stride
    // (read whole and deinterleaved: StridedRowRead).
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      if (map.getDimPosition(r) != inner)
        continue;
      int64_t offset;
      SmallVector<int64_t> strides;
      if (r + 1 != map.getNumResults() || failed(type.getStridesAndOffset(strides, offset)))
        return 0;
      bool input = op.isDpsInput(&operand);
      if (strides.back() != 1 &&
          !(input && strides.back() > 1 && strides.back() <= kMaxDeinterleavedStride))
        return 0;
    }
  }
  if (lanes == 0)
    lanes = byteLanes;
  if (lanes == 0 || ShapedType::isDynamic(ranges[inner]))
    return 0;
  // With 512-bit vectors, an extent that only 256-bit ones divide (24, 40
  // channels) takes those instead of staying scalar.
  for (; lanes > 0 && bits >= 256; lanes /= 2, bits /= 2)
    if (ranges[inner] % lanes == 0)
      return lanes;
  return 0;
}

/// Innermost extents below this (or not a multiple of the vector width) are
/// worth widening by merging the loops around them.
constexpr int64_t kShortInnerLoop = 64;

/// Whether OP's innermost loop is static and short in that sense.
bool shortInnerLoop(linalg::LinalgOp op, int64_t bits) {
  int64_t range = op.getStaticLoopRanges().back();
  return !ShapedType::isDynamic(range) &&
         (range < kShortInnerLoop ||
          range % vectorLanes(Float32Type::get(op->getContext()), bits) != 0);
}

/// OP's innermost loops merged into one where they walk contiguous memory
/// in every operand: an elementwise op or a full reduction over a 3x3
/// filter (an optimizer update, a gradient norm) is one loop over all of
/// its elements, vectorized, instead of an innermost loop of 3 that stays
/// scalar. The loops merged are the trailing ones of one iterator type
/// that every indexing map takes in order and whose operands' buffers are
/// contiguous across them (memref.collapse_shape views; no copy). Only
/// where the innermost loop is short or not a multiple of the vector
/// width, so that row-wise kernels keep their shape. Each point is computed
/// as before, in the same order; a reduction's order is the compiled code's
/// (reassociated, like every reduction with register accumulators).
/// Returns the op to lower: the merged one, or OP itself.
linalg::LinalgOp mergeInnerLoops(RewriterBase &rewriter, linalg::LinalgOp op, int64_t bits) {
  // A fill or a map (a zero-padded copy's zeros) as the generic it is, so
  // that it merges too: one loop that LLVM turns into a memset.
  if (!op.hasPureBufferSemantics() || op.getNumLoops() < 2 || !shortInnerLoop(op, bits))
    return op;
  if (isa<linalg::FillOp, linalg::MapOp>(op.getOperation())) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> general = linalg::generalizeNamedOp(rewriter, op);
    if (succeeded(general))
      op = cast<linalg::LinalgOp>(general->getOperation());
  }
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !generic.getBody()->getOps<linalg::IndexOp>().empty())
    return op;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, [](int64_t r) { return ShapedType::isDynamic(r); }))
    return op;
  unsigned inner = op.getNumLoops() - 1;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps, [](AffineMap m) { return m.isProjectedPermutation(); }))
    return op;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  // Does merging loops [first, inner] keep every operand a plain view?
  auto mergeable = [&](unsigned first) {
    ReassociationIndices group = llvm::to_vector(llvm::seq<int64_t>(first, inner + 1));
    if (!linalg::areDimSequencesPreserved(maps, {group}))
      return false;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type) {
        if (isa<ShapedType>(operand.get().getType()))
          return false;
        continue; // a scalar (a fill's value)
      }
      AffineMap map = op.getMatchingIndexingMap(&operand);
      SmallVector<ReassociationIndices> dims;
      for (unsigned r = 0; r < map.getNumResults(); ++r) {
        unsigned d = map.getDimPosition(r);
        bool inGroup = d >= first;
        if (inGroup && !dims.empty() && map.getDimPosition(r - 1) >= first)
          dims.back().push_back(r);
        else
          dims.push_back({int64_t(r)});
      }
      if (map.getNumResults() != 0 && !memref::CollapseShapeOp::isGuaranteedCollapsible(type, dims))
        return false;
    }
    return true;
  };
  unsigned first = inner;
  while (first > 0 && iterators[first - 1] == iterators[inner] && mergeable(first - 1))
    --first;
  if (first == inner)
    return op;
  ReassociationIndices group = llvm::to_vector(llvm::seq<int64_t>(first, inner + 1));
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> merged =
      linalg::collapseOpIterationDims(op, {group}, rewriter);
  if (failed(merged))
    return op;
  rewriter.eraseOp(op); // on buffers: no results to replace
  // The merged views as reinterpret casts (static offset, sizes, strides):
  // the alias folding below would fold a collapse_shape into each load,
  // with a division per index to recover the original coordinates.
  linalg::LinalgOp result = merged->collapsedOp;
  for (OpOperand &operand : result->getOpOperands()) {
    auto collapse = operand.get().getDefiningOp<memref::CollapseShapeOp>();
    if (!collapse)
      continue;
    MemRefType type = collapse.getResultType();
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        llvm::any_of(strides, [](int64_t x) { return ShapedType::isDynamic(x); }))
      continue;
    rewriter.setInsertionPoint(collapse);
    // A row of a tcc-fuse-rows loop starts where its subview says.
    OpFoldResult start = rewriter.getIndexAttr(offset);
    if (ShapedType::isDynamic(offset))
      start = memref::ExtractStridedMetadataOp::create(rewriter, collapse.getLoc(),
                                                       collapse.getSrc())
                  .getOffset();
    Value view = memref::ReinterpretCastOp::create(
        rewriter, collapse.getLoc(), type, collapse.getSrc(), start,
        getAsIndexOpFoldResult(rewriter.getContext(), type.getShape()),
        getAsIndexOpFoldResult(rewriter.getContext(), strides));
    rewriter.replaceAllUsesWith(collapse.getResult(), view);
    rewriter.eraseOp(collapse);
  }
  return result;
}

/// The 0-d buffers OP reads (a random op's Philox seed and counter) become
/// scalar operands loaded once before its loops: a load in the body runs at
/// every point, where the stores to the outputs keep LLVM from hoisting it
/// (and the vectorizer takes scalars, not 0-d buffers). A buffer that is
/// also an output stays.
void loadScalarInputs(RewriterBase &rewriter, linalg::LinalgOp op) {
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || type.getRank() != 0 || llvm::is_contained(op.getDpsInits(), input->get()))
      continue;
    rewriter.setInsertionPoint(op);
    Value scalar = memref::LoadOp::create(rewriter, op.getLoc(), input->get());
    rewriter.modifyOpInPlace(op, [&] { input->set(scalar); });
  }
}

/// Byte views of boolean buffers. A memref of i1 holds one byte per element
/// (LLVM's i1 takes a byte in memory), but a vector of i1 is bit-packed, so
/// a vector of booleans cannot be loaded from or stored to it: a generic
/// with an i1 operand (a causal mask, a dropout mask, a comparison's
/// result) stayed scalar loops. The same bytes viewed as i8 vectorize; the
/// body converts (trunci / extui), which leaves every byte 0 or 1 as a
/// scalar i1 store writes it. A twin is built right after the op that
/// defines the boolean view, through the view chains planned buffers and
/// constants have (memref.view of the arena or state, subviews, reshapes,
/// casts, get_global of a boolean constant); anything else has none.
class ByteViews {
public:
  explicit ByteViews(ModuleOp module) : module_(module) {}

  /// The i8 twin of the boolean buffer V, or null.
  Value get(RewriterBase &rewriter, Value v) {
    auto it = twins_.find(v);
    if (it != twins_.end())
      return it->second;
    Value twin = build(rewriter, v);
    twins_[v] = twin;
    return twin;
  }

private:
  static MemRefType bytesOf(MemRefType type) {
    return MemRefType::get(type.getShape(), IntegerType::get(type.getContext(), 8),
                           type.getLayout(), type.getMemorySpace());
  }

  Value build(RewriterBase &rewriter, Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumResults() != 1)
      return {};
    auto type = cast<MemRefType>(v.getType());
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointAfter(def);
    Location loc = def->getLoc();
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      if (!cast<MemRefType>(view.getSource().getType()).getElementType().isInteger(8))
        return {};
      return memref::ViewOp::create(rewriter, loc, bytesOf(type), view.getSource(),
                                    view.getByteShift(), view.getSizes());
    }
    if (auto global = dyn_cast<memref::GetGlobalOp>(def)) {
      memref::GlobalOp bytes = byteGlobal(rewriter, global);
      if (!bytes)
        return {};
      return memref::GetGlobalOp::create(rewriter, loc, bytes.getType(), bytes.getSymName());
    }
    // Views: the same op on the source's twin, its result type with i8.
    if (!isa<memref::SubViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
             memref::ReinterpretCastOp, memref::CastOp>(def))
      return {};
    Value source = def->getOperand(0);
    Value sourceTwin = get(rewriter, source);
    if (!sourceTwin)
      return {};
    IRMapping map;
    map.map(source, sourceTwin);
    Operation *clone = rewriter.clone(*def, map);
    clone->getResult(0).setType(bytesOf(type));
    return clone->getResult(0);
  }

  /// An i8 copy of the boolean constant GLOBAL's module global, made once.
  memref::GlobalOp byteGlobal(RewriterBase &rewriter, memref::GetGlobalOp get) {
    auto global = module_.lookupSymbol<memref::GlobalOp>(get.getNameAttr());
    if (!global || !global.getConstant())
      return {};
    auto value = dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr());
    if (!value)
      return {};
    std::string name = (global.getSymName() + "_bytes").str();
    if (auto existing = module_.lookupSymbol<memref::GlobalOp>(name))
      return existing;
    auto i8 = IntegerType::get(rewriter.getContext(), 8);
    SmallVector<APInt> bytes;
    for (APInt bit : value.getValues<APInt>())
      bytes.push_back(bit.zext(8));
    auto tensorType = RankedTensorType::get(value.getType().getShape(), i8);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(global);
    return memref::GlobalOp::create(
        rewriter, global.getLoc(), rewriter.getStringAttr(name), global.getSymVisibilityAttr(),
        TypeAttr::get(bytesOf(global.getType())), DenseElementsAttr::get(tensorType, bytes),
        /*constant=*/rewriter.getUnitAttr(), global.getAlignmentAttr());
  }

  ModuleOp module_;
  DenseMap<Value, Value> twins_;
};

/// OP's boolean buffers become their byte views (ByteViews), its body
/// converting: inputs and outputs read as i8 and truncated to i1, results
/// extended back to i8. All of them or none (when one has no twin).
void readBooleansAsBytes(RewriterBase &rewriter, linalg::GenericOp op, ByteViews &views) {
  SmallVector<std::pair<OpOperand *, Value>> twins;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isInteger(1))
      continue;
    Value twin = views.get(rewriter, operand.get());
    if (!twin)
      return;
    twins.push_back({&operand, twin});
  }
  if (twins.empty())
    return;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Type i1 = rewriter.getI1Type(), i8 = rewriter.getIntegerType(8);
  rewriter.modifyOpInPlace(op, [&] {
    for (auto [operand, twin] : twins) {
      operand->set(twin);
      BlockArgument arg = body.getArgument(operand->getOperandNumber());
      arg.setType(i8);
      rewriter.setInsertionPointToStart(&body);
      Value bit = arith::TruncIOp::create(rewriter, op.getLoc(), i1, arg);
      arg.replaceAllUsesExcept(bit, bit.getDefiningOp());
      if (op.isDpsInit(operand)) {
        OpOperand &yielded = yield->getOpOperand(operand->getOperandNumber() - op.getNumDpsInputs());
        rewriter.setInsertionPoint(yield);
        yielded.set(arith::ExtUIOp::create(rewriter, op.getLoc(), i8, yielded.get()));
      }
    }
  });
}

/// Tiles OP to one vector of WIDTH along its innermost loop and vectorizes
/// the tile (linalg::vectorize); returns the tile loops, outermost first.
FailureOr<SmallVector<Operation *>> tileAndVectorize(RewriterBase &rewriter, linalg::LinalgOp op,
                                                     int64_t width) {
  SmallVector<OpFoldResult> sizes(op.getNumLoops(), rewriter.getIndexAttr(1));
  sizes.back() = rewriter.getIndexAttr(width);
  scf::SCFTilingOptions options;
  options.setTileSizes(sizes);
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled) || tiled->tiledOps.size() != 1)
    return failure();
  rewriter.eraseOp(op);
  Operation *tile = tiled->tiledOps.front();
  rewriter.setInsertionPoint(tile);
  if (failed(linalg::vectorize(rewriter, tile)))
    return failure();
  rewriter.eraseOp(tile);
  SmallVector<Operation *> loops;
  for (LoopLikeOpInterface loop : tiled->loops)
    loops.push_back(loop.getOperation());
  return loops;
}

struct LinalgToCpuLoopsPass
    : tcc::impl::LinalgToCpuLoopsPassBase<LinalgToCpuLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp &op : ops)
      if (!op->getParentOfType<scf::ParallelOp>())
        op = windowOutsideColumns(rewriter, parallelLoopsFirst(rewriter, op));
    // Reductions lowered with register accumulators absorb the fill of
    // their outputs (the accumulators start from its constant): one pass
    // over memory and one loop nest fewer per reduction.
    DenseMap<Operation *, SmallVector<Value>> known;
    DenseSet<Operation *> absorbed;
    for (linalg::LinalgOp op : ops) {
      if (!hasAccumulatorForm(op))
        continue;
      SmallVector<linalg::FillOp> fills = tcc::initFills(op);
      for (linalg::FillOp fill : fills)
        if (fill)
          absorbed.insert(fill);
      known[op] = tcc::fillValues(fills);
    }
    llvm::erase_if(ops, [&](linalg::LinalgOp op) { return absorbed.contains(op); });
    for (Operation *fill : absorbed)
      rewriter.eraseOp(fill);
    ByteViews byteViews(getOperation()->getParentOfType<ModuleOp>());
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op->emitError("linalg op on tensors after bufferization");
        return signalPassFailure();
      }
      loadScalarInputs(rewriter, op);
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
        readBooleansAsBytes(rewriter, generic, byteViews);
      // Inside a parallel loop (a run of tcc-fuse-rows) the op never forks;
      // its elementwise ops merge their loops too (a row of a 3x3 filter's
      // update: one loop over the row's elements).
      bool nested = op->getParentOfType<scf::ParallelOp>() != nullptr;
      if (!nested || op.getNumReductionLoops() == 0) {
        linalg::LinalgOp merged = mergeInnerLoops(rewriter, op, vectorBits);
        if (merged != op) {
          auto it = known.find(op);
          if (it != known.end()) {
            SmallVector<Value> values = it->second;
            known.erase(it);
            known[merged] = std::move(values);
          }
          op = merged;
        }
      }
      std::optional<int64_t> work = workEstimate(op);
      unsigned prefix = work && *work >= minParallelWork && !nested ? parallelPrefix(op) : 0;
      LLVM_DEBUG(llvm::dbgs() << op->getName() << " at " << op.getLoc() << " ("
                              << (work ? std::to_string(*work) : std::string("?"))
                              << " work): ");
      SmallVector<Operation *> loops;
      [[maybe_unused]] StringRef how = "scalar loops"; // for the debug output
      if (int64_t width = vectorize ? vectorWidth(op, vectorBits) : 0) {
        how = "vectors";
        FailureOr<SmallVector<Operation *>> tiled = tileAndVectorize(rewriter, op, width);
        if (failed(tiled)) {
          op->emitError("cannot vectorize");
          return signalPassFailure();
        }
        loops = std::move(*tiled);
      } else if (hasAccumulatorForm(op)) {
        how = "register accumulators";
        bool split = work && *work >= minParallelWork && !nested;
        loops = reductionWithAccumulators(rewriter, op, known.lookup(op), split);
      } else {
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::LinalgLoops> scalar = linalg::linalgOpToLoops(rewriter, op);
        if (failed(scalar)) {
          op->emitError("cannot lower to loops");
          return signalPassFailure();
        }
        rewriter.eraseOp(op);
        loops.assign(scalar->begin(), scalar->end());
      }
      [[maybe_unused]] bool parallel = prefix > 0 && loops.size() >= prefix &&
                                       parallelizeOuterLoops(rewriter, loops, prefix);
      LLVM_DEBUG(llvm::dbgs() << how << ", "
                              << (parallel ? "parallel over " + std::to_string(prefix) + " loops"
                                           : std::string("sequential"))
                              << "\n");
    }
    // Vectors of one row: drop the unit dimensions, read through the
    // subviews directly, and turn transfers into plain vector loads/stores.
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedRowRead>(&getContext());
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    memref::populateFoldMemRefAliasOpPatterns(patterns);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, &getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
