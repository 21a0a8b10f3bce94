//===- Registration.h - dialects and passes the tools register ------------===//
//
// One place that lists what tcc's tools understand, so tcc and tcc-opt agree.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_REGISTRATION_H
#define TCC_COMPILER_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace tcc {

/// Adds the tcc dialect and the upstream dialects tcc lowers through.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers tcc's passes and the upstream passes its pipelines use, so that
/// tcc-opt and `tcc --mlir-*` flags can name them.
void registerAllPasses();

} // namespace tcc

#endif // TCC_COMPILER_REGISTRATION_H
