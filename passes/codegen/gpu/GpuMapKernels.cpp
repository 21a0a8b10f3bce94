//===- GpuMapKernels.cpp - every buffer op of a planned entry as a gpu.launch -===//
//
// After the memory plan, an entry point is a straight sequence of linalg ops
// on views of the arena and the state, library calls and a few loops. On a
// GPU each op becomes one `gpu.launch` with a fixed geometry (all shapes are
// static):
//
//   - thread per output point: the op's parallel loops are linearized over
//     blocks of 256 threads; each thread runs the reduction loops (if any)
//     with the accumulators in registers and stores once; an elementwise op
//     whose buffers along the innermost loop are contiguous and 16-byte
//     aligned gives each thread 4 innermost points instead (8 when a buffer
//     has 16-bit elements), with one vector access per buffer
//     (ld.global.v4 / st.global.v4 in PTX);
//   - block reduction: a reduction whose combiner is one arith op and whose
//     output points are few, or whose reduction is the innermost loop, gets
//     one block per output point: the 256 threads stride over the reduction,
//     combine through warp shuffles (`gpu.shuffle xor`) and one word per warp
//     of shared memory; no atomics, so results do not depend on scheduling;
//   - anything else that touches memory (the loops of a scatter, whose
//     iterations may collide) runs as one thread, in order.
//
// Every value a kernel uses is rematerialized inside it (constants, views
// of views, index arithmetic) except the planned buffers themselves: each
// `memref.view` of the arena or the state at a constant offset is a kernel
// parameter (a bare pointer after outlining), so the offset stays on the
// host and equal ops on different buffers (a transformer's layers, the entry
// points repeating the forward) are one kernel (tcc-gpu-merge-modules); the
// split reductions' scratch after the arena's plan is such a view too.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "dialects/ByteSizes.h"
#include "passes/codegen/LinalgPayload.h"

#include "dialects/TccNames.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace tcc {
#define GEN_PASS_DEF_GPUMAPKERNELSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

constexpr int64_t kThreads = 256;
constexpr int64_t kWarp = 32;
/// Split reductions: at most this many blocks (and partial results) in all,
/// and at least this many reduction points per block.
constexpr int64_t kMaxSplit = 1024;
constexpr int64_t kSplitChunk = 16384;
/// Innermost points per thread of vectorized elementwise kernels: 16 bytes
/// of f32, the widest global access (ld.global.v4); kWideVector when a
/// vectorized buffer has 16-bit (or narrower) elements: 16 bytes of bf16 /
/// f16 (ld.global.v4.b32 of packed pairs), and two 16-byte accesses for an
/// f32 buffer of the same kernel (a cast's wide side).
constexpr int64_t kVector = 4, kWideVector = 8;

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// LIN (< the product of RANGES) split into indices over RANGES
/// (row-major). Below 2^31 points the divisions are 32-bit: a 64-bit
/// division by a constant costs several times as many instructions on a GPU.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value lin,
                               ArrayRef<int64_t> ranges) {
  int64_t total = 1;
  for (int64_t r : ranges)
    total *= r;
  bool narrow = total <= (int64_t(1) << 31) && ranges.size() > 1;
  Type i32 = b.getI32Type();
  Value x = narrow ? arith::IndexCastUIOp::create(b, loc, i32, lin) : lin;
  auto constant = [&](int64_t v) -> Value {
    return narrow ? Value(arith::ConstantIntOp::create(b, loc, i32, v)) : cIndex(b, loc, v);
  };
  SmallVector<Value> ivs(ranges.size());
  int64_t stride = 1;
  for (int64_t i = int64_t(ranges.size()) - 1; i >= 0; --i) {
    Value q = stride == 1 ? x : arith::DivUIOp::create(b, loc, x, constant(stride));
    ivs[i] = i == 0 ? q : arith::RemUIOp::create(b, loc, q, constant(ranges[i]));
    if (narrow)
      ivs[i] = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), ivs[i]);
    stride *= ranges[i];
  }
  return ivs;
}

/// The reduction kind of a one-op combiner, if it has an identity we know.
std::optional<arith::AtomicRMWKind> combinerKind(Operation *op) {
  using K = arith::AtomicRMWKind;
  return llvm::TypeSwitch<Operation *, std::optional<K>>(op)
      .Case([](arith::AddFOp) { return K::addf; })
      .Case([](arith::MulFOp) { return K::mulf; })
      .Case([](arith::MaximumFOp) { return K::maximumf; })
      .Case([](arith::MinimumFOp) { return K::minimumf; })
      .Case([](arith::MaxNumFOp) { return K::maxnumf; })
      .Case([](arith::MinNumFOp) { return K::minnumf; })
      .Case([](arith::AddIOp) { return K::addi; })
      .Case([](arith::MulIOp) { return K::muli; })
      .Case([](arith::MaxSIOp) { return K::maxs; })
      .Case([](arith::MinSIOp) { return K::mins; })
      .Case([](arith::MaxUIOp) { return K::maxu; })
      .Case([](arith::MinUIOp) { return K::minu; })
      .Case([](arith::OrIOp) { return K::ori; })
      .Case([](arith::AndIOp) { return K::andi; })
      .Default([](Operation *) { return std::nullopt; });
}

/// A reduction that runs as one block per output point (see
/// KernelMapper::mapBlockReduction): single output, f32 or i32, a one-op
/// combiner with a known identity. The pieces every launch of it builds:
/// the threads' folds, the block's combination and thread 0's store.
struct BlockReduction {
  linalg::LinalgOp op;
  ArrayRef<int64_t> ranges;
  ArrayRef<unsigned> parallel, reduction;
  int64_t points, reduced;
  Operation *combiner;
  arith::AtomicRMWKind kind;
  Type element;
  Location loc;
  SmallVector<int64_t> parallelRanges, reductionRanges;
  /// The value of the fill the reduction absorbs, or null: then the output's
  /// old value is loaded.
  Value initValue;

