//===- Rematerialize.cpp - recompute forward values under a memory budget -===//
//
// On the joint training graph (tcc dialect, after CSE): values that stay live
// across the step's memory peak without being used there are recomputed
// right before their first use after it, from operands that are live there
// anyway or recomputed in turn, until the step's tensor-level peak fits the
// budget. Cheap-to-recompute, large-to-keep values go first; the cost of
// recomputing is the kernel cost model's (passes/graph/KernelCost.h).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/ByteSizes.h"
#include "dialects/TccNames.h"
#include "dialects/TccOps.h"
#include "passes/graph/KernelCost.h"
#include "passes/support/SourceNames.h"
#include "passes/training/RematSummary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tcc-rematerialize"

namespace tcc {
#define GEN_PASS_DEF_REMATERIALIZEPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// Whether OP may be recomputed: pure, tensor results, no region, and
/// deterministic in the bits it produces, the same in a clone. Constants
/// need no buffer; dropout and training-mode batch norm carry more than
/// their one value (the mask, the running statistics). Matmuls and
/// convolutions are the same library call on the same shapes; the
/// reductions a clone fuses into sum in an order fixed by their trip count
/// (compiler/LLVMCodegen.cpp, fixReductionOrder), whatever else their
/// kernel computes.
bool recomputable(Operation *op) {
  if (op->getNumResults() == 0 || op->getNumRegions() != 0 || !isPure(op) ||
      !llvm::all_of(op->getResultTypes(), [](Type t) { return isa<RankedTensorType>(t); }))
    return false;
  if (isa<tcc::ConstantOp, tcc::DropoutOp, tcc::BatchNormTrainingOp>(op))
    return false;
  return op->getDialect() && op->getDialect()->getNamespace() == "tcc";
}

/// Whether V was computed by a clone this pass made (its location says so).
bool isClone(Value v) {
  Operation *op = v.getDefiningOp();
  auto fused = op ? dyn_cast<FusedLoc>(op->getLoc()) : nullptr;
  auto mark = fused ? dyn_cast_or_null<DictionaryAttr>(fused.getMetadata()) : nullptr;
  return mark && mark.get(tcc::attr::recomputed);
}

/// A function's body as a schedule: op positions and each value's live
/// interval, and the tensor-level live bytes at every position.
struct Liveness {
  DenseMap<Operation *, int64_t> position;
  /// The values in the arena (results of ops; not parameters or state,
  /// which live in the state region, nor constants).
  struct Interval {
    Value value;
    int64_t start, end, size;
  };
  std::vector<Interval> intervals;
  DenseMap<Value, size_t> intervalOf;
  std::vector<int64_t> live;
  int64_t peak = 0, peakAt = 0;

  void compute(func::FuncOp func, int64_t base) {
    position.clear();
    intervals.clear();
    intervalOf.clear();
    Block &body = func.getBody().front();
    int64_t n = 0;
    for (Operation &op : body)
      position[&op] = n++;
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    for (Operation &op : body) {
      if (isa<tcc::ConstantOp>(op))
        continue;
      for (Value r : op.getResults()) {
        std::optional<int64_t> bytes = tcc::byteSize(r.getType());
        if (!bytes || *bytes == 0)
          continue;
        int64_t start = position[&op], end = start;
        for (OpOperand &use : r.getUses()) {
          int64_t at = position[use.getOwner()];
          // A parameter update lands in place, in the state region.
          if (use.getOwner() == ret.getOperation() &&
              func.getResultAttr(use.getOperandNumber(), tcc::attr::update))
            continue;
          end = std::max(end, at);
        }
        intervalOf[r] = intervals.size();
        intervals.push_back({r, start, end, *bytes});
      }
    }
    // Difference array over positions: a value is live from its definition
    // through its last use.
    std::vector<int64_t> delta(n + 1, 0);
    for (const Interval &i : intervals) {
      delta[i.start] += i.size;
      delta[i.end + 1] -= i.size;
    }
    live.assign(n, 0);
    int64_t running = base;
    peak = 0;
    peakAt = 0;
    for (int64_t p = 0; p < n; ++p) {
      running += delta[p];
      live[p] = running;
      if (running > peak) {
        peak = running;
        peakAt = p;
      }
    }
  }

