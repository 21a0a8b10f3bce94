//===- Passes.h - tcc's own passes ----------------------------------------===//

#ifndef TCC_PASSES_PASSES_H
#define TCC_PASSES_PASSES_H

#include "dialects/TccOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace tcc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// The buffer V views through view-like ops (subview, reshape, view, ...):
/// an allocation or a function argument.
mlir::Value viewRoot(mlir::Value v);

/// The ONNX node OP came from (for reports), or its printed location.
std::string sourceName(mlir::Operation *op);

/// The ONNX node OP came from, as an identifier (at most 48 characters;
/// "op" without a name): kernels are named after it.
std::string kernelNodeName(mlir::Operation *op);

/// Stores BUFFER's aligned address as a pointer at ARRAY[INDEX] (an LLVM
/// array of pointers): the operands of runtime calls from generated code.
void storeBufferAddress(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                        mlir::Value array, int32_t index);

/// Calls the runtime service at byte FN_OFFSET of the tcc_abi_runtime that
/// RUNTIME points to, as fn(context at CONTEXT_OFFSET, INDEX, ARRAY): a
/// library call or a kernel launch of abi.h.
void callRuntime(mlir::OpBuilder &b, mlir::Location loc, mlir::Value runtime, size_t fnOffset,
                 size_t contextOffset, int32_t index, mlir::Value array);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace tcc

#endif // TCC_PASSES_PASSES_H