  /// OP when it is such a reduction: few points, or the reduction innermost
  /// (contiguous for row-major operands) and long.
  static std::optional<BlockReduction> match(linalg::LinalgOp op, ArrayRef<int64_t> ranges,
                                             ArrayRef<unsigned> parallel,
                                             ArrayRef<unsigned> reduction, int64_t points,
                                             int64_t reduced) {
    if (reduction.empty() || op.getNumDpsInits() != 1 || reduced < kWarp)
      return std::nullopt;
    bool innermost = reduction.back() == ranges.size() - 1;
    if (!(points < 8192 || (innermost && reduced >= 128)))
      return std::nullopt;
    Type type = op.getDpsInitOperand(0)->get().getType();
    Type element = cast<MemRefType>(type).getElementType();
    if (!element.isF32() && !element.isInteger(32))
      return std::nullopt;
    SmallVector<Operation *> combiners;
    Value combined = matchReduction(op.getRegionOutputArgs(), 0, combiners);
    if (!combined || combiners.size() != 1)
      return std::nullopt;
    Operation *combiner = combiners.front();
    std::optional<arith::AtomicRMWKind> kind = combinerKind(combiner);
    if (!kind)
      return std::nullopt;
    BlockReduction r{op,      ranges,   parallel, reduction,   points,
                     reduced, combiner, *kind,    element,     op.getLoc(),
                     /*parallelRanges=*/{}, /*reductionRanges=*/{}, /*initValue=*/{}};
    for (unsigned d : parallel)
      r.parallelRanges.push_back(ranges[d]);
    for (unsigned d : reduction)
      r.reductionRanges.push_back(ranges[d]);
    return r;
  }

  /// The combiner applied to X and Y.
  Value combine(OpBuilder &cb, Value x, Value y) {
    IRMapping m;
    m.map(combiner->getOperand(0), x);
    m.map(combiner->getOperand(1), y);
    return cb.clone(*combiner, m)->getResult(0);
  }

  /// The loop indices of parallel point POINT (the reduction ones null).
  SmallVector<Value> parallelIvs(OpBuilder &b, Value point) {
    SmallVector<Value> ivs(ranges.size());
    for (auto [d, iv] : llvm::zip(parallel, delinearize(b, loc, point, parallelRanges)))
      ivs[d] = iv;
    return ivs;
  }

  /// Combines every thread's PARTIAL within the block of LAUNCH, through
  /// warp shuffles and one word per warp of shared memory; BODY runs in
  /// thread 0 with the block's total.
  void blockReduce(OpBuilder &rb, gpu::LaunchOp launch, Value partial,
                   function_ref<void(OpBuilder &, Value)> body) {
    Value scratch = launch.getWorkgroupAttributions().front();
    Value tid = launch.getThreadIds().x;
    Value identity = arith::getIdentityValue(kind, element, rb, loc);
    auto warpReduce = [&](OpBuilder &wb, Value v) {
      for (int32_t offset = kWarp / 2; offset >= 1; offset /= 2) {
        auto shuffle = gpu::ShuffleOp::create(wb, loc, v, offset, int32_t(kWarp),
                                              gpu::ShuffleMode::XOR);
        v = combine(wb, v, shuffle.getShuffleResult());
      }
      return v;
    };
    partial = warpReduce(rb, partial);
    Value lane = arith::RemUIOp::create(rb, loc, tid, cIndex(rb, loc, kWarp));
    Value warp = arith::DivUIOp::create(rb, loc, tid, cIndex(rb, loc, kWarp));
    Value zero = cIndex(rb, loc, 0);
    Value isLane0 = arith::CmpIOp::create(rb, loc, arith::CmpIPredicate::eq, lane, zero);
    auto writeIf = scf::IfOp::create(rb, loc, isLane0, false);
    {
      OpBuilder::InsertionGuard guard(rb);
      rb.setInsertionPointToStart(writeIf.thenBlock());
      memref::StoreOp::create(rb, loc, partial, scratch, ValueRange{warp});
    }
    gpu::BarrierOp::create(rb, loc);
    Value isWarp0 = arith::CmpIOp::create(rb, loc, arith::CmpIPredicate::eq, warp, zero);
    auto finalIf = scf::IfOp::create(rb, loc, isWarp0, false);
    OpBuilder::InsertionGuard guard(rb);
    rb.setInsertionPointToStart(finalIf.thenBlock());
    Value hasPartial = arith::CmpIOp::create(rb, loc, arith::CmpIPredicate::ult, lane,
                                             cIndex(rb, loc, kThreads / kWarp));
    auto read = scf::IfOp::create(rb, loc, TypeRange{element}, hasPartial, true);
    {
      OpBuilder::InsertionGuard g2(rb);
      rb.setInsertionPointToStart(read.thenBlock());
      Value v = memref::LoadOp::create(rb, loc, scratch, ValueRange{lane});
      scf::YieldOp::create(rb, loc, v);
      rb.setInsertionPointToStart(read.elseBlock());
      scf::YieldOp::create(rb, loc, identity);
    }
    Value total = warpReduce(rb, read.getResult(0));
    auto storeIf = scf::IfOp::create(rb, loc, isLane0, false);
    rb.setInsertionPointToStart(storeIf.thenBlock());
    body(rb, total);
  }