  bool liveAt(Value v, int64_t p) const {
    auto it = intervalOf.find(v);
    if (it == intervalOf.end())
      return true; // an argument or a constant: no arena bytes of its own
    const Interval &i = intervals[it->second];
    return i.start <= p && p <= i.end;
  }
};

/// One way to lower the live bytes at the peak: recompute VALUE's op right
/// before the first of its uses after the peak, which then read the clone.
struct Candidate {
  Value value;
  /// The ops to clone, operands first: VALUE's op, and the ops of its
  /// operands that are not live at the peak either (a chain).
  SmallVector<Operation *> chain;
  /// Operands that the chain reads from earlier clones (after the peak,
  /// before BEFORE) instead of recomputing them again: a matmul whose
  /// result several recomputed values need (a fused q, k, v projection) is
  /// recomputed once.
  DenseMap<Value, Value> reuse;
  /// Earlier clones that the chain reuses although they come after BEFORE
  /// (a softmax recomputed for its backward, read again by the recomputed
  /// attention output that the projection's backward needs first): moved
  /// up to right before BEFORE, operands first, instead of a second copy.
  SmallVector<Operation *> hoist;
  /// Whether clones may be moved up (see RematerializePass::recompute).
  bool mayHoist = true;
  Operation *before = nullptr;
  int64_t freed = 0;
  /// The chain's arithmetic, as the kernel cost model weighs it
  /// (tcc::arithmetic: iterations x cost per point).
  double flops = 0;
  /// The operands that are dead at the peak and that the chain reads
  /// without recomputing them: they become live across it (their bytes are
  /// already taken off FREED).
  SmallVector<Value, 2> extended;
  double score() const { return double(freed) / (flops + 1.0); }
};

/// Several candidates that each make the same one value live across the
/// peak (and nothing else): alone, each frees its own bytes less that
/// value's, together they pay for it once. The three products of a
/// decomposed GELU that its backward reads all come from fc1's output,
/// which nothing else keeps: recomputing them from it frees two of three
/// buffers, where each alone frees nothing and the greedy went on to
/// recompute fc1's matmul instead.
struct Group {
  Value shared;
  SmallVector<Value> members;
  int64_t freed = 0;
  double flops = 0;
  double score() const { return double(freed) / (flops + 1.0); }
};

class RematerializePass : public tcc::impl::RematerializePassBase<RematerializePass> {
public:
  using RematerializePassBase::RematerializePassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (mode == tcc::RematMode::Off || func.getBody().empty() ||
        (mode == tcc::RematMode::Auto && arenaBudget < 0))
      return;
    // Only training entries (those that update parameters) have a backward
    // pass to recompute in; inference keeps its forward as it is.
    bool updates = false;
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      updates |= bool(func.getResultAttr(i, tcc::attr::update));
    if (!updates)
      return;
    rematerialize(func);
  }

private:
  /// Arena bytes of the function's inputs (always live; parameters and
  /// state are in the state region).
  static int64_t inputBytes(func::FuncOp func) {
    int64_t bytes = 0;
    for (BlockArgument arg : func.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), tcc::attr::input))
        bytes += tcc::byteSize(arg.getType()).value_or(0);
    return bytes;
  }

  /// The position of the op computing each updated argument's new value:
  /// the old value must not be read after it (the update lands in place).
  static DenseMap<Value, int64_t> updateDeadlines(func::FuncOp func, const Liveness &l) {
    DenseMap<Value, int64_t> deadline;
    llvm::StringMap<Value> byName;
    for (BlockArgument arg : func.getArguments())
      for (StringRef role : {tcc::attr::param, tcc::attr::state})
        if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), role))
          byName[name.getValue()] = arg;
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (OpOperand &r : ret->getOpOperands()) {
      auto name = func.getResultAttrOfType<StringAttr>(r.getOperandNumber(), tcc::attr::update);
      Operation *def = r.get().getDefiningOp();
      if (!name || !def || !byName.count(name.getValue()))
        continue;
      int64_t at = l.position.lookup(def);
      auto [it, inserted] = deadline.try_emplace(byName[name.getValue()], at);
      if (!inserted)
        it->second = std::min(it->second, at);
    }
    return deadline;
  }

  /// Recomputing I's value; with KEEP, a value of its chain that the
  /// chain reads instead of recomputing it (it stays live across the peak).
  std::optional<Candidate> candidateFor(const Liveness::Interval &i, const Liveness &l,
                                        const DenseMap<Value, int64_t> &deadlines,
                                        Operation *keep = nullptr) const;
  void rematerialize(func::FuncOp func);
  /// What one greedy run recomputed, and the peak it left.
  struct Outcome {
    SmallVector<Attribute> recomputed;
    double flops = 0;
    int64_t peak = 0;
  };
  /// The greedy steps on FUNC down to TARGET; clones moved up (Candidate::
  /// hoist) only with HOIST.
  Outcome recompute(func::FuncOp func, int64_t base, int64_t target, bool hoist);
  bool hoistClones = true;
  Value apply(const Candidate &c, int64_t peakAt, const Liveness &l, int64_t id);
};

