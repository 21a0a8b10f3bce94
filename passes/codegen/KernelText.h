//===- KernelText.h - a kernel's body as comparable text -------------------===//
//
// Two kernels are the same code when they print the same with their names
// fixed and locations left out. tcc-dedup-kernels (CPU functions) and
// tcc-gpu-merge-modules (GPU kernels) keep one of each such text.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_CODEGEN_KERNELTEXT_H
#define TCC_PASSES_CODEGEN_KERNELTEXT_H

#include "mlir/IR/SymbolTable.h"

#include <string>

namespace tcc {

/// SYMBOL printed under a fixed name, without locations, in its own scope
/// (the cost is the kernel's size, not the module's). Its name is restored.
std::string kernelText(mlir::SymbolOpInterface symbol);

} // namespace tcc

#endif // TCC_PASSES_CODEGEN_KERNELTEXT_H
