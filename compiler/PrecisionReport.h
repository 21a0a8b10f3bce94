//===- PrecisionReport.h - how a 16-bit step's library calls run ----------===//
//
// The part of `tcc --report=precision` that the precision pass cannot know:
// after the library calls are planned, which calls the artifact makes in
// which dtypes, and which library and instruction set runs each kind on
// the compiling machine (the runtime decides again on the machine that
// runs the artifact: runtime/cpu/onednn.h).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_PRECISIONREPORT_H
#define TCC_COMPILER_PRECISIONREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "compiler/LLVMCodegen.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>

namespace tcc {

/// Prints MODULE's library calls (its tcc.library_calls table) grouped by
/// kind and dtypes, each with the library and instruction set that runs it:
/// on a CPU with the features HOST (LLVM names), or on a GPU when DEVICE;
/// then what the generated kernels convert 16-bit values with, for the
/// features TARGET the artifact is compiled for (--cpu), and for each of
/// the VARIANTS it also holds.
void printLibraryCallPrecision(mlir::ModuleOp module, bool device,
                               const std::set<std::string> &host,
                               const std::set<std::string> &target,
                               llvm::ArrayRef<TargetCpu> variants, llvm::raw_ostream &os);

} // namespace tcc

#endif // TCC_COMPILER_PRECISIONREPORT_H