/// How deep a chain of recomputed operands goes.
constexpr unsigned kMaxDepth = 12;

/// An earlier clone, after the peak, that computes what DEF computes from
/// the same operands (or from the clones C reuses for them), after trying
/// the same for DEF's own operands that are dead at the peak (recorded in
/// C.reuse when found). One at or after FIRSTAT is taken when its operands
/// are there before FIRSTAT (or are moved up too): it joins C.hoist. Null
/// when there is none.
static Operation *reuseOf(Operation *def, int64_t firstAt, const Liveness &l, unsigned depth,
                          Candidate &c) {
  if (def->getNumOperands() == 0 || depth >= kMaxDepth)
    return nullptr;
  auto mapped = [&](Value v) { return c.reuse.lookup(v) ? c.reuse.lookup(v) : v; };
  for (Value operand : def->getOperands()) {
    Operation *producer = operand.getDefiningOp();
    if (l.liveAt(operand, l.peakAt) || c.reuse.count(operand) || !producer ||
        !recomputable(producer) || isClone(operand))
      continue;
    if (Operation *clone = reuseOf(producer, firstAt, l, depth + 1, c))
      c.reuse[operand] = clone->getResult(cast<OpResult>(operand).getResultNumber());
  }
  auto availableBefore = [&](Operation *op) {
    return llvm::all_of(op->getOperands(), [&](Value v) {
      Operation *producer = v.getDefiningOp();
      return !producer || llvm::is_contained(c.hoist, producer) ||
             l.position.lookup(producer) < firstAt;
    });
  };
  for (Operation *user : mapped(def->getOperand(0)).getUsers()) {
    if (user == def || user->getName() != def->getName() ||
        user->getNumResults() != def->getNumResults() || !isClone(user->getResult(0)))
      continue;
    int64_t at = l.position.lookup(user);
    if (at <= l.peakAt || (at >= firstAt && (!c.mayHoist || !availableBefore(user))))
      continue;
    if (!OperationEquivalence::isEquivalentTo(
            def, user, [&](Value a, Value b) { return success(mapped(a) == b); }, nullptr,
            OperationEquivalence::IgnoreLocations))
      continue;
    if (at >= firstAt && !llvm::is_contained(c.hoist, user))
      c.hoist.push_back(user);
    return user;
  }
  return nullptr;
}

