//===- RuntimeCalls.h - generated code calling the runtime's services -----===//
//
// An artifact has no undefined symbols of the runtime's: generated code calls
// the services of the tcc_abi_runtime structure (abi.h) that every entry
// point receives as its last argument, through function pointers. Library
// calls and kernel launches take their buffers as an array of addresses.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_CODEGEN_RUNTIMECALLS_H
#define TCC_PASSES_CODEGEN_RUNTIMECALLS_H

#include "mlir/IR/Builders.h"

#include <cstddef>
#include <cstdint>

namespace tcc {

/// Stores BUFFER's aligned address as a pointer at ARRAY[INDEX] (an LLVM
/// array of pointers): the operands of runtime calls from generated code.
void storeBufferAddress(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                        mlir::Value array, int32_t index);

/// Calls the runtime service at byte FN_OFFSET of the tcc_abi_runtime that
/// RUNTIME points to, as fn(context at CONTEXT_OFFSET, INDEX, ARRAY): a
/// library call or a kernel launch of abi.h.
void callRuntime(mlir::OpBuilder &b, mlir::Location loc, mlir::Value runtime, size_t fnOffset,
                 size_t contextOffset, int32_t index, mlir::Value array);

} // namespace tcc

#endif // TCC_PASSES_CODEGEN_RUNTIMECALLS_H
