//===- FuseElementwise.cpp - elementwise fusion under tcc's control -------===//
//
// The pattern sets are upstream's; what is tcc's is the decision of what may
// fuse (the control function). Issue 5's cost-driven fusion extends this.
//
//===----------------------------------------------------------------------===//

#include "dialects/ByteSizes.h"
#include "dialects/TccNames.h"
#include "passes/lowering/ConvBackward.h"
#include "passes/graph/KernelCost.h"
#include "passes/Passes.h"
#include "passes/support/SourceNames.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "tcc-fuse-elementwise"

namespace tcc {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// Where each kernel came from: the source ops (ONNX node names) that fused
/// into it, kept up to date through the rewrites by a listener.
struct Provenance : RewriterBase::Listener {
  DenseMap<Operation *, SmallVector<std::string>> origins;
  /// The fusion the control function allowed last: upstream's pattern
  /// builds the fused op right after asking, and redirects the uses of the
  /// consumer's results to it (no replaceOp to observe).
  Operation *pendingProducer = nullptr, *pendingConsumer = nullptr;

  void notifyOperationReplaced(Operation *op, ValueRange replacement) override {
    SmallVector<std::string> merged = origins.lookup(op);
    if (merged.empty())
      return;
    for (Value v : replacement)
      if (Operation *def = v.getDefiningOp(); def && def != op) {
        SmallVector<std::string> &to = origins[def];
        for (const std::string &m : merged)
          if (!llvm::is_contained(to, m))
            to.push_back(m);
      }
  }
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (!pendingConsumer || !isa<linalg::LinalgOp>(op))
      return;
    SmallVector<std::string> &to = origins[op];
    for (Operation *from : {pendingConsumer, pendingProducer})
      for (const std::string &m : origins.lookup(from))
        if (!llvm::is_contained(to, m))
          to.push_back(m);
    pendingProducer = pendingConsumer = nullptr;
  }
  void notifyOperationErased(Operation *op) override {
    origins.erase(op);
    if (op == pendingProducer || op == pendingConsumer)
      pendingProducer = pendingConsumer = nullptr;
  }
};

/// The most a producer may cost per point (KernelCostOpInterface weights)
/// to be recomputed in each of its consumers: four simple arith ops; any
/// division, gather or transcendental function is above it.
constexpr double kCheapCostPerPoint = 4 * tcc::cost::kSimple;

/// A producer cheap enough to recompute in each of its consumers: an
/// all-parallel generic with one result whose body costs at most
/// kCheapCostPerPoint.
bool isCheapToRecompute(linalg::GenericOp producer) {
  auto cost = dyn_cast<tcc::KernelCostOpInterface>(producer.getOperation());
  return cost && producer.getNumReductionLoops() == 0 && producer->getNumResults() == 1 &&
         cost.getCostPerPoint() <= kCheapCostPerPoint;
}

/// A library product: a named linalg op, or a convolution gradient's
/// generic (passes/lowering/ConvBackward.h). Such an op stays whole.
bool isLibraryProduct(Operation *op) {
  return isa<linalg::LinalgOp>(op) && (!isa<linalg::GenericOp>(op) || tcc::isConvBackward(op));
}

/// The rounding of a 16-bit product's f32 sums to 16 bits: an all-parallel
/// generic whose body is one truncf of its one input, that input the f32
/// result (or a reshape of it) of a library product of 16-bit operands
/// that nothing else reads. tcc-mark-library-calls has the call write the
/// 16-bit result itself (`matchRounding`) when the rounding is its own op;
/// fused into its reader, the call would write its f32 sums to memory for
/// the reader to round. The reader reads the rounded value either way, so
/// keeping it apart changes no number. (Sums that more than their rounding
/// reads — a batch norm's statistics, a residual — have another reader
/// and are not this.)
bool isProductRounding(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return false;
  Block &body = op.getRegion().front();
  auto trunc = dyn_cast<arith::TruncFOp>(body.front());
  if (body.getOperations().size() != 2 || !trunc || trunc.getIn() != body.getArgument(0) ||
      body.getTerminator()->getOperand(0) != trunc.getResult())
    return false;
  Value sums = op.getDpsInputs()[0];
  while (sums.hasOneUse() && isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
                                 sums.getDefiningOp()))
    sums = sums.getDefiningOp()->getOperand(0);
  Operation *product = sums.getDefiningOp();
  if (!sums.hasOneUse() || !product || !isLibraryProduct(product) ||
      !getElementTypeOrSelf(sums.getType()).isF32())
    return false;
  auto linalgOp = cast<linalg::LinalgOp>(product);
  return linalgOp.getNumReductionLoops() > 0 &&
         llvm::all_of(linalgOp.getDpsInputs(), [](Value v) {
           Type t = getElementTypeOrSelf(v.getType());
           return t.isBF16() || t.isF16();
         });
}

