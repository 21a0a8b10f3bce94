//===- Lower.h - the checked graph to the tcc dialect ---------------------===//
//
// The last step of the DSL frontend: Sema's graph becomes `@forward` with
// the argument and result attributes every frontend gives (tcc.input,
// tcc.param, tcc.output; batch norms' tcc.running_stats and tcc.momentum).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_DSL_LOWER_H
#define TCC_FRONTEND_DSL_LOWER_H

#include "frontend/dsl/Diagnostics.h"
#include "frontend/dsl/Graph.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace tcc::dsl {

mlir::Type elementType(mlir::MLIRContext *ctx, DType t);

/// Builds the module of GRAPH (which Sema checked without errors); null
/// after a diagnostic if verification fails.
mlir::OwningOpRef<mlir::ModuleOp> lowerGraph(const Graph &graph, Diagnostics &diags,
                                             llvm::StringRef functionName);

} // namespace tcc::dsl

#endif // TCC_FRONTEND_DSL_LOWER_H