  /// A thread's fold of the reduction points LO, LO + 256, ... < HI at the
  /// parallel point IVS, from the identity.
  Value fold(OpBuilder &fb, Value lo, Value hi, ArrayRef<Value> ivs) {
    Value identity = arith::getIdentityValue(kind, element, fb, loc);
    auto loop = scf::ForOp::create(fb, loc, lo, hi, cIndex(fb, loc, kThreads),
                                   ValueRange{identity});
    OpBuilder::InsertionGuard guard(fb);
    fb.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> all(ivs.begin(), ivs.end());
    for (auto [d, iv] :
         llvm::zip(reduction, delinearize(fb, loc, loop.getInductionVar(), reductionRanges)))
      all[d] = iv;
    SmallVector<Value> r = tcc::emitLinalgPayload(fb, loc, op, all, loop.getRegionIterArgs());
    scf::YieldOp::create(fb, loc, r);
    return loop.getResult(0);
  }

  /// Thread 0's final step: combine TOTAL with the output's old value at
  /// IVS, in the body's operand order ((out, value) or (value, out)).
  void storeResult(OpBuilder &sb, SmallVector<Value> ivs, Value total) {
    OpOperand *init = op.getDpsInitOperand(0);
    AffineMap outMap = op.getMatchingIndexingMap(init);
    BlockArgument outArg = op.getRegionOutputArgs()[0];
    Value zero = cIndex(sb, loc, 0);
    for (unsigned d : reduction)
      ivs[d] = zero;
    auto indices = affine::expandAffineMap(sb, loc, outMap, ivs);
    Value old = initValue ? initValue
                          : memref::LoadOp::create(sb, loc, init->get(), *indices).getResult();
    Value result = combiner->getOperand(0) == outArg ? combine(sb, old, total)
                                                     : combine(sb, total, old);
    memref::StoreOp::create(sb, loc, result, init->get(), *indices);
  }
};

class KernelMapper {
public:
  KernelMapper(func::FuncOp func) : func_(func) {}

  /// Turns every memory-touching op of the function body into a launch.
  LogicalResult run() {
    for (Operation &op : llvm::make_early_inc_range(func_.getBody().front())) {
      if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        OpBuilder b(copy);
        auto linalgCopy = linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                                                 copy.getTarget());
        copy.erase();
        if (failed(mapLinalg(cast<linalg::LinalgOp>(linalgCopy.getOperation()))))
          return failure();
        continue;
      }
      if (auto fill = dyn_cast<linalg::FillOp>(op); fill && absorbedLater(fill))
        continue; // mapped with the reduction that absorbs it
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        if (failed(mapLinalg(linalgOp)))
          return failure();
        continue;
      }
      if (isa<func::CallOp, func::ReturnOp>(op) || isMemoryEffectFree(&op) ||
          op.getDialect()->getNamespace() == "llvm")
        continue;
      // Loops and anything else with memory effects: one thread, in order.
      if (failed(wrapSequential(op)))
        return failure();
    }
    return success();
  }