/// Whether recomputing PRODUCER in every consumer moves fewer bytes than
/// writing its result once and reading it in each: every use an input of a
/// generic (so each can fuse), and users x (bytes of its inputs) < (bytes
/// of its inputs) + (1 + users) x (bytes of its result), the byte counts
/// from the cost interface (a broadcast bias counts its own size).
bool duplicationPays(linalg::GenericOp producer) {
  int64_t users = 0;
  for (OpOperand &use : producer->getResult(0).getUses()) {
    auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!consumer || !consumer.isDpsInput(&use))
      return false;
    ++users;
  }
  auto cost = cast<tcc::KernelCostOpInterface>(producer.getOperation());
  int64_t result = tcc::byteSize(producer->getResult(0).getType()).value_or(0);
  int64_t inputs = cost.getMinimumBytes() - result; // the outputs are not read
  return users * inputs < inputs + (1 + users) * result;
}

/// The intermediates that V stands for in a fused kernel: V itself, or,
/// through the single-use elementwise generics that will fuse with their
/// reader (a broadcast bias, a rounding), the values they read. Function
/// arguments and constants are not intermediates.
void collectSources(Value v, SmallVectorImpl<Value> &sources, unsigned depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || def->hasTrait<OpTrait::ConstantLike>())
    return;
  auto generic = dyn_cast<linalg::GenericOp>(def);
  if (generic && depth < 4 && v.hasOneUse() && generic->getNumResults() == 1 &&
      generic.getNumReductionLoops() == 0) {
    for (OpOperand *in : generic.getDpsInputOperands())
      collectSources(in->get(), sources, depth + 1);
    return;
  }
  sources.push_back(v);
}

/// Whether V, or a reshape of it (the same buffer), is used at or after
/// POINT, an op of BLOCK.
bool usedAtOrAfter(Value v, Operation *point, Block *block) {
  for (Operation *user : v.getUsers()) {
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user) &&
        usedAtOrAfter(user->getResult(0), point, block))
      return true;
    Operation *top = block->findAncestorOpInBlock(*user);
    if (!top || top == point || point->isBeforeInBlock(top))
      return true;
  }
  return false;
}

/// Whether recomputing PRODUCER in every consumer keeps no larger buffer
/// alive than its result would: each consumer then reads the producer's
/// inputs instead of its result, so an input whose last use comes before
/// the last consumer lives until that consumer. When such an input is larger
/// than the result (a rounding of an f32 product to 16 bits, read again by
/// the backward pass: the f32 product would live instead of the 16-bit
/// value), the result is written once instead. Inputs no larger than the
/// result keep the traffic rule (`duplicationPays`) alone: recomputing
/// x - mean from x moves x's life, not more.
bool duplicationKeepsMemory(linalg::GenericOp producer) {
  int64_t result = tcc::byteSize(producer->getResult(0).getType()).value_or(0);
  SmallVector<Value> sources;
  for (OpOperand *in : producer.getDpsInputOperands())
    collectSources(in->get(), sources);
  auto larger = [&](Value v) { return tcc::byteSize(v.getType()).value_or(0) > result; };
  llvm::erase_if(sources, [&](Value v) { return !larger(v); });
  if (sources.empty()) // the common case: no program order needed
    return true;
  Block *block = producer->getBlock();
  Operation *lastConsumer = producer;
  for (Operation *user : producer->getResult(0).getUsers()) {
    Operation *top = block->findAncestorOpInBlock(*user);
    if (!top) // a user outside the block: no order to reason with
      return false;
    if (lastConsumer->isBeforeInBlock(top))
      lastConsumer = top;
  }
  return llvm::all_of(sources, [&](Value v) {
    Value root = v;
    while (Operation *def = root.getDefiningOp())
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
        root = def->getOperand(0);
      else
        break;
    return usedAtOrAfter(root, lastConsumer, block);
  });
}

