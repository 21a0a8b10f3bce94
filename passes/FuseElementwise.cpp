//===- FuseElementwise.cpp - elementwise fusion under tcc's control -------===//
//
// The pattern sets are upstream's; what is tcc's is the decision of what may
// fuse (the control function). Issue 5's cost-driven fusion extends this.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

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

  static std::string name(Operation *op) {
    Location loc = op->getLoc();
    if (auto fused = dyn_cast<FusedLoc>(loc); fused && !fused.getLocations().empty())
      loc = fused.getLocations().front();
    if (auto n = dyn_cast<NameLoc>(loc))
      return n.getName().str();
    std::string s;
    llvm::raw_string_ostream os(s);
    loc.print(os);
    return s;
  }
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

/// A producer cheap enough to recompute in each of its consumers: an
/// all-parallel generic whose body is at most four arith ops, none a
/// division or remainder (no transcendental function, no reduction).
bool isCheapToRecompute(linalg::GenericOp producer) {
  if (producer.getNumReductionLoops() != 0 || producer->getNumResults() != 1)
    return false;
  int64_t ops = 0;
  for (Operation &op : producer.getBody()->without_terminator()) {
    if (isa<linalg::IndexOp>(op))
      continue;
    if (op.getDialect()->getNamespace() != "arith" ||
        isa<arith::DivFOp, arith::DivSIOp, arith::DivUIOp, arith::RemFOp, arith::RemSIOp,
            arith::RemUIOp, arith::CeilDivSIOp, arith::FloorDivSIOp>(op) ||
        ++ops > 4)
      return false;
  }
  return true;
}

/// Whether recomputing PRODUCER in every consumer moves fewer bytes than
/// writing its result once and reading it in each: every use an input of a
/// generic (so each can fuse), and users * inputs < inputs + 1 + users
/// (in units of the result's size; a broadcast input counts as one).
bool duplicationPays(linalg::GenericOp producer) {
  int64_t users = 0;
  for (OpOperand &use : producer->getResult(0).getUses()) {
    auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!consumer || !consumer.isDpsInput(&use))
      return false;
    ++users;
  }
  int64_t inputs = producer.getNumDpsInputs();
  return users * inputs < inputs + 1 + users;
}

/// Fuse (or propagate a reshape) across FUSED only between generics, and
/// only when the producer has no other use or is cheap to recompute in each
/// (never duplicating an expensive producer).
bool mayFuse(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  Operation *consumer = fused->getOwner();
  if (!producer)
    return false;
  auto isNamedLinalg = [](Operation *op) {
    return isa<linalg::LinalgOp>(op) && !isa<linalg::GenericOp>(op);
  };
  if (isNamedLinalg(producer) || isNamedLinalg(consumer))
    return false;
  if (producer->hasOneUse())
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  return generic && isa<linalg::GenericOp>(consumer) && isCheapToRecompute(generic) &&
         duplicationPays(generic);
}

struct FuseElementwisePass
    : tcc::impl::FuseElementwisePassBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Provenance provenance;
    int64_t before = 0;
    if (report)
      getOperation()->walk([&](linalg::LinalgOp op) {
        ++before;
        provenance.origins[op] = {Provenance::name(op)};
      });
    auto control = [&](OpOperand *fused) {
      if (!mayFuse(fused))
        return false;
      provenance.pendingProducer = fused->get().getDefiningOp();
      provenance.pendingConsumer = fused->getOwner();
      return true;
    };
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
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
    llvm::errs() << "fusion @" << name << ": " << before << " kernels -> " << kernels.size()
                 << "\n";
    for (auto [k, op] : llvm::enumerate(kernels)) {
      const SmallVector<std::string> &from = provenance.origins.lookup(op);
      if (from.size() < 2)
        continue;
      llvm::errs() << "  kernel " << k << " (" << op->getName().getStringRef() << ", "
                   << op.getNumLoops() << " loops): " << llvm::join(from, ", ") << "\n";
    }
  }
};

} // namespace
