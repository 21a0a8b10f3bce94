//===- KernelCost.h - the cost interface fusion decisions read ------------===//

#ifndef TCC_PASSES_GRAPH_KERNELCOST_H
#define TCC_PASSES_GRAPH_KERNELCOST_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#include "passes/graph/KernelCost.h.inc"

namespace tcc {

/// Attaches KernelCostOpInterface to linalg's ops.
void registerKernelCostModels(mlir::DialectRegistry &registry);

} // namespace tcc

#endif // TCC_PASSES_GRAPH_KERNELCOST_H