/// Whether the kernel that merges generics A and B stays within MAXSIZE
/// body ops and MAXSIZE operands (an upper bound on what the merge holds).
/// Fusing a chain copies the growing body at every step, so an unbounded
/// chain of n ops costs n^2 here and ends as one basic block of n ops, over
/// which LLVM's register allocator takes superlinear time; with the bound
/// both are linear in n. Real kernels stay far below it.
bool mergeFits(linalg::GenericOp a, linalg::GenericOp b, unsigned maxSize) {
  auto bodyOps = [](linalg::GenericOp op) { return op.getBody()->getOperations().size() - 1; };
  return a->getNumOperands() + b->getNumOperands() <= maxSize + 1 &&
         bodyOps(a) + bodyOps(b) <= maxSize;
}

/// The arguments of a function that a result updates in place (a parameter
/// or optimizer state named by a tcc.update result), by argument number:
/// the result's number. Bufferization writes the new value over the
/// argument where the op computing it runs.
class InPlaceUpdates {
public:
  /// Whether moving OP's reads to TO (fusing OP into TO, or OP taking TO's
  /// place) would read an argument after the op that writes its new value
  /// over it: a recomputed value (tcc-rematerialize) that reads a
  /// parameter right before its backward consumer must not move into a
  /// consumer after the parameter's update.
  bool readsPastUpdate(Operation *op, Operation *to) const {
    auto func = dyn_cast_or_null<func::FuncOp>(to->getParentOp());
    if (!func || !func.getBody().hasOneBlock())
      return false;
    const DenseMap<unsigned, unsigned> &result = resultsOf(func);
    Operation *ret = to->getBlock()->getTerminator();
    for (Value v : op->getOperands()) {
      while (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(v.getDefiningOp()))
        v = v.getDefiningOp()->getOperand(0);
      auto arg = dyn_cast<BlockArgument>(v);
      auto it = arg && arg.getOwner() == to->getBlock() ? result.find(arg.getArgNumber())
                                                        : result.end();
      if (it == result.end())
        continue;
      Operation *update = ret->getOperand(it->second).getDefiningOp();
      Operation *top = update ? to->getBlock()->findAncestorOpInBlock(*update) : nullptr;
      if (top && top != to && top->isBeforeInBlock(to))
        return true;
    }
    return false;
  }

  /// Whether a result of OP is a function result that updates an argument
  /// in place (which must stay a fresh buffer of the argument's type).
  bool isUpdate(Operation *op) const {
    auto func = dyn_cast_or_null<func::FuncOp>(op->getParentOp());
    if (!func || !func.getBody().hasOneBlock())
      return false;
    for (OpOperand &use : op->getUses())
      if (use.getOwner() == op->getBlock()->getTerminator() &&
          func.getResultAttr(use.getOperandNumber(), tcc::attr::update))
        return true;
    return false;
  }

private:
  /// FUNC's updated arguments: argument number -> result number.
  const DenseMap<unsigned, unsigned> &resultsOf(func::FuncOp func) const {
    auto [it, inserted] = cache.try_emplace(func.getOperation());
    if (!inserted)
      return it->second;
    llvm::StringMap<unsigned> resultOf;
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (auto name = func.getResultAttrOfType<StringAttr>(i, tcc::attr::update))
        resultOf[name.getValue()] = i;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      for (StringRef role : {tcc::attr::param, tcc::attr::state})
        if (auto name = func.getArgAttrOfType<StringAttr>(i, role))
          if (auto r = resultOf.find(name.getValue()); r != resultOf.end())
            it->second[i] = r->second;
    return it->second;
  }
  mutable DenseMap<Operation *, DenseMap<unsigned, unsigned>> cache;
};