/// Adds OP and, operands first, the recomputable producers of its operands
/// that are dead at the peak (up to a depth) to C's chain; an operand that
/// is neither live at the peak nor recomputed becomes live across it, and
/// one that an earlier clone already recomputes is read from there.
/// False when an operand is a parameter updated before FIRSTAT.
static bool collectChain(Operation *op, int64_t firstAt, const Liveness &l,
                         const DenseMap<Value, int64_t> &deadlines, unsigned depth,
                         Operation *keep, Candidate &c) {
  for (Value operand : op->getOperands()) {
    auto deadline = deadlines.find(operand);
    if (deadline != deadlines.end() && deadline->second <= firstAt)
      return false;
    if (l.liveAt(operand, l.peakAt) || llvm::is_contained(c.chain, operand.getDefiningOp()) ||
        c.reuse.count(operand))
      continue;
    Operation *def = operand.getDefiningOp();
    if (def && depth < kMaxDepth && recomputable(def) && !isClone(operand) && def != keep) {
      if (Operation *clone = reuseOf(def, firstAt, l, depth + 1, c)) {
        c.reuse[operand] = clone->getResult(cast<OpResult>(operand).getResultNumber());
        continue;
      }
      if (!collectChain(def, firstAt, l, deadlines, depth + 1, keep, c))
        return false;
      continue;
    }
    if (!llvm::is_contained(c.extended, operand)) {
      c.freed -= l.intervals[l.intervalOf.lookup(operand)].size;
      c.extended.push_back(operand);
    }
  }
  c.chain.push_back(op);
  c.flops += tcc::arithmetic(op);
  return true;
}

std::optional<Candidate>
RematerializePass::candidateFor(const Liveness::Interval &i, const Liveness &l,
                                const DenseMap<Value, int64_t> &deadlines, Operation *keep) const {
  int64_t p = l.peakAt;
  // Live across the peak, and not read there.
  if (!(i.start < p && p < i.end))
    return std::nullopt;
  // A clone is not recomputed again: each value moves at most once, which
  // bounds the steps and keeps two clones from trading one peak forever.
  Operation *def = i.value.getDefiningOp();
  if (!def || !recomputable(def) || isClone(i.value))
    return std::nullopt;
  Operation *first = nullptr;
  int64_t firstAt = INT64_MAX;
  for (OpOperand &use : i.value.getUses()) {
    int64_t at = l.position.lookup(use.getOwner());
    if (at == p)
      return std::nullopt;
    if (at > p && at < firstAt) {
      firstAt = at;
      first = use.getOwner();
    }
  }
  if (!first || isa<func::ReturnOp>(first))
    return std::nullopt;
  Candidate c;
  c.mayHoist = hoistClones;
  c.value = i.value;
  c.before = first;
  c.freed = i.size;
  if (!collectChain(def, firstAt, l, deadlines, 0, keep, c))
    return std::nullopt;
  // One that frees nothing alone may still join a group (see Group).
  if (c.freed <= 0 && c.extended.size() != 1)
    return std::nullopt;
  return c;
}

Value RematerializePass::apply(const Candidate &c, int64_t peakAt, const Liveness &l,
                               int64_t id) {
  OpBuilder b(c.before);
  IRMapping map;
  // Marked in their locations (which lowering keeps): the ops they lower
  // to get a distinct attribute (tcc-keep-recomputed) before the CSE after
  // fusion, which would otherwise merge them back into the originals.
  MLIRContext *ctx = c.before->getContext();
  NamedAttrList mark;
  mark.append(tcc::attr::recomputed, IntegerAttr::get(IntegerType::get(ctx, 64), id));
  DictionaryAttr metadata = mark.getDictionary(ctx);
  for (Operation *op : c.hoist)
    op->moveBefore(c.before);
  for (auto [original, clone] : c.reuse)
    map.map(original, clone);
  for (Operation *op : c.chain) {
    Operation *clone = b.clone(*op, map);
    clone->setLoc(FusedLoc::get(ctx, {op->getLoc()}, metadata));
  }
  Value copy = map.lookup(c.value);
  Value original = c.value;
  original.replaceUsesWithIf(copy, [&](OpOperand &use) {
    return l.position.lookup(use.getOwner()) > peakAt;
  });
  return copy;
}

