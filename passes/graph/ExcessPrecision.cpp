//===- ExcessPrecision.cpp - one rounding per fused chain -----------------===//
//
// A 16-bit elementwise op computes in f32 and rounds its result; a fused
// kernel of several such ops (a GELU exported as Div, Erf, Add, Mul, Mul)
// rounds after each one, and each rounding is several integer instructions
// on a CPU without 16-bit conversion instructions. Keeping the f32 value
// between the ops of one kernel rounds once, where the kernel stores, which
// is both cheaper and closer to the unfused op the exporter decomposed (a
// PyTorch GELU rounds once). Done on linalg on tensors after fusion, so
// the CPU's loops, the GPU's kernels and their emulated twins compute the
// same numbers.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

namespace tcc {
#define GEN_PASS_DEF_EXCESSPRECISIONPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

bool isSixteenBitFloat(Type t) { return isa<BFloat16Type, Float16Type>(getElementTypeOrSelf(t)); }

struct ExcessPrecisionPass : tcc::impl::ExcessPrecisionPassBase<ExcessPrecisionPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    // The conversions the IR already has are roundings it asks for.
    DenseSet<Operation *> explicitCasts;
    bool sixteenBit = false;
    fn.walk([&](Operation *op) {
      if (isa<arith::TruncFOp, arith::ExtFOp>(op))
        explicitCasts.insert(op);
      sixteenBit |= llvm::any_of(op->getResultTypes(), isSixteenBitFloat);
    });
    if (!sixteenBit)
      return;
    OpPassManager emulate(func::FuncOp::getOperationName());
    emulate.addPass(math::createMathExtendToSupportedTypes());
    arith::ArithEmulateUnsupportedFloatsOptions options;
    options.sourceTypeStrs = {"bf16", "f16"};
    options.targetTypeStr = "f32";
    emulate.addPass(arith::createArithEmulateUnsupportedFloats(options));
    if (failed(runPipeline(emulate, fn)))
      return signalPassFailure();
    // extf(select(c, a, b)) = select(c, extf(a), extf(b)) for a 16-bit
    // select (which the emulation leaves alone: it rounds nothing), so that
    // a masked value (attention's -inf fill) reaches the widening below.
    SmallVector<arith::ExtFOp> widenings;
    fn.walk([&](arith::ExtFOp ext) { widenings.push_back(ext); });
    while (!widenings.empty()) {
      arith::ExtFOp ext = widenings.pop_back_val();
      auto select = ext.getIn().getDefiningOp<arith::SelectOp>();
      if (!select || !isSixteenBitFloat(select.getType()) || isa<ShapedType>(select.getType()))
        continue;
      OpBuilder b(ext);
      auto widen = [&](Value v) {
        auto w = arith::ExtFOp::create(b, ext.getLoc(), ext.getType(), v);
        widenings.push_back(w);
        return w.getResult();
      };
      Value wide = arith::SelectOp::create(b, select.getLoc(), select.getCondition(),
                                           widen(select.getTrueValue()),
                                           widen(select.getFalseValue()));
      ext.replaceAllUsesWith(wide);
      ext->erase();
    }
    // extf(truncf(x)) = x where the emulation made both: the next op reads
    // the f32 value its producer computed. A widening the IR had before
    // (an fp32-class op's cast of its 16-bit input) keeps reading the
    // rounded value, as its op was specified to.
    SmallVector<Operation *> dead;
    fn.walk([&](arith::ExtFOp ext) {
      auto trunc = ext.getIn().getDefiningOp<arith::TruncFOp>();
      if (!trunc || explicitCasts.contains(ext) || explicitCasts.contains(trunc) ||
          trunc.getIn().getType() != ext.getType())
        return;
      ext.replaceAllUsesWith(trunc.getIn());
      dead.push_back(ext);
    });
    for (Operation *op : dead)
      op->erase();
  }
};

} // namespace
