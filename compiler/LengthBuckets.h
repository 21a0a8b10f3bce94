//===- LengthBuckets.h - training entries at several sequence lengths -----===//
//
// `tcc --length-buckets=DIM=V1,...,Vn` compiles the model at DIM = Vn (every
// entry point) and its training entries again at each smaller V, so that a
// batch of short sequences runs a step of their length instead of one
// padded to Vn. The variants are separate imports, trained by the same
// pipeline, then moved into the main module as train_step.DIM_V and
// accumulate_grad.DIM_V: the same parameters and optimizer state (their
// shapes must not depend on DIM), their own inputs and outputs where the
// shapes differ (NAME.DIM_V). The metadata (abi.h TCC_METADATA_LENGTH_*)
// tells the runtime which axis of which input follows DIM.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_LENGTHBUCKETS_H
#define TCC_COMPILER_LENGTHBUCKETS_H

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>

namespace tcc {

/// The name of the entry ENTRY (train_step, accumulate_grad) or tensor at
/// DIM = VALUE: "train_step.T_32".
std::string lengthVariantName(llvm::StringRef name, llvm::StringRef dim, int64_t value);

/// Moves VARIANT's training entries (after tcc-build-train-step, imported
/// at DIM = VALUE) into MAIN (imported at the largest value), renamed, and
/// their inputs and outputs whose types differ from MAIN's entries' with
/// them. Records in AXES, per input name, the one axis that follows DIM
/// (the same for every variant). Fails with a message naming the tensor
/// when a parameter or state tensor depends on DIM, when an input differs
/// in more than that one axis, or when the variant has an entry MAIN lacks.
mlir::LogicalResult mergeLengthVariant(mlir::ModuleOp main, mlir::ModuleOp variant,
                                       llvm::StringRef dim, int64_t value,
                                       std::map<std::string, int64_t> &axes);

/// The metadata of the buckets (DIM, the ascending VALUES, the AXES).
void recordLengthMetadata(mlir::ModuleOp main, llvm::StringRef dim,
                          llvm::ArrayRef<int64_t> values,
                          const std::map<std::string, int64_t> &axes);

} // namespace tcc

#endif // TCC_COMPILER_LENGTHBUCKETS_H