/// Erases the ops of FUNC that nothing reads any more (recomputed values
/// whose every use moved to a clone); pure, so nothing else changes.
static void eraseDead(func::FuncOp func) {
  Block &body = func.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (!op.hasTrait<OpTrait::IsTerminator>() && op.use_empty() && isPure(&op) &&
        op.getDialect() && op.getDialect()->getNamespace() == "tcc")
      op.erase();
}

/// Results at most this large are "small": moving their computation to
/// right after its inputs frees the inputs sooner and keeps next to nothing.
constexpr int64_t kSmallResultBytes = 64;

/// The tail of the step: pure tcc ops whose every result flows only into
/// the function's results (the optimizer's updates, the gradient norm, the
/// loss), through other tail ops.
static DenseSet<Operation *> tailOps(Block &body) {
  DenseSet<Operation *> tail;
  for (Operation &op : llvm::reverse(body)) {
    if (op.hasTrait<OpTrait::IsTerminator>() || op.getNumResults() == 0 || !isPure(&op) ||
        op.getNumRegions() != 0 || !op.getDialect() || op.getDialect()->getNamespace() != "tcc")
      continue;
    if (llvm::all_of(op.getUsers(), [&](Operation *user) {
          return tail.contains(user) || user->hasTrait<OpTrait::IsTerminator>();
        }))
      tail.insert(&op);
  }
  return tail;
}

/// Moves each update of a parameter or optimizer state, and each small
/// value of the step's tail (a gradient's share of the norm), with the tail
/// ops only it reads, to right after the last op it waits for: its inputs,
/// and, for an update, every other read of the old value (the update lands
/// in place). BuildTrainStep emits the optimizer after the whole backward,
/// which keeps every gradient live to the end; moved up, a gradient dies
/// where its update runs, as in PyTorch's optimizer-in-backward. The same
/// ops on the same operands in the same order within each chain: the bits
/// do not change, nor does any value live longer but small ones and the
/// updates themselves (in the state region).
static void scheduleUpdatesEarly(func::FuncOp func) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  llvm::StringMap<BlockArgument> argOf;
  for (BlockArgument arg : func.getArguments())
    for (StringRef role : {tcc::attr::param, tcc::attr::state})
      if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), role))
        argOf[name.getValue()] = arg;
  DenseMap<Operation *, BlockArgument> updates; // update def -> the argument it replaces
  for (OpOperand &r : ret->getOpOperands())
    if (auto name = func.getResultAttrOfType<StringAttr>(r.getOperandNumber(), tcc::attr::update))
      if (Operation *def = r.get().getDefiningOp(); def && argOf.count(name.getValue()))
        updates[def] = argOf[name.getValue()];
  DenseSet<Operation *> tail = tailOps(body), moved;
  for (Operation *root : llvm::to_vector(llvm::make_pointer_range(body))) {
    if (!tail.contains(root) || moved.contains(root))
      continue;
    bool small = llvm::all_of(root->getResults(), [](Value v) {
      return tcc::byteSize(v.getType()).value_or(INT64_MAX) <= kSmallResultBytes;
    });
    if (!updates.count(root) && !small)
      continue;
    // The tree: ROOT and the tail ops that only it (through the tree) reads.
    SetVector<Operation *> tree;
    tree.insert(root);
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t i = 0; i < tree.size(); ++i)
        for (OpOperand &use : tree[i]->getOpOperands()) {
          Operation *def = use.get().getDefiningOp();
          if (!def || !tail.contains(def) || tree.contains(def))
            continue;
          if (!moved.contains(def) &&
              llvm::all_of(def->getUsers(), [&](Operation *u) { return tree.contains(u); })) {
            grew |= tree.insert(def);
            continue;
          }
          // A shared broadcast of the step's scalars (CSE merged those of
          // one shape across parameters): each tree gets its own copy, which
          // fusion folds into the update's kernel.
          if (isa<tcc::BroadcastInDimOp>(def) && isa<BlockArgument>(def->getOperand(0))) {
            OpBuilder b(tree[i]);
            Operation *copy = b.clone(*def);
            use.set(copy->getResult(0));
            tail.insert(copy);
            grew |= tree.insert(copy);
          }
        }
    }
    // The last op the tree waits for: its inputs, and the other readers of
    // the old value it replaces.
    Operation *anchor = nullptr;
    auto later = [&](Operation *op) {
      if (op && op->getBlock() == &body && (!anchor || anchor->isBeforeInBlock(op)))
        anchor = op;
    };
    for (Operation *member : tree) {
      for (Value operand : member->getOperands())
        if (!tree.contains(operand.getDefiningOp()))
          later(operand.getDefiningOp());
      if (auto it = updates.find(member); it != updates.end())
        for (Operation *reader : it->second.getUsers())
          if (!tree.contains(reader))
            later(reader);
    }
    if (anchor && !anchor->isBeforeInBlock(root))
      continue;
    // An old value that another update replaces must still be read before
    // that update.
    bool blocked = false;
    for (Operation *member : tree)
      for (Value operand : member->getOperands())
        if (auto arg = dyn_cast<BlockArgument>(operand))
          for (auto [def, updated] : updates)
            blocked |= updated == arg && !tree.contains(def) && anchor &&
                        !anchor->isBeforeInBlock(def);
    if (blocked)
      continue;
    SmallVector<Operation *> order(tree.begin(), tree.end());
    llvm::sort(order, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    Operation *at = anchor;
    for (Operation *op : order) {
      if (at)
        op->moveAfter(at);
      else
        op->moveBefore(&body.front());
      at = op;
      moved.insert(op);
    }
  }
}

