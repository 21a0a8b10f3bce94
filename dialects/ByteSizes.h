//===- ByteSizes.h - the bytes of a tensor or buffer ----------------------===//
//
// The memory plan, the cost model and the GPU kernels all count bytes the
// same way: elements times the whole bytes of one element, an i1 being one
// byte (abi.h's BOOL), as the buffers are laid out.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_DIALECTS_BYTESIZES_H
#define TCC_DIALECTS_BYTESIZES_H

#include "mlir/IR/Types.h"

#include <cstdint>
#include <optional>

namespace tcc {

/// The bytes of one element of type ELEMENT: its bit width rounded up to
/// whole bytes for integers and floats (i1: 1); 8 for anything else (index,
/// which code generation makes 64-bit).
int64_t elementBytes(mlir::Type element);

/// The bytes of a statically shaped TYPE (a tensor or memref), or nullopt
/// for any other type or when the count does not fit int64.
std::optional<int64_t> byteSize(mlir::Type type);

} // namespace tcc

#endif // TCC_DIALECTS_BYTESIZES_H
