//===- BatchMetadata.h - the batch facts a runtime pads partial batches by -===//
//
// What the frontends found (dialects/BatchRows.h) and tcc-build-train-step
// added (the labels, eval_step's "valid" input) becomes descriptor metadata:
// TCC_METADATA_BATCH and one TCC_METADATA_BATCH_ROWS_PREFIX key per input
// and output that follows the batch.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_BATCHMETADATA_H
#define TCC_COMPILER_BATCHMETADATA_H

#include "mlir/IR/BuiltinOps.h"

namespace tcc {

/// Adds the batch metadata to MODULE's attr::metadata (on the tcc dialect,
/// after the training step is built). Adds nothing when the functions carry
/// no batch facts, when they disagree about a tensor, or when an entry that
/// would run a partial batch mixes the samples (a batch norm computing batch
/// statistics at inference): such an artifact runs only full batches.
void recordBatchMetadata(mlir::ModuleOp module);

} // namespace tcc

#endif // TCC_COMPILER_BATCHMETADATA_H
