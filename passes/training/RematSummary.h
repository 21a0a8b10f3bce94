//===- RematSummary.h - what tcc-rematerialize decided, as a record -------===//
//
// tcc-rematerialize records on each function it changed what it recomputed
// and the peaks of its tensor-level model (the function attribute
// tcc.remat); the driver's budget search and the memory report read it back
// through this record, so its keys are spelled in one place.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_TRAINING_REMATSUMMARY_H
#define TCC_PASSES_TRAINING_REMATSUMMARY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <optional>

namespace tcc {

struct RematSummary {
  /// One dictionary per recomputed value (its op, bytes and flops).
  mlir::ArrayAttr recomputed;
  int64_t peakBefore = 0; ///< the model's arena peak without recomputation
  int64_t peakAfter = 0;  ///< and with it
  double recomputeFlops = 0, stepFlops = 0;
};

/// Records SUMMARY on FN.
void writeRematSummary(mlir::func::FuncOp fn, const RematSummary &summary);

/// What FN's record says, or nullopt when the pass recorded nothing there.
std::optional<RematSummary> readRematSummary(mlir::func::FuncOp fn);

} // namespace tcc

#endif // TCC_PASSES_TRAINING_REMATSUMMARY_H