/// Fuse (or propagate a reshape) across FUSED only between generics, only
/// when the fused kernel fits MAXSIZE, and only when the producer has no
/// other use or is cheap to recompute in each (never duplicating an
/// expensive producer, nor one whose recomputation keeps more alive),
/// never moving a read of an argument past its in-place update.
bool mayFuse(OpOperand *fused, unsigned maxSize, const InPlaceUpdates &updates) {
  Operation *producer = fused->get().getDefiningOp();
  Operation *consumer = fused->getOwner();
  if (!producer || updates.readsPastUpdate(producer, consumer))
    return false;
  // A reshape is not propagated through an update: it would compute the
  // new value in another shape and return a reshape of it.
  bool reshape = isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(producer) ||
                 isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(consumer);
  if (reshape && (updates.isUpdate(producer) || updates.isUpdate(consumer)))
    return false;
  if (isLibraryProduct(producer) || isLibraryProduct(consumer))
    return false;
  auto producerGeneric = dyn_cast<linalg::GenericOp>(producer);
  auto consumerGeneric = dyn_cast<linalg::GenericOp>(consumer);
  if (producerGeneric && isProductRounding(producerGeneric))
    return false;
  if (!producer->hasOneUse() &&
      !(producerGeneric && consumerGeneric && isCheapToRecompute(producerGeneric) &&
        duplicationPays(producerGeneric) && duplicationKeepsMemory(producerGeneric)))
    return false;
  // Last: the body sizes take a walk over both bodies, and a consumer is
  // asked about each of its operands every time it changes.
  return !producerGeneric || !consumerGeneric ||
         mergeFits(producerGeneric, consumerGeneric, maxSize);
}

/// A body of arith and math ops only (no gathers, no index arithmetic):
/// what CPU codegen vectorizes, and what merging keeps vectorizable.
bool hasArithBody(linalg::GenericOp op) {
  return llvm::all_of(op.getBody()->without_terminator(), [](Operation &o) {
    return isa<arith::ArithDialect, math::MathDialect>(o.getDialect());
  });
}

/// Whether every use of OP's results is in OP's block after AFTER (so that a
/// replacement created at AFTER dominates them all).
bool usedOnlyAfter(Operation *op, Operation *after) {
  Block *block = after->getBlock();
  for (Operation *user : op->getUsers()) {
    Operation *top = block->findAncestorOpInBlock(*user);
    if (!top || top == after || !after->isBeforeInBlock(top))
      return false;
  }
  return true;
}

/// Multi-output fusion of an expensive producer with several uses into an
/// elementwise consumer: the fused op computes the producer once, yields
/// its value for the other users and the consumer's result, so the
/// consumer no longer reads it back (one pass over memory less, nothing
/// recomputed). Only when every other use comes after the consumer (the
/// fused op replaces the producer there) and both index the value with the
/// identity (the kept result has the consumer's layout).
struct FuseMultiUseProducer : OpRewritePattern<linalg::GenericOp> {
  FuseMultiUseProducer(MLIRContext *ctx, unsigned maxSize, const InPlaceUpdates &updates)
      : OpRewritePattern(ctx), maxSize(maxSize), updates(updates) {}
  unsigned maxSize;
  const InPlaceUpdates &updates;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!consumer.hasPureTensorSemantics() || consumer.getNumReductionLoops() != 0 ||
        !llvm::all_of(consumer.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isProjectedPermutation(); }))
      return failure();
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      if (!producer || producer->getNumResults() != 1 || producer->hasOneUse() ||
          isProductRounding(producer) || producer->getBlock() != consumer->getBlock() ||
          !producer.hasPureTensorSemantics() || producer.getNumReductionLoops() != 0 ||
          !consumer.getMatchingIndexingMap(operand).isIdentity() ||
          !producer.getIndexingMapMatchingResult(producer->getResult(0)).isIdentity() ||
          !mergeFits(producer, consumer, maxSize) || updates.readsPastUpdate(producer, consumer))
        continue;
      // The consumer reads the value through this operand only.
      if (llvm::count_if(consumer->getOperands(),
                         [&](Value v) { return v == operand->get(); }) != 1)
        continue;
      bool laterUses = llvm::all_of(producer->getUses(), [&](OpOperand &use) {
        Operation *top = consumer->getBlock()->findAncestorOpInBlock(*use.getOwner());
        return use.getOwner() == consumer ||
               (top && top != consumer && consumer->isBeforeInBlock(top));
      });
      if (!laterUses || !linalg::areElementwiseOpsFusable(operand))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, operand);
      if (failed(fused))
        continue;
      Value kept = fused->replacements.lookup(producer->getResult(0));
      if (!kept) { // not preserved after all: undo
        rewriter.eraseOp(fused->fusedOp);
        continue;
      }
      LLVM_DEBUG(llvm::dbgs() << "multi-output: " << tcc::sourceName(producer) << " into "
                              << tcc::sourceName(consumer) << ", its value kept for the others\n");
      SmallVector<Value> results;
      for (Value r : consumer->getResults())
        results.push_back(fused->replacements.lookup(r));
      rewriter.replaceOp(consumer, results);
      rewriter.replaceOp(producer, kept);
      return success();
    }
    return failure();
  }
};

