//===- MemoryReport.h - what the memory plan holds, for people ------------===//

#ifndef TCC_COMPILER_MEMORYREPORT_H
#define TCC_COMPILER_MEMORYREPORT_H

#include "compiler/ArtifactWriter.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace tcc {

/// Prints each planned entry point's region sizes and its largest buffers
/// (named tensors and intermediates). CHIP ("sm_90"; empty for the CPU) adds
/// the library calls' device workspace, from the calls of MODULE, which must
/// still be func.calls carrying their kind and parameters (right after the
/// memory plan).
void printMemoryReport(mlir::ModuleOp module, llvm::ArrayRef<PlannedEntry> plans,
                       llvm::raw_ostream &os, llvm::StringRef chip);

} // namespace tcc

#endif // TCC_COMPILER_MEMORYREPORT_H
