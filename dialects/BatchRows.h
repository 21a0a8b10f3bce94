//===- BatchRows.h - which dimensions of a model follow its batch ---------===//
//
// A statically shaped artifact runs a partial batch (the last batch of a data
// set, one sample at inference) by padding it to the compiled batch: the
// runtime needs to know which inputs and outputs have the batch as their
// leading dimension, and how many rows of it one sample is (a GPT's logits
// flattened to [B*T, V] have T rows per sample). The frontends find out by
// importing the model a second time at another batch and comparing types:
// a fact about the model, not a guess from equal numbers.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_DIALECTS_BATCHROWS_H
#define TCC_DIALECTS_BATCHROWS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tcc {

/// Compares FN (imported at batch BATCH) with PROBE (the same model imported
/// at batch PROBEBATCH) and, when every difference between their argument and
/// result types is a leading dimension of K * batch rows (K >= 1 per value),
/// marks those arguments and results with attr::batchRows = K and FN with
/// attr::batch = BATCH. Marks nothing (and returns false) when the signatures
/// differ in any other way, when no input follows the batch, or when an op
/// of FN mixes samples of the batch (a batch norm computing batch
/// statistics), so that a partial batch is refused, never computed wrongly.
bool annotateBatchRows(mlir::func::FuncOp fn, mlir::func::FuncOp probe, int64_t batch,
                       int64_t probeBatch);

} // namespace tcc

#endif // TCC_DIALECTS_BATCHROWS_H
