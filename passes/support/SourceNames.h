//===- SourceNames.h - the ONNX node an op came from ----------------------===//
//
// The importer gives every op the location NameLoc("<ONNX node name>");
// lowering and fusion keep it (first in a FusedLoc). Reports name kernels by
// it, and generated kernels are named after it, so that a profile or an
// error points back at the model.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_SUPPORT_SOURCENAMES_H
#define TCC_PASSES_SUPPORT_SOURCENAMES_H

#include "mlir/IR/Operation.h"

#include <string>

namespace tcc {

/// OP's location, or the first of a fused one (the op it was built from).
mlir::Location sourceLocation(mlir::Operation *op);

/// The ONNX node OP came from (for reports and diagnostics), or its printed
/// location.
std::string sourceName(mlir::Operation *op);

/// The ONNX node OP came from, as an identifier (at most 48 characters;
/// "op" without a name): kernels are named after it.
std::string kernelNodeName(mlir::Operation *op);

} // namespace tcc

#endif // TCC_PASSES_SUPPORT_SOURCENAMES_H
