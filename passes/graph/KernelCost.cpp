//===- KernelCost.cpp - the cost of linalg ops and tcc ops ----------------===//
//
// External models of KernelCostOpInterface: one for every op of the LinalgOp
// interface, from its indexing maps, loop ranges and body (named ops have a
// body too: their region); one for every tcc op, from its family and its
// operands' shapes. Both weigh with the constants of KernelCost.h.
//
//===----------------------------------------------------------------------===//

#include "passes/graph/KernelCost.h"
#include "dialects/ByteSizes.h"
#include "dialects/TccOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#include "passes/graph/KernelCost.cpp.inc"

using namespace mlir;

namespace {

/// The weight of one op of a kernel's body (see KernelCost.td).
double opWeight(Operation &op) {
  using namespace tcc::cost;
  if (isa<linalg::IndexOp, arith::ConstantOp, linalg::YieldOp>(op))
    return kFree;
  if (isa<arith::DivFOp, arith::DivSIOp, arith::DivUIOp, arith::RemFOp, arith::RemSIOp,
          arith::RemUIOp, arith::CeilDivSIOp, arith::FloorDivSIOp, math::SqrtOp,
          math::RsqrtOp>(op))
    return kDivision;
  if (isa<tensor::ExtractOp, memref::LoadOp>(op))
    return kGather;
  if (isa<math::MathDialect>(op.getDialect()))
    return isa<math::AbsFOp, math::AbsIOp, math::FmaOp, math::CopySignOp>(op) ? kSimple
                                                                                : kTranscendental;
  return kSimple;
}

template <typename OpTy>
struct LinalgCostModel
    : tcc::KernelCostOpInterface::ExternalModel<LinalgCostModel<OpTy>, OpTy> {
  double getCostPerPoint(Operation *op) const {
    double cost = 0;
    for (Region &region : op->getRegions())
      region.walk([&](Operation *inner) { cost += opWeight(*inner); });
    return cost;
  }

  int64_t getIterationCount(Operation *op) const {
    int64_t count = 1;
    for (int64_t r : cast<linalg::LinalgOp>(op).getStaticLoopRanges())
      count = ShapedType::isDynamic(r) ? count : count * r;
    return count;
  }

  int64_t bytes(Operation *op, bool penalties) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    unsigned loops = linalgOp.getNumLoops();
    int64_t total = 0;
    for (OpOperand &operand : op->getOpOperands()) {
      int64_t b = tcc::byteSize(operand.get().getType()).value_or(0);
      if (b == 0)
        continue;
      if (linalgOp.isDpsInit(&operand) && linalgOp.payloadUsesValueFromOperand(&operand))
        b *= 2; // read and written
      AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
      if (penalties && loops > 0 && b > (1 << 20)) {
        // Walked across its innermost dimension: a cache line per element.
        for (unsigned r = 0; r + 1 < map.getNumResults(); ++r)
          if (map.getResult(r).isFunctionOfDim(loops - 1)) {
            auto type = cast<ShapedType>(operand.get().getType());
            int64_t element = tcc::elementBytes(type.getElementType());
            b *= std::max<int64_t>(1, 64 / element);
            break;
          }
      }
      total += b;
    }
    return total;
  }
  int64_t getBytesMoved(Operation *op) const { return bytes(op, true); }
  int64_t getMinimumBytes(Operation *op) const { return bytes(op, false); }
};

template <typename... OpTys>
void attach(MLIRContext *ctx) {
  (OpTys::template attachInterface<LinalgCostModel<OpTys>>(*ctx), ...);
}

int64_t elements(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  return shaped && shaped.hasStaticShape() ? shaped.getNumElements() : 0;
}

/// Elements of OP's first result (0 without one).
int64_t resultElements(Operation *op) {
  return op->getNumResults() ? elements(op->getResult(0).getType()) : 0;
}

/// Elements of OP's first operand (its first result's without one).
int64_t operandElements(Operation *op) {
  return op->getNumOperands() ? elements(op->getOperand(0).getType()) : resultElements(op);
}

/// An op's loops, as one count, and the arithmetic of one iteration.
struct Work {
  int64_t iterations;
  double costPerPoint;
};

/// The work of an op without a model of its own: one simple op per element
/// of the larger of its first result and its first operand (a reduction
/// reads more than it writes, a broadcast writes more than it reads).
Work defaultWork(Operation *op) {
  return {std::max(resultElements(op), operandElements(op)), tcc::cost::kSimple};
}

/// The work of a tcc op, by family: elementwise ops one iteration per result
/// element; matmuls and convolutions one multiply-add per result element and
/// reduced element; softmax and layer norm a few passes over their input's
/// elements; a reshape none. Other ops (data movement, reductions, pooling,
/// transposed convolutions, ...) take the default.
Work tccWork(Operation *op) {
  using namespace tcc;
  using namespace tcc::cost;
  int64_t n = resultElements(op), in = operandElements(op);
  return llvm::TypeSwitch<Operation *, Work>(op)
      .Case([&](MatmulOp mm) { // [B..., M, K] x [B..., K, N]: K per result element
        auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
        return Work{n * lhs.getShape().back(), kMultiplyAdd};
      })
      .Case([&](ConvOp conv) { // C/group x K1..Kk per result element
        auto filter = cast<RankedTensorType>(conv.getFilter().getType());
        return Work{n * (filter.getNumElements() / filter.getShape().front()), kMultiplyAdd};
      })
      .Case([&](ConvBackwardFilterOp filterGrad) { // N x O1..Ok per filter element
        auto grad = cast<RankedTensorType>(filterGrad.getGrad().getType());
        return Work{n * (grad.getNumElements() / grad.getShape()[1]), kMultiplyAdd};
      })
      .Case<ExpOp, LogOp, TanhOp, SigmoidOp, ErfOp, SoftplusOp, SinOp, CosOp, TanOp, AsinOp,
            AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, PowOp, GeluOp, EluOp>(
          [&](Operation *) { return Work{n, kTranscendental}; })
      .Case<DivOp, SqrtOp, RsqrtOp, ReciprocalOp>([&](Operation *) { return Work{n, kDivision}; })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](Operation *) { return Work{in, kSoftmax}; })
      .Case([&](LayerNormOp) { return Work{in, kLayerNorm}; })
      .Case([&](ReshapeOp) { return Work{n, kFree}; })
      .Default(defaultWork);
}

/// The model of every tcc op. Its bytes are its operands' and results'
/// footprints: before lowering there is no layout to penalize.
struct TccCostModel : tcc::KernelCostOpInterface::FallbackModel<TccCostModel> {
  double getCostPerPoint(Operation *op) const { return tccWork(op).costPerPoint; }
  int64_t getIterationCount(Operation *op) const { return tccWork(op).iterations; }
  int64_t getBytesMoved(Operation *op) const { return getMinimumBytes(op); }
  int64_t getMinimumBytes(Operation *op) const {
    int64_t total = 0;
    for (Type type : op->getOperandTypes())
      total += tcc::byteSize(type).value_or(0);
    for (Type type : op->getResultTypes())
      total += tcc::byteSize(type).value_or(0);
    return total;
  }
};

} // namespace

double tcc::arithmetic(Operation *op) {
  if (auto model = dyn_cast<KernelCostOpInterface>(op))
    return double(model.getIterationCount()) * model.getCostPerPoint();
  Work work = defaultWork(op);
  return double(work.iterations) * work.costPerPoint;
}

void tcc::registerKernelCostModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attach<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tcc::TccDialect *) {
    for (RegisteredOperationName name : ctx->getRegisteredOperationsByDialect("tcc"))
      name.attachInterface<TccCostModel>();
  });
}