/// Multi-output fusion of siblings: two generics over the same iteration
/// space that read a common input (with the same indexing map) become one
/// generic with both results, reading the common input once. The merged op
/// takes the later sibling's place, so the earlier one's results must be
/// used only after it. Both bodies are arith / math only and every operand
/// walks the innermost loop in the same way, so the merged kernel
/// vectorizes wherever the two did. Reductions merge only with
/// `reductions` (the CUDA block reduction carries one output).
struct FuseSiblings : OpRewritePattern<linalg::GenericOp> {
  FuseSiblings(MLIRContext *ctx, bool reductions, unsigned maxSize, const InPlaceUpdates &updates)
      : OpRewritePattern(ctx), reductions(reductions), maxSize(maxSize), updates(updates) {}
  bool reductions;
  unsigned maxSize;
  const InPlaceUpdates &updates;

  /// Whether every operand of OP that the innermost loop indexes has it as
  /// its last dimension (what CPU vectorization needs).
  static bool contiguous(linalg::GenericOp op) {
    unsigned inner = op.getNumLoops() - 1;
    AffineExpr innerDim = getAffineDimExpr(inner, op.getContext());
    return llvm::all_of(op.getIndexingMapsArray(), [&](AffineMap m) {
      for (unsigned r = 0; r < m.getNumResults(); ++r)
        if (m.getResult(r).isFunctionOfDim(inner))
          return r + 1 == m.getNumResults() && m.getResult(r) == innerDim;
      return true;
    });
  }

  /// The most operands of a merged kernel (keeps kernels small).
  static constexpr unsigned kMaxOperands = 12;
  /// The most readers of a common input that are searched for a sibling.
  static constexpr unsigned kMaxReaders = 64;

  /// Whether A can merge into B. The checks that cost O(1) come first: B
  /// is tried against every other reader of each of its inputs, and an
  /// input of a wide graph has thousands.
  bool compatible(linalg::GenericOp a, linalg::GenericOp b) const {
    return a != b && a->getBlock() == b->getBlock() && !tcc::isConvBackward(a) &&
           !tcc::isConvBackward(b) &&
           a->getNumOperands() + b->getNumOperands() <= kMaxOperands &&
           a->isBeforeInBlock(b) && a.hasPureTensorSemantics() && a.getNumLoops() != 0 &&
           (reductions || a.getNumReductionLoops() == 0) && mergeFits(a, b, maxSize) &&
           a.getIteratorTypesArray() == b.getIteratorTypesArray() && hasArithBody(a) &&
           a.getStaticLoopRanges() == b.getStaticLoopRanges() &&
           !llvm::any_of(a.getStaticLoopRanges(), ShapedType::isDynamic) &&
           contiguous(a) == contiguous(b) && usedOnlyAfter(a, b) &&
           !updates.readsPastUpdate(a, b);
  }

