//===- FuseRows.cpp - a reduction with its prologue and epilogue as one kernel ===//
//
// Softmax, layer norm and its backward, log-softmax with the loss: reductions
// over the trailing dimensions of rows, with fills and elementwise ops
// before and after them that touch the same rows. On buffers, before the
// memory plan, a run of such ops becomes one loop over the rows whose body
// runs every op on its row: one kernel (one parallel loop, one fork), each
// row's data in cache from one op to the next, the reductions' fills
// absorbed by their register accumulators (LinalgToCpuLoops). The
// intermediates keep their buffers; the plan sees them used inside the loop,
// so they are live across all of it and never share memory.
//
// A parameter's update with the ops after it that read the parameter's
// new value through a window (a subview that keeps the leading dimension
// whole) runs the same way, over the update's leading dimension: the
// 16-bit copy of a filter trimmed to the taps that meet its input
// (Precision.cpp's copyCandidates) gathers every ninth element of a 3x3
// filter, which read from the row the update has just written costs a pass
// over cached data instead of one over the whole filter.
//
// Legal because every buffer the run writes is indexed by the rows in every
// op of the run (the same row coordinates in its leading dimensions, through
// the buffer itself or windows that keep those dimensions whole), so a
// row's ops touch only that row of what the run writes, and running the rows
// in any order, each row's ops in program order, computes what the ops
// computed one after the other.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/support/SourceNames.h"
#include "passes/support/ViewRoot.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/InterleavedRange.h"

#define DEBUG_TYPE "tcc-fuse-rows"

namespace tcc {
#define GEN_PASS_DEF_FUSEROWSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// The rows: the first K loops, parallel, of these extents.
struct Rows {
  unsigned k = 0;
  SmallVector<int64_t> extents;
};

/// How an operand's map relates to the rows: indexed by them (its first K
/// results are d0 .. dK-1 and no other result uses them), broadcast over
/// them (no result uses them), or neither.
enum class RowUse { Indexed, Broadcast, Other };

RowUse rowUse(AffineMap map, unsigned k) {
  auto usesRows = [&](AffineExpr e) {
    for (unsigned d = 0; d < k; ++d)
      if (e.isFunctionOfDim(d))
        return true;
    return false;
  };
  if (!llvm::any_of(map.getResults(), usesRows))
    return RowUse::Broadcast;
  if (map.getNumResults() < k)
    return RowUse::Other;
  for (unsigned d = 0; d < k; ++d)
    if (map.getResult(d) != getAffineDimExpr(d, map.getContext()))
      return RowUse::Other;
  for (unsigned r = k; r < map.getNumResults(); ++r)
    if (usesRows(map.getResult(r)))
      return RowUse::Other;
  return RowUse::Indexed;
}

/// Whether the function returns BUFFER or a view of it.
bool returned(Value buffer) {
  for (Operation *user : buffer.getUsers()) {
    if (isa<func::ReturnOp>(user))
      return true;
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    if (view && view.getViewSource() == buffer && returned(view->getResult(0)))
      return true;
  }
  return false;
}

/// V's buffer through the windows that keep the first K dimensions whole
/// (subviews at offset 0, full size and unit stride there, of V's rank):
/// row I of V is row I of what this returns.
Value rowBase(Value v, unsigned k) {
  while (auto sub = v.getDefiningOp<memref::SubViewOp>()) {
    MemRefType source = sub.getSourceType();
    if (sub.getType().getRank() != source.getRank() || source.getRank() < int64_t(k))
      return v;
    for (unsigned d = 0; d < k; ++d)
      if (sub.getStaticOffsets()[d] != 0 || sub.getStaticSizes()[d] != source.getDimSize(d) ||
          sub.getStaticStrides()[d] != 1 || ShapedType::isDynamic(source.getDimSize(d)))
        return v;
    v = sub.getSource();
  }
  return v;
}

/// An op of a run: a generic or a fill on buffers over the rows, writing
/// only fresh allocations that the function does not return (parameter
/// updates and outputs keep their own kernels; with UPDATES, function
/// arguments too: an update run), every shaped operand indexed by the rows
/// or (inputs only) broadcast over them.
bool eligible(linalg::LinalgOp op, const Rows &rows, bool updates = false) {
  // An update run also takes the map and copy of a zero pad (its gradient).
  bool kind = isa<linalg::GenericOp, linalg::FillOp>(op.getOperation()) ||
              (updates && isa<linalg::MapOp, linalg::CopyOp>(op.getOperation()));
  if (!kind || !op.hasPureBufferSemantics())
    return false;
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (extents.size() < rows.k || llvm::any_of(extents, ShapedType::isDynamic))
    return false;
  for (unsigned d = 0; d < rows.k; ++d)
    if (iterators[d] != utils::IteratorType::parallel || extents[d] != rows.extents[d])
      return false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    RowUse use = rowUse(op.getMatchingIndexingMap(&operand), rows.k);
    if (use == RowUse::Other || (use == RowUse::Broadcast && op.isDpsInit(&operand)))
      return false;
    if (!op.isDpsInit(&operand))
      continue;
    Value root = tcc::viewRoot(operand.get());
    if (updates && isa<BlockArgument>(root))
      continue;
    if (!root.getDefiningOp<memref::AllocOp>() || returned(root))
      return false;
  }
  return true;
}

