//===- ViewRoot.h - the buffer a memref value views -----------------------===//
//
// Passes on buffers ask whether two values alias by comparing the buffers
// they view: the allocation or function argument at the end of a chain of
// view-like ops.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_SUPPORT_VIEWROOT_H
#define TCC_PASSES_SUPPORT_VIEWROOT_H

#include "mlir/IR/Value.h"

namespace tcc {

/// The buffer V views through view-like ops (subview, reshape, view, ...):
/// an allocation or a function argument.
mlir::Value viewRoot(mlir::Value v);

} // namespace tcc

#endif // TCC_PASSES_SUPPORT_VIEWROOT_H