  LogicalResult matchAndRewrite(linalg::GenericOp b,
                                PatternRewriter &rewriter) const override {
    // A sibling has an input at least.
    if (b->getNumOperands() + 1 > kMaxOperands || !b.hasPureTensorSemantics() ||
        !hasArithBody(b))
      return failure();
    for (OpOperand *shared : b.getDpsInputOperands()) {
      // An input with more readers than kMaxReaders (the input of a wide
      // graph's thousand branches) anchors no merge: finding a sibling
      // means a look at every reader, for each of them.
      Value v = shared->get();
      if (!isa<RankedTensorType>(v.getType()) || v.hasNUsesOrMore(kMaxReaders + 1))
        continue;
      for (OpOperand &use : v.getUses()) {
        auto a = dyn_cast<linalg::GenericOp>(use.getOwner());
        if (!a || a->getNumOperands() + b->getNumOperands() > kMaxOperands ||
            !a.isDpsInput(&use) ||
            a.getMatchingIndexingMap(&use) != b.getMatchingIndexingMap(shared) ||
            !compatible(a, b))
          continue;
        LLVM_DEBUG(llvm::dbgs() << "siblings: " << tcc::sourceName(a) << " and "
                                << tcc::sourceName(b) << " read one input\n");
        merge(rewriter, a, b);
        return success();
      }
    }
    return failure();
  }

  static void merge(PatternRewriter &rewriter, linalg::GenericOp a, linalg::GenericOp b) {
    SmallVector<Value> inputs, outputs;
    SmallVector<AffineMap> inputMaps, outputMaps;
    IRMapping map;
    Block *blockA = a.getBody(), *blockB = b.getBody();
    // Inputs: A's, then B's that A does not read with the same map.
    SmallVector<std::pair<BlockArgument, unsigned>> argOf; // old arg -> new index
    auto addInput = [&](linalg::GenericOp op, OpOperand *in) {
      AffineMap m = op.getMatchingIndexingMap(in);
      for (unsigned i = 0; i < inputs.size(); ++i)
        if (inputs[i] == in->get() && inputMaps[i] == m)
          return argOf.push_back({op.getMatchingBlockArgument(in), i});
      argOf.push_back({op.getMatchingBlockArgument(in), unsigned(inputs.size())});
      inputs.push_back(in->get());
      inputMaps.push_back(m);
    };
    for (OpOperand *in : a.getDpsInputOperands())
      addInput(a, in);
    for (OpOperand *in : b.getDpsInputOperands())
      addInput(b, in);
    for (linalg::GenericOp op : {a, b})
      for (OpOperand &out : op.getDpsInitsMutable()) {
        argOf.push_back({op.getMatchingBlockArgument(&out),
                         unsigned(inputs.size() + outputs.size())});
        outputs.push_back(out.get());
        outputMaps.push_back(op.getMatchingIndexingMap(&out));
      }
    SmallVector<AffineMap> maps(inputMaps);
    maps.append(outputMaps);
    rewriter.setInsertionPoint(b);
    SmallVector<Type> resultTypes(a->getResultTypes());
    llvm::append_range(resultTypes, b->getResultTypes());
    auto merged = linalg::GenericOp::create(rewriter, b.getLoc(), resultTypes, inputs, outputs,
                                            maps, a.getIteratorTypesArray());
    SmallVector<Type> argTypes;
    SmallVector<Location> argLocs;
    for (Value v : llvm::concat<Value>(inputs, outputs)) {
      argTypes.push_back(getElementTypeOrSelf(v.getType()));
      argLocs.push_back(v.getLoc());
    }
    Block *body = rewriter.createBlock(&merged.getRegion(), {}, argTypes, argLocs);
    for (auto [old, index] : argOf)
      map.map(old, body->getArgument(index));
    SmallVector<Value> yields;
    for (Block *from : {blockA, blockB}) {
      for (Operation &op : from->without_terminator())
        rewriter.clone(op, map);
      for (Value y : from->getTerminator()->getOperands())
        yields.push_back(map.lookupOrDefault(y));
    }
    linalg::YieldOp::create(rewriter, b.getLoc(), yields);
    unsigned na = a->getNumResults();
    rewriter.replaceOp(a, merged.getResults().take_front(na));
    rewriter.replaceOp(b, merged.getResults().drop_front(na));
  }
};