/// Whether the ops may run row by row together: every buffer they write is
/// reached through one value only (or windows of it that keep the rows:
/// rowBase), indexed by the rows wherever they use it.
bool consistent(ArrayRef<linalg::LinalgOp> ops, unsigned k) {
  DenseMap<Value, Value> writtenThrough; // root -> the one value
  for (linalg::LinalgOp op : ops)
    for (OpOperand &out : op.getDpsInitsMutable())
      writtenThrough[tcc::viewRoot(out.get())] = rowBase(out.get(), k);
  for (linalg::LinalgOp op : ops)
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()))
        continue;
      auto it = writtenThrough.find(tcc::viewRoot(operand.get()));
      if (it == writtenThrough.end())
        continue;
      if (it->second != rowBase(operand.get(), k) ||
          rowUse(op.getMatchingIndexingMap(&operand), k) != RowUse::Indexed)
        return false;
    }
  return true;
}

/// Whether the last op of OPS reads what an earlier one wrote through a
/// window (another value than the one written): what an update run is for.
bool lastReadsWindow(ArrayRef<linalg::LinalgOp> ops) {
  DenseMap<Value, Value> written; // root -> the value written
  for (linalg::LinalgOp op : ops.drop_back())
    for (OpOperand &out : op.getDpsInitsMutable())
      written[tcc::viewRoot(out.get())] = out.get();
  linalg::LinalgOp last = ops.back();
  return llvm::any_of(last.getDpsInputOperands(), [&](OpOperand *in) {
    auto it = written.find(tcc::viewRoot(in->get()));
    return it != written.end() && it->second != in->get();
  });
}

/// Whether every buffer OP writes is read by an op of RUN.
bool feedsRun(linalg::LinalgOp op, ArrayRef<linalg::LinalgOp> run) {
  DenseSet<Value> read;
  for (linalg::LinalgOp r : run)
    for (OpOperand *in : r.getDpsInputOperands())
      read.insert(tcc::viewRoot(in->get()));
  return llvm::all_of(op.getDpsInits(), [&](Value out) { return read.contains(tcc::viewRoot(out)); });
}

