//===- Precision.cpp - mixed precision on the joint training graph --------===//
//
// Gives each f32 value the precision its producer's class asks for
// (PrecisionOpInterface, declared per op in ODS): products and the
// elementwise chains around them in 16 bits, sums, normalizations, softmax,
// the loss and the optimizer in f32. Casts are inserted only where a value
// crosses from one class to the other, once per value and type.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/TccNames.h"
#include "dialects/TccOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

#define DEBUG_TYPE "tcc-precision"

namespace tcc {
#define GEN_PASS_DEF_PRECISIONPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;
using namespace tcc;

namespace {

/// An f32 tensor: the only values the policy retypes (f64 stays f64, and
/// values that are 16-bit in the model itself keep their type).
bool isF32Tensor(Type t) {
  auto tt = dyn_cast<RankedTensorType>(t);
  return tt && tt.getElementType().isF32();
}

/// One function's rewrite: the values the pass made 16-bit, the casts it
/// made (reused for every later reader), what it counted for the report.
struct FunctionPrecision {
  FloatType low;
  /// Values that were f32 and now hold LOW.
  DenseSet<Value> lowered;
  /// (value, element type) -> its cast.
  DenseMap<std::pair<Value, Type>, Value> casts;
  /// "op class -> computes in" per op name, for the report.
  std::map<std::string, unsigned> counts;
  unsigned castsMade = 0;

  bool isLow(Value v) const { return lowered.contains(v); }

  /// V as element type ELEM: one cast right after V's definition, shared by
  /// every reader (readers come later in the block, so it dominates them).
  Value castTo(Value v, Type elem) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getElementType() == elem)
      return v;
    auto [it, inserted] = casts.try_emplace({v, elem}, Value());
    if (!inserted)
      return it->second;
    OpBuilder b(v.getContext());
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
    ++castsMade;
    return it->second = CastOp::create(b, v.getLoc(), type.clone(elem), v);
  }

  /// Every f32 operand of OP cast to LOW, every f32 result retyped to LOW.
  void computeLow(Operation *op) {
    for (OpOperand &use : op->getOpOperands())
      if (isF32Tensor(use.get().getType()))
        use.set(castTo(use.get(), low));
    for (Value r : op->getResults())
      if (isF32Tensor(r.getType())) {
        r.setType(cast<RankedTensorType>(r.getType()).clone(low));
        lowered.insert(r);
      }
  }

  /// Every operand the pass made 16-bit back in f32.
  void computeFp32(Operation *op) {
    Type f32 = Float32Type::get(op->getContext());
    for (OpOperand &use : op->getOpOperands())
      if (isLow(use.get()))
        use.set(castTo(use.get(), f32));
  }

  void count(Operation *op, StringRef cls, StringRef reason, bool low) {
    bool floats = llvm::any_of(op->getResultTypes(), [](Type t) {
      auto tt = dyn_cast<RankedTensorType>(t);
      return tt && isa<FloatType>(tt.getElementType());
    });
    if (!floats)
      return;
    std::string key = llvm::formatv("{0,-26} {1,-8} {2,-5} {3}", op->getName().getStringRef(),
                                    cls, low ? "16bit" : "f32", reason);
    ++counts[key];
  }

  void visit(Operation *op) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // Signatures stay as they were: results computed in 16 bits go back.
      computeFp32(op);
      return;
    }
    if (isa<CastOp>(op))
      return; // the pass's own casts and the model's keep their types
    auto iface = dyn_cast<PrecisionOpInterface>(op);
    if (op->hasAttr(attr::keepFp32)) {
      computeFp32(op);
      count(op, "fp32", "optimizer, gradient norm or loss scaling (tcc-build-train-step)", false);
      return;
    }
    if (!iface) {
      // An op without a class (another dialect): as it was, in f32.
      computeFp32(op);
      return;
    }
    PrecisionClass cls = iface.getPrecisionClass();
    bool follows = cls == PrecisionClass::Follow || cls == PrecisionClass::Widened;
    bool low = cls == PrecisionClass::Low ||
               (follows &&
                llvm::any_of(op->getOperands(), [&](Value v) { return isLow(v); }));
    if (low)
      computeLow(op);
    else if (cls != PrecisionClass::Explicit)
      computeFp32(op);
    count(op, precisionClassName(cls), iface.getPrecisionReason(), low);
  }
};

struct PrecisionPass : tcc::impl::PrecisionPassBase<PrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    FloatType low;
    if (precision == "bf16")
      low = BFloat16Type::get(ctx);
    else if (precision == "fp16")
      low = Float16Type::get(ctx);
    else {
      module.emitError() << "tcc-precision: precision must be bf16 or fp16, not '" << precision
                         << "'";
      return signalPassFailure();
    }
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      FunctionPrecision state;
      state.low = low;
      // The casts the pass inserts are skipped (they are CastOps), so the
      // walk may see them without effect.
      for (Operation &op : llvm::make_early_inc_range(fn.getBody().front()))
        state.visit(&op);
      fn.walk([](Operation *op) { op->removeAttr(attr::keepFp32); });
      if (report)
        printReport(fn, state);
    }
  }

  void printReport(func::FuncOp fn, const FunctionPrecision &state) {
    llvm::errs() << "precision @" << fn.getSymName() << " (" << precision << "): "
                 << state.castsMade << " casts at class boundaries\n";
    llvm::errs() << llvm::formatv("  {0,-26} {1,-8} {2,-5} {3}\n", "op", "class", "runs",
                                  "why");
    for (const auto &[key, n] : state.counts)
      llvm::errs() << "  " << key << "  x" << n << "\n";
  }
};

} // namespace
