//===- LowerToLinalg.cpp - tcc ops to linalg, tensor, arith, math, scf ----===//
//
// The first stage of code generation: every tcc op becomes upstream ops on
// tensors, which the CPU and CUDA pipelines then tile, fuse, vectorize and
// bufferize. A dialect conversion, because unsigned integer types must become
// signless everywhere, function signatures included, and the type converter
// keeps producers and users consistent. The patterns live in
// passes/lowering/, one file per op family.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/lowering/Patterns.h"

#include "dialects/TccNames.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

namespace tcc {
#define GEN_PASS_DEF_LOWERTOLINALGPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;
using namespace tcc;
using namespace tcc::lowering;

namespace {

/// Gives any region-free non-tcc op that carries unsigned types (a
/// tensor.extract written by hand, say) signless result types. Lowest
/// benefit: the specific patterns come first.
struct ConvertOtherOpTypes : ConversionPattern {
  ConvertOtherOpTypes(const TypeConverter &tc, MLIRContext *ctx)
      : ConversionPattern(tc, MatchAnyOpTypeTag(), /*benefit=*/0, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (isa<TccDialect>(op->getDialect()) || op->getNumRegions() != 0)
      return failure();
    FailureOr<Operation *> converted =
        convertOpResultTypes(op, operands, *getTypeConverter(), rewriter);
    if (failed(converted))
      return failure();
    rewriter.replaceOp(op, (*converted)->getResults());
    return success();
  }
};

struct LowerToLinalgPass : tcc::impl::LowerToLinalgPassBase<LowerToLinalgPass> {
  using LowerToLinalgPassBase::LowerToLinalgPassBase;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    SignlessTypeConverter tc;

    ConversionTarget target(*ctx);
    target.addIllegalDialect<TccDialect>();
    // The collectives of a data-parallel step stay until bufferization,
    // which turns them into their in-place form on buffers.
    target.addLegalOp<AllReduceOp>();
    // Everything else is legal once its types are: the lowered code and the
    // unrelated ops around it alike.
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return tc.isLegal(op); });
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return tc.isSignatureLegal(f.getFunctionType()) &&
             tc.isLegal(&f.getBody());
    });

    // Unsigned tensors at a function's boundary become signless; remember
    // the element type the model declared, so the artifact's descriptor can
    // still say u8 (tcc-plan-memory reads tcc.declared_types).
    // Only entry points (functions with named inputs or outputs) matter.
    getOperation()->walk([&](func::FuncOp f) {
      SmallVector<NamedAttribute> declared;
      auto note = [&](Type t, std::string key) {
        if (auto rt = dyn_cast<RankedTensorType>(t))
          if (rt.getElementType().isUnsignedInteger())
            declared.push_back(NamedAttribute(
                StringAttr::get(ctx, key), TypeAttr::get(rt.getElementType())));
      };
      for (auto [i, t] : llvm::enumerate(f.getArgumentTypes()))
        if (f.getArgAttr(i, tcc::attr::input))
          note(t, "arg" + std::to_string(i));
      for (auto [i, t] : llvm::enumerate(f.getResultTypes()))
        if (f.getResultAttr(i, tcc::attr::output))
          note(t, "result" + std::to_string(i));
      if (!declared.empty())
        f->setAttr(tcc::attr::declaredTypes, DictionaryAttr::get(ctx, declared));
    });

    useFullFilterGradients(getOperation());
    sinkZeroPads(getOperation());

    RewritePatternSet patterns(ctx);
    populateElementwisePatterns(tc, patterns);
    populateDataMovementPatterns(tc, patterns);
    populateReductionPatterns(tc, patterns);
    populateLinalgNNPatterns(tc, patterns, sixteenBitMatmuls, sixteenBitConvs, fewPointGemms,
                             gemmConvolutions);
    populateNormalizationPatterns(tc, patterns);
    populateResizePatterns(tc, patterns);
    // Signatures, calls, returns, branches and scf regions follow the types.
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   tc);
    populateCallOpTypeConversionPattern(patterns, tc);
    populateReturnOpTypeConversionPattern(patterns, tc);
    populateBranchOpInterfaceTypeConversionPattern(patterns, tc);
    scf::populateSCFStructuralTypeConversionsAndLegality(tc, patterns, target);
    patterns.add<ConvertOtherOpTypes>(tc, ctx);

    // No folding: every op is lowered by its pattern, so the generated
    // code's semantics live in one place whatever the operands are
    // (constant folding is canonicalize's job, before this pass).
    ConversionConfig config;
    config.foldingMode = DialectConversionFoldingMode::Never;
    // A tcc op that no pattern lowers makes the conversion fail with
    // "failed to legalize operation 'tcc.<name>'" at the op's location.
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
