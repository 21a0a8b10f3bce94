//===- Collectives.cpp - tcc.all_reduce's bufferization -------------------===//

#include "passes/memory/Collectives.h"

#include "dialects/TccOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

using namespace mlir;
using namespace mlir::bufferization;

namespace {

/// Each operand is read and averaged in place: its result is its buffer.
/// One-shot bufferization copies an operand whose old value is still read
/// afterwards, so the op never clobbers a value something else needs.
struct AllReduceBufferization
    : BufferizableOpInterface::ExternalModel<AllReduceBufferization, tcc::AllReduceOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &, const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &, const AnalysisState &) const {
    return true;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    return {{op->getResult(operand.getOperandNumber()), BufferRelation::Equivalent}};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options, BufferizationState &state) const {
    auto reduce = cast<tcc::AllReduceOp>(op);
    SmallVector<Value> buffers;
    for (Value v : reduce.getOperands()) {
      FailureOr<Value> buffer = getBuffer(rewriter, v, options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    tcc::AllReduceOp::create(rewriter, op->getLoc(), TypeRange{}, buffers, reduce.getBucketAttr());
    replaceOpWithBufferizedValues(rewriter, op, buffers);
    return success();
  }
};

} // namespace

void tcc::registerCollectiveBufferization(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tcc::TccDialect *) {
    tcc::AllReduceOp::attachInterface<AllReduceBufferization>(*ctx);
  });
}