private:
  /// Creates a launch of GRID x THREADS before OP.
  gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, int64_t grid, int64_t threads,
                             TypeRange workgroup = {}) {
    Value one = cIndex(b, loc, 1);
    Value blocks = cIndex(b, loc, grid);
    Value blockSize = cIndex(b, loc, threads);
    auto launch = gpu::LaunchOp::create(b, loc, blocks, one, one, blockSize, one, one, nullptr,
                                        nullptr, {}, workgroup);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
    return launch;
  }

  /// A launch of one thread per point (256 per block) before B's insertion
  /// point; B is left inside the guard `lin < POINTS`. Returns the launch and
  /// the thread's linear point LIN.
  std::pair<gpu::LaunchOp, Value> createPointLaunch(OpBuilder &b, Location loc, int64_t points) {
    int64_t threads = std::min(kThreads, points);
    gpu::LaunchOp launch = createLaunch(b, loc, (points + threads - 1) / threads, threads);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value lin = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, cIndex(b, loc, threads)),
        launch.getThreadIds().x);
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lin, cIndex(b, loc, points));
    auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    return {launch, lin};
  }

  /// Values defined outside LAUNCH and used inside become copies inside
  /// (pure ops) or static casts of the function's byte buffers.
  LogicalResult sinkDefinitions(gpu::LaunchOp launch) {
    Region &body = launch.getBody();
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(body, captured);
    OpBuilder b = OpBuilder::atBlockBegin(&body.front());
    IRMapping map;
    std::function<FailureOr<Value>(Value)> materialize = [&](Value v) -> FailureOr<Value> {
      if (Value mapped = map.lookupOrNull(v))
        return mapped;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner()->getParentOp() != func_)
          return failure();
        Value buffer = staticBuffer(arg);
        map.map(v, buffer);
        return buffer;
      }
      // The static byte buffers themselves are what kernels capture.
      for (auto &[arg, cast] : casts_)
        if (cast == v)
          return v;
      Operation *def = v.getDefiningOp();
      // A planned buffer: a parameter of the kernel (the header).
      if (isPlannedBuffer(def))
        return v;
      if (!isMemoryEffectFree(def) || def->getNumRegions() != 0)
        return def->emitError("cannot move into a GPU kernel: ") << def->getName(), failure();
      for (Value operand : def->getOperands())
        if (failed(materialize(operand)))
          return failure();
      Operation *clone = b.clone(*def, map);
      for (auto [from, to] : llvm::zip(def->getResults(), clone->getResults()))
        map.map(from, to);
      return map.lookup(v);
    };
    for (Value v : captured) {
      FailureOr<Value> inside = materialize(v);
      if (failed(inside))
        return launch.emitError("a GPU kernel uses a value it cannot recompute"), failure();
      replaceAllUsesInRegionWith(v, *inside, body);
    }
    return success();
  }

  /// Whether DEF is a view of the function's arena or state at a constant
  /// byte offset with a static shape (a bare pointer can carry it).
  bool isPlannedBuffer(Operation *def) const {
    auto view = dyn_cast_or_null<memref::ViewOp>(def);
    if (!view || !view.getType().hasStaticShape() || !view.getSizes().empty() ||
        !matchPattern(view.getByteShift(), m_Constant()))
      return false;
    Value source = view.getSource();
    if (auto cast = source.getDefiningOp<memref::CastOp>())
      source = cast.getSource();
    auto arg = dyn_cast<BlockArgument>(source);
    return arg && arg.getOwner()->getParentOp() == func_;
  }

  /// The function's byte buffer ARG (arena or state) as a static memref,
  /// created once before the first launch.
  Value staticBuffer(BlockArgument arg) {
    auto it = casts_.find(arg.getArgNumber());
    if (it != casts_.end())
      return it->second;
    StringRef attr = arg.getArgNumber() == 0 ? tcc::attr::arenaSize : tcc::attr::stateSize;
    int64_t size = 0;
    if (auto a = func_->getAttrOfType<IntegerAttr>(attr))
      size = a.getInt();
    auto type = MemRefType::get({size}, cast<MemRefType>(arg.getType()).getElementType());
    OpBuilder b = OpBuilder::atBlockBegin(&func_.getBody().front());
    Value cast = memref::CastOp::create(b, arg.getLoc(), type, arg);
    casts_[arg.getArgNumber()] = cast;
    return cast;
  }

  /// Whether the next op to use FILL's buffer is a reduction that absorbs
  /// FILL (tcc::initFills): its accumulators start from the fill's value.
  static bool absorbedLater(linalg::FillOp fill) {
    if (fill->getNumResults() != 0)
      return false;
    Block *block = fill->getBlock();
    Operation *next = nullptr;
    for (Operation *user : fill.getOutputs()[0].getUsers()) {
      Operation *top = block->findAncestorOpInBlock(*user);
      if (top && fill->isBeforeInBlock(top) && (!next || top->isBeforeInBlock(next)))
        next = top;
    }
    auto reduction = dyn_cast_or_null<linalg::LinalgOp>(next);
    return reduction && llvm::is_contained(tcc::initFills(reduction), fill);
  }

  /// Maps the fills the current op would have absorbed, for the paths that
  /// read the output from memory after all.
  LogicalResult materializeFills() {
    for (linalg::FillOp fill : std::exchange(pendingFills_, {}))
      if (fill && failed(mapLinalg(fill)))
        return failure();
    return success();
  }

  LogicalResult wrapSequential(Operation &op) {
    if (failed(materializeFills()))
      return failure();
    if (auto loop = dyn_cast<scf::ForOp>(op))
      if (succeeded(mapLoopOverPoints(loop)))
        return success();
    OpBuilder b(&op);
    gpu::LaunchOp launch = createLaunch(b, op.getLoc(), 1, 1);
    op.moveBefore(launch.getBody().front().getTerminator());
    return sinkDefinitions(launch);
  }

  /// The byte range of the arena or state that V views, if V is a chain of
  /// views of one `memref.view` at a constant offset.
  static std::optional<std::pair<unsigned, std::pair<int64_t, int64_t>>> byteRange(Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (auto view = dyn_cast<memref::ViewOp>(def)) {
        APInt offset;
        auto type = cast<MemRefType>(view.getType());
        auto arg = dyn_cast<BlockArgument>(view.getSource());
        if (!arg || !type.hasStaticShape() ||
            !matchPattern(view.getByteShift(), m_ConstantInt(&offset)))
          return std::nullopt;
        std::optional<int64_t> bytes = tcc::byteSize(type);
        if (!bytes)
          return std::nullopt;
        return std::make_pair(arg.getArgNumber(),
                              std::make_pair(offset.getSExtValue(), offset.getSExtValue() + *bytes));
      }
      if (!isa<ViewLikeOpInterface>(def))
        return std::nullopt;
      v = cast<ViewLikeOpInterface>(def).getViewSource();
    }
    return std::nullopt;
  }

  /// True when element P of V (a buffer of shape RANGES) is the same element
  /// of its underlying buffer in every iteration of LOOP, up to a part that
  /// only selects among disjoint copies: V is loop-invariant, or a subview
  /// that fixes leading unit dimensions and keeps the trailing ones whole.
  static bool ownsPointsAcrossIterations(Value v, ArrayRef<int64_t> ranges, scf::ForOp loop) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || type.getShape() != ranges)
      return false;
    if (loop.isDefinedOutsideOfLoop(v))
      return type.getLayout().isIdentity();
    auto subview = v.getDefiningOp<memref::SubViewOp>();
    if (!subview)
      return false;
    MemRefType source = subview.getSourceType();
    if (!source.getLayout().isIdentity() || !source.hasStaticShape())
      return false;
    size_t kept = ranges.size(), lead = size_t(source.getRank()) - kept;
    if (lead > size_t(source.getRank()))
      return false;
    for (size_t d = 0; d < size_t(source.getRank()); ++d) {
      int64_t size = subview.getStaticSizes()[d];
      if (d < lead) {
        if (size != 1)
          return false;
        continue;
      }
      if (subview.getStaticOffsets()[d] != 0 || size != source.getDimSize(d) ||
          subview.getStaticStrides()[d] != 1 || size != ranges[d - lead])
        return false;
    }
    return true;
  }

  /// A loop nest whose body runs the same elementwise iteration space R over
  /// rows it selects (a scatter-add: for each index, row[idx] += g[i]):
  /// iterations may hit the same row, but point p of every op touches only
  /// column p of that row. One thread per point then runs the whole nest in
  /// order, and the result is the sequential one.
  LogicalResult mapLoopOverPoints(scf::ForOp loop) {
    SmallVector<Operation *> pointOps;
    SmallVector<int64_t> ranges;
    SmallVector<std::pair<unsigned, std::pair<int64_t, int64_t>>> written, read;
    bool ok = true;
    loop->walk([&](Operation *op) {
      if (!ok || op == loop.getOperation())
        return WalkResult::skip();
      SmallVector<Value> operands, outputs;
      if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        operands = {copy.getSource(), copy.getTarget()};
        outputs = {copy.getTarget()};
      } else if (auto l = dyn_cast<linalg::LinalgOp>(op)) {
        if (!l.hasPureBufferSemantics() || l.getNumReductionLoops() != 0 ||
            !llvm::all_of(l.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
          return ok = false, WalkResult::interrupt();
        for (OpOperand &o : op->getOpOperands())
          if (isa<MemRefType>(o.get().getType()))
            operands.push_back(o.get());
        for (OpOperand &o : l.getDpsInitsMutable())
          outputs.push_back(o.get());
      } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
        auto range = byteRange(load.getMemRef());
        if (!range)
          return ok = false, WalkResult::interrupt();
        read.push_back(*range);
        return WalkResult::advance();
      } else if (isa<scf::ForOp, scf::YieldOp>(op) || isMemoryEffectFree(op)) {
        return WalkResult::advance();
      } else {
        return ok = false, WalkResult::interrupt();
      }
      auto shape = cast<MemRefType>(operands.front().getType()).getShape();
      if (pointOps.empty())
        ranges.assign(shape.begin(), shape.end());
      for (Value v : operands)
        if (!ownsPointsAcrossIterations(v, ranges, loop))
          return ok = false, WalkResult::interrupt();
      for (Value v : outputs) {
        auto range = byteRange(v);
        if (!range)
          return ok = false, WalkResult::interrupt();
        written.push_back(*range);
      }
      pointOps.push_back(op);
      return WalkResult::skip();
    });
    if (!ok || pointOps.empty())
      return failure();
    // Scalar loads (the indices) must not read what the ops write.
    for (auto &r : read)
      for (auto &w : written)
        if (r.first == w.first && r.second.first < w.second.second &&
            w.second.first < r.second.second)
          return failure();
    int64_t points = 1;
    for (int64_t r : ranges)
      points *= r;
    if (points < 2)
      return failure();

    Location loc = loop.getLoc();
    OpBuilder b(loop);
    auto [launch, lin] = createPointLaunch(b, loc, points);
    SmallVector<Value> ivs = delinearize(b, loc, lin, ranges);
    loop->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
    for (Operation *op : pointOps) {
      b.setInsertionPoint(op);
      Location l = op->getLoc();
      if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        Value v = memref::LoadOp::create(b, l, copy.getSource(), ivs);
        memref::StoreOp::create(b, l, v, copy.getTarget(), ivs);
      } else {
        auto l2 = cast<linalg::LinalgOp>(op);
        tcc::storeLinalgOutputs(b, l, l2, ivs, tcc::emitLinalgPayload(b, l, l2, ivs, tcc::loadLinalgOutputs(b, l, l2, ivs)));
      }
      op->erase();
    }
    return sinkDefinitions(launch);
  }

  LogicalResult mapLinalg(linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics())
      return op.emitError("GPU kernels need ops on buffers"), failure();
    // The fills this op's accumulators may start from; the register paths
    // absorb them, the others map them first.
    pendingFills_ = tcc::initFills(op);
    if (failed(mapLinalgOp(op)))
      return failure();
    for (linalg::FillOp fill : std::exchange(pendingFills_, {}))
      if (fill)
        fill->erase();
    return success();
  }

  LogicalResult mapLinalgOp(linalg::LinalgOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<unsigned> parallel, reduction;
    for (auto [d, it] : llvm::enumerate(iterators))
      (it == utils::IteratorType::parallel ? parallel : reduction).push_back(unsigned(d));
    int64_t points = 1, reduced = 1;
    for (unsigned d : parallel)
      points *= ranges[d];
    for (unsigned d : reduction)
      reduced *= ranges[d];
    if (llvm::any_of(ranges, [](int64_t r) { return ShapedType::isDynamic(r); }))
      return op.emitError("GPU kernels need static shapes"), failure();
    if (points == 0 || (reduced == 0 && !reduction.empty())) {
      if (failed(materializeFills()))
        return failure();
      op->erase();
      return success();
    }
    // Every output must be indexed by the parallel loops alone, so that
    // threads own disjoint output points.
    for (OpOperand &init : op.getDpsInitsMutable()) {
      AffineMap m = op.getMatchingIndexingMap(&init);
      for (unsigned d : reduction)
        if (m.isFunctionOfDim(d))
          return wrapSequential(*op);
    }
    if (succeeded(mapBlockReduction(op, ranges, parallel, reduction, points, reduced)))
      return success();
    return mapThreadPerPoint(op, ranges, parallel, reduction, points);
  }

  /// The byte offset, from the start of the arena or the state, of V's
  /// element at all-zero indices: V is a memref.view at a constant offset,
  /// or views of one that keep its base pointer (their static layout offset
  /// counts from it).
  static std::optional<int64_t> regionByteOffset(Value v) {
    auto type = cast<MemRefType>(v.getType());
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    if (failed(type.getStridesAndOffset(strides, offset)) || ShapedType::isDynamic(offset))
      return std::nullopt;
    while (Operation *def = v.getDefiningOp()) {
      if (auto view = dyn_cast<memref::ViewOp>(def)) {
        Value source = view.getSource();
        if (auto cast = source.getDefiningOp<memref::CastOp>())
          source = cast.getSource();
        APInt shift;
        if (!isa<BlockArgument>(source) ||
            !matchPattern(view.getByteShift(), m_ConstantInt(&shift)))
          return std::nullopt;
        return shift.getSExtValue() + offset * int64_t(type.getElementTypeBitWidth() / 8);
      }
      if (!isa<memref::SubViewOp, memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
               memref::ReinterpretCastOp, memref::TransposeOp>(def))
        return std::nullopt;
      v = def->getOperand(0);
    }
    return std::nullopt;
  }

  /// Whether the elementwise OP can run LANES innermost points per thread
  /// with one vector access per buffer that the innermost loop indexes; on
  /// success ALIGNS holds, per operand, that access's alignment in bytes, or
  /// 0 for an operand read once per thread (a scalar operand, an unused
  /// buffer, or one the innermost loop does not index: a per-row value).
  /// Every output and every other read buffer needs: the innermost loop as
  /// its last index and in no other (not transposed), a contiguous last
  /// dimension, whole-byte elements, and a base and outer strides that are
  /// multiples of the access's size (up to 16 bytes). The device arena and
  /// state are 256-byte aligned allocations, so the base's offset in its
  /// region decides.
  static bool canVectorize(linalg::LinalgOp op, ArrayRef<int64_t> ranges, int64_t lanes,
                           SmallVectorImpl<int64_t> &aligns) {
    if (ranges.empty() || ranges.back() % lanes != 0)
      return false;
    unsigned inner = unsigned(ranges.size() - 1);
    Block *body = op.getBlock();
    aligns.assign(op->getNumOperands(), 0);
    for (OpOperand &o : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(o.get().getType());
      bool output = op.isDpsInit(&o);
      if (!type || (!output && body->getArgument(o.getOperandNumber()).use_empty()))
        continue;
      AffineMap map = op.getMatchingIndexingMap(&o);
      unsigned uses = 0;
      for (AffineExpr e : map.getResults())
        uses += e.isFunctionOfDim(inner);
      if (uses == 0 && !output)
        continue; // a per-row value: one scalar load
      if (uses != 1 || map.getResults().back() != getAffineDimExpr(inner, op.getContext()))
        return false;
      if (!type.getElementType().isIntOrFloat() || !type.hasStaticShape())
        return false;
      unsigned bits = type.getElementTypeBitWidth();
      if (bits < 8 || bits > 64 || !llvm::isPowerOf2_32(bits))
        return false;
      int64_t bytes = tcc::elementBytes(type.getElementType()),
              align = std::min<int64_t>(16, lanes * bytes);
      SmallVector<int64_t> strides;
      int64_t offset = 0;
      if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
        return false;
      for (int64_t d = 0; d + 1 < type.getRank(); ++d)
        if (type.getDimSize(d) != 1 &&
            (ShapedType::isDynamic(strides[d]) || (strides[d] * bytes) % align != 0))
          return false;
      std::optional<int64_t> base = regionByteOffset(o.get());
      if (!base || *base % align != 0)
        return false;
      aligns[o.getOperandNumber()] = align;
    }
    return true;
  }

  /// The points per thread of a vectorized elementwise OP: kWideVector
  /// when a buffer the innermost loop indexes has elements of 2 bytes or
  /// fewer (16 bytes of them per access), else kVector.
  static int64_t vectorLanes(linalg::LinalgOp op) {
    if (op.getNumLoops() == 0)
      return kVector;
    unsigned inner = op.getNumLoops() - 1;
    for (OpOperand &o : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(o.get().getType());
      if (!type || !type.getElementType().isIntOrFloat() || type.getElementTypeBitWidth() < 8 ||
          tcc::elementBytes(type.getElementType()) > 2)
        continue;
      if (llvm::any_of(op.getMatchingIndexingMap(&o).getResults(),
                       [&](AffineExpr e) { return e.isFunctionOfDim(inner); }))
        return kWideVector;
    }
    return kVector;
  }

  /// An elementwise op with LANES innermost points per thread (see
  /// canVectorize): one vector load per buffer the innermost loop indexes
  /// and one scalar load per other buffer, the body once per point, one
  /// vector store per output.
  LogicalResult mapVectorPerPoint(linalg::LinalgOp op, ArrayRef<int64_t> ranges, int64_t lanes,
                                  ArrayRef<int64_t> aligns, int64_t points) {
    Location loc = op.getLoc();
    OpBuilder b(op);
    auto [launch, lin] = createPointLaunch(b, loc, points / lanes);
    SmallVector<int64_t> groups(ranges);
    groups.back() /= lanes;
    SmallVector<Value> ivs = delinearize(b, loc, lin, groups);
    ivs.back() = arith::MulIOp::create(b, loc, ivs.back(), cIndex(b, loc, lanes));
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto vectorType = [&](OpOperand &o) {
      return VectorType::get({lanes}, cast<MemRefType>(o.get().getType()).getElementType());
    };
    auto indices = [&](OpOperand &o) {
      return *affine::expandAffineMap(b, loc, maps[o.getOperandNumber()], ivs);
    };
    auto load = [&](OpOperand &o) -> Value {
      int64_t align = aligns[o.getOperandNumber()];
      if (align == 0)
        return memref::LoadOp::create(b, loc, o.get(), indices(o));
      return vector::LoadOp::create(b, loc, vectorType(o), o.get(), indices(o),
                                    /*nontemporal=*/false, llvm::MaybeAlign(align));
    };
    Block *body = op.getBlock();
    SmallVector<Value> ins, outs;
    for (OpOperand *in : op.getDpsInputOperands())
      ins.push_back(isa<MemRefType>(in->get().getType()) &&
                            !body->getArgument(in->getOperandNumber()).use_empty()
                        ? load(*in)
                        : Value());
    for (OpOperand &init : op.getDpsInitsMutable())
      outs.push_back(body->getArgument(init.getOperandNumber()).use_empty() ? Value() : load(init));
    // Point J of the thread's group: lane J of each vector, the scalars as is.
    auto lane = [&](Value v, int64_t j) -> Value {
      if (!v || !isa<VectorType>(v.getType()))
        return v;
      return vector::ExtractOp::create(b, loc, v, j);
    };
    SmallVector<SmallVector<Value>> results(op.getNumDpsInits());
    for (int64_t j = 0; j < lanes; ++j) {
      SmallVector<Value> pointIvs(ivs), pointIns, pointOuts;
      if (j > 0)
        pointIvs.back() = arith::AddIOp::create(b, loc, ivs.back(), cIndex(b, loc, j));
      for (Value v : ins)
        pointIns.push_back(lane(v, j));
      for (Value v : outs)
        pointOuts.push_back(lane(v, j));
      for (auto [k, r] :
           llvm::enumerate(tcc::cloneLinalgBody(b, loc, op, pointIvs, pointIns, pointOuts)))
        results[k].push_back(r);
    }
    for (auto [k, init] : llvm::enumerate(op.getDpsInitsMutable())) {
      Value v = vector::FromElementsOp::create(b, loc, vectorType(init), results[k]);
      vector::StoreOp::create(b, loc, v, init.get(), indices(init), /*nontemporal=*/false,
                              llvm::MaybeAlign(aligns[init.getOperandNumber()]));
    }
    op->erase();
    return sinkDefinitions(launch);
  }

  LogicalResult mapThreadPerPoint(linalg::LinalgOp op, ArrayRef<int64_t> ranges,
                                  ArrayRef<unsigned> parallel, ArrayRef<unsigned> reduction,
                                  int64_t points) {
    // Elementwise ops with enough points for 128 threads of a vector of
    // points: 16-byte accesses where the buffers allow them (8 points of a
    // 16-bit kernel where they allow that, else 4).
    SmallVector<int64_t> aligns;
    if (reduction.empty())
      for (int64_t lanes : {vectorLanes(op), kVector})
        if (points >= 128 * lanes && canVectorize(op, ranges, lanes, aligns))
          return mapVectorPerPoint(op, ranges, lanes, aligns, points);
    Location loc = op.getLoc();
    OpBuilder b(op);
    auto [launch, lin] = createPointLaunch(b, loc, points);
    SmallVector<int64_t> parallelRanges;
    for (unsigned d : parallel)
      parallelRanges.push_back(ranges[d]);
    SmallVector<Value> ivs(ranges.size());
    for (auto [d, iv] : llvm::zip(parallel, delinearize(b, loc, lin, parallelRanges)))
      ivs[d] = iv;
    Value zero = cIndex(b, loc, 0);
    for (unsigned d : reduction)
      ivs[d] = zero; // outputs do not depend on them
    SmallVector<Value> outs = tcc::loadLinalgOutputs(b, loc, op, ivs,
                                                     tcc::fillValues(pendingFills_));
    SmallVector<Value> results;
    if (reduction.empty()) {
      results = tcc::emitLinalgPayload(b, loc, op, ivs, outs);
    } else {
      // Accumulators in registers: every output is carried by the loops.
      SmallVector<Value> lbs, ubs, steps;
      for (unsigned d : reduction) {
        lbs.push_back(zero);
        ubs.push_back(cIndex(b, loc, ranges[d]));
        steps.push_back(cIndex(b, loc, 1));
      }
      SmallVector<Value> carried;
      for (auto [i, v] : llvm::enumerate(outs)) {
        if (!v) { // an output the body does not read cannot accumulate
          launch->erase();
          return wrapSequential(*op);
        }
        carried.push_back(v);
      }
      scf::LoopNest nest = scf::buildLoopNest(
          b, loc, lbs, ubs, steps, carried,
          [&](OpBuilder &nb, Location l, ValueRange loopIvs, ValueRange args) {
            SmallVector<Value> all(ivs);
            for (auto [d, iv] : llvm::zip(reduction, loopIvs))
              all[d] = iv;
            return tcc::emitLinalgPayload(nb, l, op, all, args);
          });
      results.assign(nest.results.begin(), nest.results.end());
    }
    tcc::storeLinalgOutputs(b, loc, op, ivs, results);
    op->erase();
    return sinkDefinitions(launch);
  }

  /// One block per output point for single-output f32 / i32 reductions with
  /// a one-op combiner, when the points are few or the reduction is the
  /// innermost loop (contiguous for row-major operands).
  LogicalResult mapBlockReduction(linalg::LinalgOp op, ArrayRef<int64_t> ranges,
                                  ArrayRef<unsigned> parallel, ArrayRef<unsigned> reduction,
                                  int64_t points, int64_t reduced) {
    std::optional<BlockReduction> r =
        BlockReduction::match(op, ranges, parallel, reduction, points, reduced);
    if (!r)
      return failure();
    r->initValue = tcc::fillValues(pendingFills_).front(); // an absorbed fill's
    OpBuilder b(op);
    auto shared = MemRefType::get({kThreads / kWarp}, r->element, AffineMap(),
                                  gpu::AddressSpaceAttr::get(b.getContext(),
                                                             gpu::AddressSpace::Workgroup));
    // Few points and a long reduction: split each point's reduction.
    int64_t split = std::min<int64_t>(kMaxSplit, reduced / kSplitChunk);
    if (points * split <= kMaxSplit && split >= 2)
      return mapSplitReduction(*r, b, shared, split);

    Location loc = r->loc;
    gpu::LaunchOp launch = createLaunch(b, loc, points, kThreads, {shared});
    OpBuilder lb = OpBuilder::atBlockBegin(&launch.getBody().front());
    SmallVector<Value> ivs = r->parallelIvs(lb, launch.getBlockIds().x);
    Value partial = r->fold(lb, launch.getThreadIds().x, cIndex(lb, loc, reduced), ivs);
    r->blockReduce(lb, launch, partial,
                   [&](OpBuilder &tb, Value total) { r->storeResult(tb, ivs, total); });
    op->erase();
    return sinkDefinitions(launch);
  }

  /// R with each point's reduction split over SPLIT blocks writing partial
  /// results to the arena's scratch, then one block per point combining
  /// them (two launches, still no atomics). B is before R's op; SHARED is
  /// the blocks' one word per warp.
  LogicalResult mapSplitReduction(BlockReduction &r, OpBuilder &b, MemRefType shared,
                                  int64_t split) {
    Location loc = r.loc;
    int64_t points = r.points, reduced = r.reduced;
    Value partials = scratchView(b, loc, MemRefType::get({points * split}, r.element));
    gpu::LaunchOp first = createLaunch(b, loc, points * split, kThreads, {shared});
    {
      OpBuilder fb = OpBuilder::atBlockBegin(&first.getBody().front());
      Value bid = first.getBlockIds().x;
      Value p = arith::DivUIOp::create(fb, loc, bid, cIndex(fb, loc, split));
      Value g = arith::RemUIOp::create(fb, loc, bid, cIndex(fb, loc, split));
      int64_t chunk = (reduced + split - 1) / split;
      Value lo = arith::AddIOp::create(
          fb, loc, arith::MulIOp::create(fb, loc, g, cIndex(fb, loc, chunk)),
          first.getThreadIds().x);
      Value next = arith::AddIOp::create(fb, loc, g, cIndex(fb, loc, 1));
      Value end = arith::MulIOp::create(fb, loc, next, cIndex(fb, loc, chunk));
      Value hi = arith::MinUIOp::create(fb, loc, end, cIndex(fb, loc, reduced));
      SmallVector<Value> ivs = r.parallelIvs(fb, p);
      r.blockReduce(fb, first, r.fold(fb, lo, hi, ivs), [&](OpBuilder &tb, Value total) {
        memref::StoreOp::create(tb, loc, total, partials, ValueRange{bid});
      });
    }
    gpu::LaunchOp second = createLaunch(b, loc, points, kThreads, {shared});
    {
      OpBuilder sb = OpBuilder::atBlockBegin(&second.getBody().front());
      Value p = second.getBlockIds().x;
      Value identity = arith::getIdentityValue(r.kind, r.element, sb, loc);
      Value base = arith::MulIOp::create(sb, loc, p, cIndex(sb, loc, split));
      Value upper = cIndex(sb, loc, split);
      Value stride = cIndex(sb, loc, kThreads);
      auto loop = scf::ForOp::create(sb, loc, second.getThreadIds().x, upper, stride,
                                     ValueRange{identity});
      {
        OpBuilder::InsertionGuard guard(sb);
        sb.setInsertionPointToStart(loop.getBody());
        Value at = arith::AddIOp::create(sb, loc, base, loop.getInductionVar());
        Value v = memref::LoadOp::create(sb, loc, partials, ValueRange{at});
        scf::YieldOp::create(sb, loc, r.combine(sb, loop.getRegionIterArgs()[0], v));
      }
      SmallVector<Value> ivs = r.parallelIvs(sb, p);
      r.blockReduce(sb, second, loop.getResult(0),
                    [&](OpBuilder &tb, Value total) { r.storeResult(tb, ivs, total); });
    }
    r.op->erase();
    if (failed(sinkDefinitions(first)))
      return failure();
    return sinkDefinitions(second);
  }

  /// A view of the scratch space at the arena's end (after the plan's
  /// buffers), shared by every split reduction: launches run in order.
  Value scratchView(OpBuilder &b, Location loc, MemRefType type) {
    int64_t bytes = tcc::byteSize(type).value_or(0); // f32 / i32 partials
    scratchBytes_ = std::max(scratchBytes_, bytes);
    int64_t arena = 0;
    if (auto a = func_->getAttrOfType<IntegerAttr>(tcc::attr::arenaSize))
      arena = a.getInt();
    // An arena within 255 bytes of 2^63 has no room for scratch: offset 0
    // here, and reserveScratch reports it.
    std::optional<int64_t> rounded = llvm::checkedAdd<int64_t>(arena, 255);
    int64_t offset = rounded ? *rounded / 256 * 256 : 0;
    scratchOverflow_ |= !rounded;
    scratchOffset_ = offset;
    Value buffer = staticBuffer(func_.getArgument(0));
    return memref::ViewOp::create(b, loc, type, buffer, cIndex(b, loc, offset), ValueRange{});
  }

  func::FuncOp func_;
  /// The fills the op being mapped absorbs (tcc::initFills), one per output.
  SmallVector<linalg::FillOp> pendingFills_;
  DenseMap<unsigned, Value> casts_;
  int64_t scratchOffset_ = -1, scratchBytes_ = 0;
  bool scratchOverflow_ = false;

