//===- DialectExport.h - a tcc dialect function as an ONNX model ----------===//
//
// `tcc export model.tcc --weights W.safetensors -o model.onnx`: the imported
// program's function (tcc dialect, static shapes) written as an ONNX graph
// (opset 17) in inference form, its parameters as initializers holding the
// trained values. The inverse of the ONNX importer for the ops a .tcc program
// produces and the other ops that have a direct ONNX counterpart.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_ONNX_DIALECTEXPORT_H
#define TCC_FRONTEND_ONNX_DIALECTEXPORT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

namespace tcc {

struct DialectExportSummary {
  int initializers = 0; ///< parameters written with their trained values
  int nodes = 0;        ///< ONNX nodes written
  int batchNorms = 0;   ///< batch norms that normalize with running statistics
  int dropouts = 0;     ///< dropouts switched off
};

/// Writes FN to OUT (binary ModelProto, atomically): arguments marked
/// tcc.input become graph inputs, arguments marked tcc.param initializers
/// with the values of the same name in WEIGHTS (a safetensors file from
/// tcc-run --save, a compiled artifact's parameters, or a checkpoint: its
/// optimizer state is ignored), results the graph outputs (tcc.output
/// names). Batch norms with running statistics normalize with them and
/// dropouts are off, as PyTorch's model.eval(). Errors are MLIR diagnostics:
/// at the op (its DSL position) for an op with no ONNX form, at the
/// parameter's declaration for a missing or mismatched weight.
mlir::LogicalResult exportDialectFunction(mlir::func::FuncOp fn, const std::string &weights,
                                          const std::string &out, DialectExportSummary &summary);

} // namespace tcc

#endif // TCC_FRONTEND_ONNX_DIALECTEXPORT_H
