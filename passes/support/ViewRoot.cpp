//===- ViewRoot.cpp - the buffer a memref value views ---------------------===//

#include "passes/support/ViewRoot.h"

#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value tcc::viewRoot(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}
