//===- TccDialect.h - the tcc dialect -------------------------------------===//
//
// Declares the dialect class; include TccOps.h for the ops.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_DIALECTS_TCCDIALECT_H
#define TCC_DIALECTS_TCCDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/TccDialect.h.inc"

#endif // TCC_DIALECTS_TCCDIALECT_H
