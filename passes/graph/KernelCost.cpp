//===- KernelCost.cpp - the cost of linalg ops as kernels -----------------===//
//
// External models of KernelCostOpInterface for linalg's ops: one model for
// every op of the LinalgOp interface, from its indexing maps, loop ranges
// and body (named ops have a body too: their region).
//
//===----------------------------------------------------------------------===//

#include "passes/graph/KernelCost.h"
#include "dialects/ByteSizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "passes/graph/KernelCost.cpp.inc"

using namespace mlir;

namespace {

/// The weight of one op of a kernel's body (see KernelCost.td).
double opWeight(Operation &op) {
  if (isa<linalg::IndexOp, arith::ConstantOp, linalg::YieldOp>(op))
    return 0;
  if (isa<arith::DivFOp, arith::DivSIOp, arith::DivUIOp, arith::RemFOp, arith::RemSIOp,
          arith::RemUIOp, arith::CeilDivSIOp, arith::FloorDivSIOp, math::SqrtOp,
          math::RsqrtOp>(op))
    return 8;
  if (isa<tensor::ExtractOp, memref::LoadOp>(op))
    return 8;
  if (isa<math::MathDialect>(op.getDialect()))
    return isa<math::AbsFOp, math::AbsIOp, math::FmaOp, math::CopySignOp>(op) ? 1 : 16;
  return 1;
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

} // namespace

void tcc::registerKernelCostModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attach<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >(ctx);
  });
}