public:
  /// Grows the arena by the split reductions' scratch (after mapping: the
  /// arena's static cast takes the new size).
  LogicalResult reserveScratch() {
    if (scratchOffset_ < 0)
      return success();
    std::optional<int64_t> end = llvm::checkedAdd(scratchOffset_, scratchBytes_);
    if (scratchOverflow_ || !end)
      return emitError(func_.getLoc(), "tcc-gpu-map-kernels: the split reductions' ")
             << scratchBytes_ << " bytes of scratch after the arena's "
             << func_->getAttrOfType<IntegerAttr>(tcc::attr::arenaSize).getInt()
             << " bytes pass 2^63 bytes";
    int64_t size = *end;
    func_->setAttr(tcc::attr::arenaSize,
                   IntegerAttr::get(IntegerType::get(func_.getContext(), 64), size));
    auto it = casts_.find(0);
    if (it != casts_.end())
      it->second.setType(MemRefType::get({size}, IntegerType::get(func_.getContext(), 8)));
    return success();
  }
};

struct GpuMapKernelsPass : tcc::impl::GpuMapKernelsPassBase<GpuMapKernelsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func->hasAttr(tcc::attr::plan))
      return;
    KernelMapper mapper(func);
    if (failed(mapper.run()))
      return signalPassFailure();
    if (failed(mapper.reserveScratch()))
      return signalPassFailure();
  }
};

} // namespace
