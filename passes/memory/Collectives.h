//===- Collectives.h - tcc.all_reduce on buffers, and its runtime calls ---===//
//
// tcc.all_reduce bufferizes in place (an external model of
// BufferizableOpInterface, so that the dialect does not depend on
// bufferization); tcc-schedule-collectives then splits each one on buffers
// into a START and a WAIT call of private declarations @tcc_collective_N,
// which tcc-lower-library-calls turns into calls of the runtime's
// collective (abi.h) after the memory plan, as it does library calls.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_MEMORY_COLLECTIVES_H
#define TCC_PASSES_MEMORY_COLLECTIVES_H

#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/StringRef.h"

namespace tcc {

/// The names of the declarations, followed by N (counting the module's).
inline constexpr llvm::StringLiteral collectivePrefix = "tcc_collective_";

/// Attaches tcc.all_reduce's bufferization model.
void registerCollectiveBufferization(mlir::DialectRegistry &registry);

} // namespace tcc

#endif // TCC_PASSES_MEMORY_COLLECTIVES_H