struct FuseElementwisePass
    : tcc::impl::FuseElementwisePassBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Provenance provenance;
    int64_t before = 0, bytesBefore = 0;
    auto bytesMoved = [](linalg::LinalgOp op) -> int64_t {
      auto cost = dyn_cast<tcc::KernelCostOpInterface>(op.getOperation());
      return cost ? cost.getBytesMoved() : 0;
    };
    if (report)
      getOperation()->walk([&](linalg::LinalgOp op) {
        ++before;
        bytesBefore += bytesMoved(op);
        provenance.origins[op] = {tcc::sourceName(op)};
      });
    InPlaceUpdates updates;
    auto control = [&](OpOperand *fused) {
      if (!mayFuse(fused, maxKernelSize, updates))
        return false;
      LLVM_DEBUG({
        Operation *producer = fused->get().getDefiningOp(), *consumer = fused->getOwner();
        llvm::dbgs() << "fuse " << producer->getName() << " " << tcc::sourceName(producer)
                     << " into " << consumer->getName() << " " << tcc::sourceName(consumer)
                     << (producer->hasOneUse() ? "" : " (recomputed in each consumer)") << "\n";
      });
      provenance.pendingProducer = fused->get().getDefiningOp();
      provenance.pendingConsumer = fused->getOwner();
      return true;
    };
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    patterns.add<FuseMultiUseProducer>(ctx, maxKernelSize, updates);
    patterns.add<FuseSiblings>(ctx, siblingReductions, maxKernelSize, updates);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(patterns);
    GreedyRewriteConfig config;
    if (report) // the bookkeeping only serves the report
      config.setListener(&provenance);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    if (!report)
      return;
    SmallVector<linalg::LinalgOp> kernels;
    getOperation()->walk([&](linalg::LinalgOp op) { kernels.push_back(op); });
    std::string name = "?";
    if (auto symbol = dyn_cast<SymbolOpInterface>(getOperation()))
      name = symbol.getName().str();
    int64_t bytesAfter = 0;
    for (linalg::LinalgOp op : kernels)
      bytesAfter += bytesMoved(op);
    auto mib = [](int64_t bytes) {
      if (bytes >= 1048576)
        return llvm::formatv("{0:F2} MiB", bytes / 1048576.0).str();
      if (bytes >= 1024)
        return llvm::formatv("{0:F1} KiB", bytes / 1024.0).str();
      return llvm::formatv("{0} B", bytes).str();
    };
    llvm::errs() << "fusion @" << name << ": " << before << " kernels -> " << kernels.size()
                 << ", bytes moved " << mib(bytesBefore) << " -> " << mib(bytesAfter) << "\n";
    // Each fused kernel with its sources, and every kernel that moves more
    // than its operands' bytes (a transposed walk over a large operand).
    for (auto [k, op] : llvm::enumerate(kernels)) {
      const SmallVector<std::string> &from = provenance.origins.lookup(op);
      auto cost = dyn_cast<tcc::KernelCostOpInterface>(op.getOperation());
      bool strided = cost && cost.getBytesMoved() > cost.getMinimumBytes();
      if (from.size() < 2 && !strided)
        continue;
      llvm::errs() << "  kernel " << k << " (" << op->getName().getStringRef() << ", "
                   << op.getNumLoops() << " loops, " << op->getNumResults() << " results";
      if (cost)
        llvm::errs() << llvm::formatv(", cost {0} per point, moves {1} of minimum {2}",
                                      cost.getCostPerPoint(), mib(cost.getBytesMoved()),
                                      mib(cost.getMinimumBytes()));
      llvm::errs() << "): " << llvm::join(from, ", ") << "\n";
    }
  }
};

} // namespace
