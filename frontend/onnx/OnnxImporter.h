//===- OnnxImporter.h - ONNX ModelProto to the tcc dialect ----------------===//
//
// The public entry points of the ONNX frontend. Errors are reported as MLIR
// diagnostics located at the ONNX node (NameLoc of the node name, inside the
// model file's location); nothing throws out of these functions.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_ONNX_ONNXIMPORTER_H
#define TCC_FRONTEND_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <vector>
#include <optional>
#include <string>

namespace tcc {

/// A graph input whose value is fixed when compiling (`--const-input`).
struct ConstantInput {
  int32_t dtype = 0; ///< tcc_dtype (runtime/include/tcc/abi.h)
  std::vector<int64_t> shape;
  std::vector<char> bytes; ///< little-endian, row-major; bool one byte each
};

/// How to bind what the model leaves open.
struct OnnxImportOptions {
  /// Graph inputs that become constants: a static-shape compiler needs the
  /// values of inputs that feed shape operands (a Reshape's shape, Slice
  /// bounds, ...). They are no longer inputs of the compiled function.
  llvm::StringMap<ConstantInput> constantInputs;
  /// Binds the first dimension of every graph input whose first dimension is
  /// symbolic or unknown (`--batch=N`).
  std::optional<int64_t> batch;
  /// Binds named symbolic dimensions (`--dim NAME=N`); takes precedence over
  /// `batch`.
  llvm::StringMap<int64_t> dims;
  /// Name of the imported function.
  std::string functionName = "forward";
  /// Glob patterns (`*`, `?`, `[...]`) of the initializers that are the
  /// model's buffers (`--buffers`): parameters marked tcc.buffer, never
  /// trained. The exporter's own record (PyTorch's graph signature) and
  /// float initializers holding an infinity or NaN are marked without it.
  /// A pattern that matches no float initializer is an error.
  std::vector<std::string> buffers;
  /// Called once per parameter (float initializer) the function takes, with
  /// its initial value as little-endian bytes; the artifact writer stores
  /// them as safetensors. Unset: parameter values are not read.
  std::function<void(llvm::StringRef name, mlir::Type elementType,
                     llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<char> bytes)>
      onParameter;
};

/// Reads the model at `path`: binary ModelProto, or ONNX's textual syntax when
/// the file ends in `.onnxtxt` or `.txt`. External-data tensors are read from
/// the model's folder. Returns null after emitting diagnostics on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path,
               const OnnxImportOptions &options);

/// Imports a model held in memory; `displayName` names it in diagnostics and
/// `modelDir` is where external data would be (empty: external data refused).
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxBuffer(mlir::MLIRContext &context, llvm::StringRef bytes,
                 bool textFormat, llvm::StringRef displayName,
                 llvm::StringRef modelDir, const OnnxImportOptions &options);

} // namespace tcc

#endif // TCC_FRONTEND_ONNX_ONNXIMPORTER_H