void RematerializePass::rematerialize(func::FuncOp func) {
  int64_t base = inputBytes(func);
  int64_t target = mode == tcc::RematMode::Max ? 0 : arenaBudget.getValue();
  Liveness l;
  l.compute(func, base);
  int64_t before = l.peak;
  if (l.peak > target) {
    // On a copy first: moved only where that lowers the peak (the moves
    // change the kernels' order and fusion, for nothing otherwise).
    auto trial = cast<func::FuncOp>(func->clone());
    scheduleUpdatesEarly(trial);
    Liveness t;
    t.compute(trial, base);
    bool lower = t.peak < l.peak;
    trial->erase();
    if (lower) {
      scheduleUpdatesEarly(func);
      l.compute(func, base);
    }
  }
  // A moved-up clone stays live from its new reader to its old one and is
  // never recomputed again: cheaper, but it can stop the greedy short of
  // a target that copies reach (--remat=max on the 6-layer GPT: 84.4 MiB
  // with moves, 70.4 without). Hence with moves first, and when that
  // misses the target also without, keeping the lower peak.
  auto withMoves = cast<func::FuncOp>(func->clone());
  Outcome chosen = recompute(withMoves, base, target, /*hoist=*/true);
  if (chosen.peak > target) {
    Outcome copies = recompute(func, base, target, /*hoist=*/false);
    if (copies.peak < chosen.peak)
      chosen = std::move(copies);
    else
      func.getBody().takeBody(withMoves.getBody());
  } else {
    func.getBody().takeBody(withMoves.getBody());
  }
  withMoves->erase();
  MLIRContext *ctx = &getContext();
  double stepFlops = 0;
  for (Operation &op : func.getBody().front())
    if (op.getNumResults() >= 1 && isa<RankedTensorType>(op.getResult(0).getType()) &&
        !isa<tcc::ConstantOp>(op))
      stepFlops += tcc::arithmetic(&op);
  // For the memory report: what was recomputed, the model's peaks.
  tcc::RematSummary summary;
  summary.recomputed = ArrayAttr::get(ctx, chosen.recomputed);
  summary.peakBefore = before;
  summary.peakAfter = chosen.peak;
  summary.recomputeFlops = chosen.flops;
  summary.stepFlops = stepFlops;
  tcc::writeRematSummary(func, summary);
}