/// The rows of an update run: the leading loop of a generic whose loops
/// are all parallel (at least two of them) and that writes a function
/// argument (a parameter or optimizer state, in place), or k = 0.
Rows updateRowsOf(linalg::LinalgOp op) {
  Rows rows;
  if (!isa<linalg::GenericOp>(op.getOperation()) || op.getNumLoops() < 2 ||
      op.getNumReductionLoops() != 0 || !op.hasPureBufferSemantics())
    return rows;
  bool writesArgument = llvm::any_of(op.getDpsInitsMutable(), [](OpOperand &out) {
    return isa<BlockArgument>(tcc::viewRoot(out.get()));
  });
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (!writesArgument || ShapedType::isDynamic(extents[0]))
    return rows;
  rows.k = 1;
  rows.extents = {extents[0]};
  return rows;
}

/// The rows of a reduction whose parallel loops all lead, or k = 0.
Rows rowsOf(linalg::LinalgOp op) {
  Rows rows;
  if (!isa<linalg::GenericOp>(op.getOperation()) || op.getNumReductionLoops() == 0)
    return rows;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  unsigned k = 0;
  while (k < iterators.size() && iterators[k] == utils::IteratorType::parallel)
    ++k;
  if (k != op.getNumParallelLoops())
    return rows;
  rows.k = k;
  rows.extents.assign(extents.begin(), extents.begin() + k);
  return rows;
}

