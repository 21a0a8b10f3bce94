//===- DslImporter.h - tcc model language source to the tcc dialect -------===//
//
// The public entry points of the DSL frontend: lex, parse, resolve and
// elaborate, lower. Errors are MLIR diagnostics at FileLineColLoc positions
// in the source; every error of a file is reported before the import fails.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_DSL_DSLIMPORTER_H
#define TCC_FRONTEND_DSL_DSLIMPORTER_H

#include "frontend/dsl/Graph.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <optional>

namespace tcc {

struct DslImportOptions {
  /// Binds the first dimension of inputs whose first dimension is symbolic.
  std::optional<int64_t> batch;
  /// Binds symbolic dimensions and overrides integer constants by name.
  llvm::StringMap<int64_t> dims;
  std::string functionName = "forward";
  /// Called once per parameter in declaration order with its initial value
  /// (drawn as its initializer says) and the initializer's descriptor
  /// spelling ("uniform -0.1 0.1"). Unset: no values are drawn.
  std::function<void(llvm::StringRef name, mlir::Type elementType, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<char> bytes, llvm::StringRef init)>
      onParameter;
};

/// Imports the program SOURCE (named DISPLAYNAME in diagnostics). The
/// recipe of its train blocks goes to RECIPE when given. Null after
/// diagnostics on error.
mlir::OwningOpRef<mlir::ModuleOp> importDslBuffer(mlir::MLIRContext &context,
                                                  llvm::StringRef source,
                                                  llvm::StringRef displayName,
                                                  const DslImportOptions &options,
                                                  dsl::Recipe *recipe = nullptr);

/// Reads and imports the file at PATH.
mlir::OwningOpRef<mlir::ModuleOp> importDslFile(mlir::MLIRContext &context, llvm::StringRef path,
                                                const DslImportOptions &options,
                                                dsl::Recipe *recipe = nullptr);

} // namespace tcc

#endif // TCC_FRONTEND_DSL_DSLIMPORTER_H