RematerializePass::Outcome RematerializePass::recompute(func::FuncOp func, int64_t base,
                                                        int64_t target, bool hoist) {
  hoistClones = hoist;
  Liveness l;
  l.compute(func, base);
  DenseSet<Value> refused; // candidates whose recomputation raised the peak
  SmallVector<Attribute> recomputed;
  MLIRContext *ctx = &getContext();
  double flops = 0;
  // Each accepted step lowers the live bytes at the peak without raising
  // the peak; the bound only guards against trading equal peaks forever.
  int64_t steps = 0, maxSteps = 4 * int64_t(l.position.size()) + 16;
  auto record = [&](const Candidate &c) {
    flops += c.flops;
    Operation *def = c.value.getDefiningOp();
    NamedAttrList entry;
    entry.append("name", StringAttr::get(ctx, tcc::sourceName(def)));
    entry.append("op", StringAttr::get(ctx, def->getName().getStringRef()));
    entry.append("bytes", IntegerAttr::get(IntegerType::get(ctx, 64), c.freed));
    entry.append("flops", FloatAttr::get(Float64Type::get(ctx), c.flops));
    recomputed.push_back(entry.getDictionary(ctx));
  };
  DenseSet<Value> refusedGroups; // shared values of groups that raised the peak
  while (l.peak > target && steps++ < maxSteps) {
    DenseMap<Value, int64_t> deadlines = updateDeadlines(func, l);
    std::optional<Candidate> best;
    // Candidates that make one value live across the peak, by that value.
    llvm::MapVector<Value, SmallVector<Candidate>> byShared;
    for (const Liveness::Interval &i : l.intervals) {
      std::optional<Candidate> full = candidateFor(i, l, deadlines);
      if (!full)
        continue;
      // The whole chain, and the chain cut at each value it recomputes
      // (which it then reads, kept, instead).
      SmallVector<Candidate> variants{*full};
      for (Operation *op : full->chain)
        if (op != i.value.getDefiningOp())
          if (std::optional<Candidate> cut = candidateFor(i, l, deadlines, op))
            variants.push_back(*cut);
      for (Candidate &c : variants) {
        if (c.extended.size() == 1 && !refusedGroups.contains(c.extended.front())) {
          // One variant per value and shared value: the cheapest.
          SmallVector<Candidate> &members = byShared[c.extended.front()];
          auto same = llvm::find_if(members, [&](const Candidate &m) { return m.value == c.value; });
          if (same == members.end())
            members.push_back(c);
          else if (c.flops < same->flops)
            *same = c;
        }
        if (c.freed > 0 && !refused.contains(i.value) && (!best || c.score() > best->score()))
          best = c;
      }
    }
    std::optional<Group> group;
    for (auto &[shared, members] : byShared) {
      if (members.size() < 2)
        continue;
      Group g;
      g.shared = shared;
      for (const Candidate &c : members) {
        g.members.push_back(c.value);
        g.freed += c.freed;
        g.flops += c.flops;
      }
      // Each member took the shared value's bytes off; it is kept once.
      g.freed += int64_t(members.size() - 1) * l.intervals[l.intervalOf.lookup(shared)].size;
      if (g.freed > 0 && (!group || g.score() > group->score()))
        group = g;
    }
    if (!best && !group)
      break;
    int64_t oldPeak = l.peak, oldAt = l.peakAt, oldLive = l.live[l.peakAt];
    // What this step cloned: (the candidate, its clone's value).
    SmallVector<std::pair<Candidate, Value>> applied;
    bool useGroup = group && (!best || group->score() > best->score());
    if (useGroup) {
      // The members one by one at the same peak (clones go after it, so
      // its position stays), each against the liveness the earlier ones
      // left: the shared value is live across the peak after the first.
      for (Value member : group->members) {
        l.compute(func, base);
        l.peakAt = oldAt;
        auto it = l.intervalOf.find(member);
        if (it == l.intervalOf.end())
          continue;
        std::optional<Candidate> c = candidateFor(l.intervals[it->second], l,
                                                  updateDeadlines(func, l),
                                                  group->shared.getDefiningOp());
        if (!c)
          continue;
        Value copy = apply(*c, oldAt, l, int64_t(recomputed.size() + applied.size()));
        applied.push_back({*c, copy});
      }
    } else {
      applied.push_back({*best, apply(*best, oldAt, l, int64_t(recomputed.size()))});
    }
    l.compute(func, base);
    if (l.peak > oldPeak || (l.peak == oldPeak && l.live[oldAt] >= oldLive)) {
      // Worse: undo (the clones' uses back to the originals; a later clone
      // may read an earlier one) and never again.
      for (auto &[c, copy] : llvm::reverse(applied))
        copy.replaceAllUsesWith(c.value);
      eraseDead(func);
      if (useGroup)
        refusedGroups.insert(group->shared);
      else
        refused.insert(best->value);
      l.compute(func, base);
      continue;
    }
    // The peak moved: what raised the old one may lower the new one.
    refused.clear();
    refusedGroups.clear();
    for (auto &[c, copy] : applied) {
      record(c);
      LLVM_DEBUG(llvm::dbgs() << "recompute " << tcc::sourceName(c.value.getDefiningOp())
                              << ": " << c.freed << " bytes for " << c.flops << " flops; peak "
                              << oldPeak << " -> " << l.peak << "\n");
    }
    // An original that only the backward read is gone (its point interval
    // would count at its old position otherwise); one original may be
    // another's only reader.
    eraseDead(func);
    l.compute(func, base);
  }
  eraseDead(func);
  l.compute(func, base);
  return {std::move(recomputed), flops, l.peak};
}

} // namespace

