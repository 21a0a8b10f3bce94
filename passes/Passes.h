//===- Passes.h - tcc's own passes ----------------------------------------===//

#ifndef TCC_PASSES_PASSES_H
#define TCC_PASSES_PASSES_H

#include "dialects/TccOps.h"
#include "passes/training/TrainingOptions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace tcc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace tcc

#endif // TCC_PASSES_PASSES_H