struct FuseRowsPass : tcc::impl::FuseRowsPassBase<FuseRowsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    DenseSet<Operation *> taken;
    int64_t runs = 0, fused = 0;
    SmallVector<Operation *> order;
    for (Operation &op : body)
      order.push_back(&op);
    // Ops a run steps over (they stay before its loop): pure ops (views,
    // constants) and allocations.
    auto skippable = [](Operation *op) {
      return op->getNumRegions() == 0 && (isMemoryEffectFree(op) || isa<memref::AllocOp>(op));
    };
    for (unsigned i = 0; i < order.size(); ++i) {
      // Before the cast: the ops of earlier runs are erased.
      if (taken.contains(order[i]))
        continue;
      auto seed = dyn_cast<linalg::LinalgOp>(order[i]);
      if (!seed)
        continue;
      Rows rows = rowsOf(seed);
      bool updates = false;
      if (rows.k == 0) {
        rows = updateRowsOf(seed);
        updates = true;
      }
      if (rows.k == 0 || !eligible(seed, rows, updates))
        continue;
      SmallVector<linalg::LinalgOp> run = {seed};
      // Extend over the ops before and after the seed, stepping over pure
      // ops (views, constants), while each op fits the rows and the run.
      auto extend = [&](int step) {
        for (int j = int(i) + step; j >= 0 && j < int(order.size()); j += step) {
          Operation *op = order[j];
          if (taken.contains(op))
            return;
          // A zero pad's copy into its window is a memref.copy: as a
          // linalg.copy (the same elements) it can join an update run, when
          // the run reads what it writes (only then is it rewritten).
          if (auto copy = dyn_cast<memref::CopyOp>(op); copy && updates && step < 0) {
            Value target = tcc::viewRoot(copy.getTarget());
            bool read = llvm::any_of(run, [&](linalg::LinalgOp r) {
              return llvm::any_of(r.getDpsInputOperands(), [&](OpOperand *in) {
                return tcc::viewRoot(in->get()) == target;
              });
            });
            if (!read)
              return;
            OpBuilder b(copy);
            op = order[j] = linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                                                   copy.getTarget());
            copy->erase();
          }
          auto l = dyn_cast<linalg::LinalgOp>(op);
          if (!l) {
            if (skippable(op))
              continue;
            return;
          }
          if (!eligible(l, rows, updates) || (updates && l.getNumLoops() < 2))
            return;
          // Before an update, only what the run reads: a zero pad of its
          // gradient (sunk to it: LinalgNN.cpp sinkZeroPads).
          if (updates && step < 0 && !feedsRun(l, run))
            return;
          SmallVector<linalg::LinalgOp> candidate(run);
          if (step < 0)
            candidate.insert(candidate.begin(), l);
          else
            candidate.push_back(l);
          if (!consistent(candidate, rows.k))
            return;
          run = std::move(candidate);
        }
      };
      if (updates) {
        // After the update, up to the last op that reads a window of what
        // the run wrote; before it, the ops that write what it reads.
        extend(+1);
        while (run.size() > 1 && !lastReadsWindow(run))
          run.pop_back();
        if (run.size() < 2)
          continue;
        extend(-1);
      } else {
        extend(-1);
        extend(+1);
      }
      int64_t kernels = llvm::count_if(
          run, [](linalg::LinalgOp op) { return !isa<linalg::FillOp>(op.getOperation()); });
      if (kernels < 2)
        continue;
      for (linalg::LinalgOp op : run)
        taken.insert(op);
      if (report)
        describe(run, rows, runs, kernels);
      ++runs;
      fused += kernels;
      fuse(run, rows);
    }
    if (report)
      llvm::errs() << "rows @" << func.getSymName() << ": " << runs << " runs of " << fused
                   << " kernels -> " << runs << " kernels\n"
                   << buffer;
    buffer.clear();
  }

  /// Appends RUN's line of the report: its rows and its ops' sources.
  void describe(ArrayRef<linalg::LinalgOp> run, const Rows &rows, int64_t index,
                int64_t kernels) {
    llvm::raw_string_ostream os(buffer);
    os << "  run " << index << " (" << kernels << " kernels over "
       << llvm::join(llvm::map_range(rows.extents, [](int64_t e) { return std::to_string(e); }),
                     "x")
       << " rows): ";
    SmallVector<std::string> names;
    for (linalg::LinalgOp op : run) {
      std::string name = tcc::sourceName(op);
      if (!isa<linalg::FillOp>(op.getOperation()) && !llvm::is_contained(names, name))
        names.push_back(name);
    }
    os << llvm::join(names, ", ") << "\n";
  }

  std::string buffer; // the report's run lines, printed after the summary

  /// Replaces RUN by one loop over ROWS (parallel when the run's work is at
  /// least min-parallel-work iterations) at the place of its last op.
  void fuse(ArrayRef<linalg::LinalgOp> ops, const Rows &rows) {
    // Maps and copies (an update run's zero pad) as the generics they are.
    SmallVector<linalg::LinalgOp> run(ops);
    for (linalg::LinalgOp &op : run)
      if (isa<linalg::MapOp, linalg::CopyOp>(op.getOperation())) {
        IRRewriter rewriter(op);
        FailureOr<linalg::GenericOp> generic = linalg::generalizeNamedOp(rewriter, op);
        if (succeeded(generic))
          op = cast<linalg::LinalgOp>(generic->getOperation());
      }
    Operation *last = run.back();
    Location loc = last->getLoc();
    OpBuilder b(last);
    int64_t work = 0;
    for (linalg::LinalgOp op : run) {
      int64_t n = 1;
      for (int64_t e : op.getStaticLoopRanges())
        n *= e;
      work += n;
    }
    LLVM_DEBUG(llvm::dbgs() << "a run of " << run.size() << " ops from "
                            << tcc::sourceName(run.front()) << " to " << tcc::sourceName(last)
                            << " over " << llvm::interleaved(rows.extents, "x") << " rows: one "
                            << (work >= minParallelWork ? "parallel" : "sequential")
                            << " loop (" << work << " iterations)\n");
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    SmallVector<Value> lbs(rows.k, zero), steps(rows.k, one), ubs;
    for (int64_t e : rows.extents)
      ubs.push_back(arith::ConstantIndexOp::create(b, loc, e));
    auto bodyBuilder = [&](OpBuilder &nb, Location l, ValueRange ivs) {
      emitRow(nb, l, run, rows, ivs);
    };
    if (work >= minParallelWork) {
      scf::ParallelOp::create(b, loc, lbs, ubs, steps,
                              [&](OpBuilder &nb, Location l, ValueRange ivs) {
                                bodyBuilder(nb, l, ivs);
                              });
    } else {
      scf::buildLoopNest(b, loc, lbs, ubs, steps, bodyBuilder);
    }
    for (linalg::LinalgOp op : run)
      op->erase();
  }

  /// Every op of RUN on row IVS: row-indexed operands through one subview
  /// per value (so a fill and the reduction it initializes share it).
  void emitRow(OpBuilder &b, Location loc, ArrayRef<linalg::LinalgOp> run, const Rows &rows,
               ValueRange ivs) {
    unsigned k = rows.k;
    DenseMap<Value, Value> rowViews;
    auto rowView = [&](Value v) {
      auto it = rowViews.find(v);
      if (it != rowViews.end())
        return it->second;
      auto type = cast<MemRefType>(v.getType());
      SmallVector<OpFoldResult> offsets(ivs.begin(), ivs.end()), sizes, strides;
      offsets.resize(type.getRank(), b.getIndexAttr(0));
      for (unsigned d = 0; d < type.getRank(); ++d) {
        sizes.push_back(b.getIndexAttr(d < k ? 1 : type.getDimSize(d)));
        strides.push_back(b.getIndexAttr(1));
      }
      auto rowType = memref::SubViewOp::inferRankReducedResultType(
          type.getShape().drop_front(k), type, offsets, sizes, strides);
      Value view = memref::SubViewOp::create(b, loc, rowType, v, offsets, sizes, strides);
      rowViews[v] = view;
      return view;
    };
    // d0 .. dK-1 are the row; the rest shift down by K.
    auto dropRows = [&](AffineMap map) {
      MLIRContext *ctx = map.getContext();
      SmallVector<AffineExpr> dims;
      for (unsigned d = 0; d < map.getNumDims(); ++d)
        dims.push_back(d < k ? getAffineConstantExpr(0, ctx) : getAffineDimExpr(d - k, ctx));
      unsigned from = rowUse(map, k) == RowUse::Indexed ? k : 0;
      SmallVector<AffineExpr> results;
      for (unsigned r = from; r < map.getNumResults(); ++r)
        results.push_back(map.getResult(r).replaceDims(dims));
      return AffineMap::get(map.getNumDims() - k, 0, results, ctx);
    };
    for (linalg::LinalgOp op : run) {
      SmallVector<Value> operands;
      for (OpOperand &operand : op->getOpOperands()) {
        Value v = operand.get();
        bool indexed = isa<MemRefType>(v.getType()) &&
                       rowUse(op.getMatchingIndexingMap(&operand), k) == RowUse::Indexed;
        operands.push_back(indexed ? rowView(v) : v);
      }
      if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation())) {
        linalg::FillOp::create(b, fill.getLoc(), ValueRange{operands[0]},
                               ValueRange{operands[1]});
        continue;
      }
      auto generic = cast<linalg::GenericOp>(op.getOperation());
      SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
      unsigned numInputs = generic.getNumDpsInputs();
      SmallVector<AffineMap> newMaps;
      for (OpOperand &operand : op->getOpOperands())
        newMaps.push_back(dropRows(op.getMatchingIndexingMap(&operand)));
      auto row = linalg::GenericOp::create(
          b, generic.getLoc(), TypeRange{}, ArrayRef(operands).take_front(numInputs),
          ArrayRef(operands).drop_front(numInputs), newMaps,
          ArrayRef(iterators).drop_front(k));
      IRMapping mapping;
      generic.getRegion().cloneInto(&row.getRegion(), mapping);
      // Row indices are the loop's; the others move down by K.
      SmallVector<linalg::IndexOp> indices;
      row.getRegion().walk([&](linalg::IndexOp index) { indices.push_back(index); });
      for (linalg::IndexOp index : indices) {
        OpBuilder ib(index);
        uint64_t d = index.getDim();
        Value replacement = d < k ? ivs[d]
                                  : linalg::IndexOp::create(ib, index.getLoc(), d - k).getResult();
        index.replaceAllUsesWith(replacement);
        index.erase();
      }
    }
  }
};

} // namespace