// The record's keys (tcc.remat's dictionary), spelled here only.
static constexpr llvm::StringLiteral kRecomputed = "recomputed", kPeakBefore = "peak_before",
                                     kPeakAfter = "peak_after",
                                     kRecomputeFlops = "recompute_flops",
                                     kStepFlops = "step_flops";

void tcc::writeRematSummary(func::FuncOp fn, const RematSummary &summary) {
  MLIRContext *ctx = fn.getContext();
  auto i64 = IntegerType::get(ctx, 64);
  auto f64 = Float64Type::get(ctx);
  NamedAttrList record;
  record.append(kRecomputed, summary.recomputed ? summary.recomputed : ArrayAttr::get(ctx, {}));
  record.append(kPeakBefore, IntegerAttr::get(i64, summary.peakBefore));
  record.append(kPeakAfter, IntegerAttr::get(i64, summary.peakAfter));
  record.append(kRecomputeFlops, FloatAttr::get(f64, summary.recomputeFlops));
  record.append(kStepFlops, FloatAttr::get(f64, summary.stepFlops));
  fn->setAttr(tcc::attr::remat, record.getDictionary(ctx));
}

std::optional<tcc::RematSummary> tcc::readRematSummary(func::FuncOp fn) {
  auto record = fn ? fn->getAttrOfType<DictionaryAttr>(tcc::attr::remat) : nullptr;
  if (!record)
    return std::nullopt;
  RematSummary summary;
  summary.recomputed = record.getAs<ArrayAttr>(kRecomputed);
  if (auto v = record.getAs<IntegerAttr>(kPeakBefore))
    summary.peakBefore = v.getInt();
  if (auto v = record.getAs<IntegerAttr>(kPeakAfter))
    summary.peakAfter = v.getInt();
  if (auto v = record.getAs<FloatAttr>(kRecomputeFlops))
    summary.recomputeFlops = v.getValueAsDouble();
  if (auto v = record.getAs<FloatAttr>(kStepFlops))
    summary.stepFlops = v.getValueAsDouble();
  return summary;
}
