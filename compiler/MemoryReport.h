//===- MemoryReport.h - what the memory plan holds, for people ------------===//
//
// The plan's footprint (what the artifact allocates on its target), its peak
// (the op where the most arena bytes are live, and which buffers those are),
// the report `tcc --report=memory` prints, and the plot of `--memory-plot`.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_MEMORYREPORT_H
#define TCC_COMPILER_MEMORYREPORT_H

#include "compiler/ArtifactWriter.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tcc {

/// What an artifact allocates: one arena (the largest entry point's), one
/// state region, and on CUDA the library calls' workspace at the arena's
/// tail. The CPU's oneDNN scratchpad is sized by oneDNN at session creation
/// (tcc-run --list shows it) and is not part of the compile-time figure.
struct MemoryFootprint {
  int64_t arena = 0, state = 0, workspace = 0;
  int64_t total() const { return arena + state + workspace; }
};

/// The footprint of PLANS; CHIP ("sm_90"; empty for the CPU) adds the
/// workspace of MODULE's library calls (right after the memory plan).
MemoryFootprint memoryFootprint(mlir::ModuleOp module, llvm::ArrayRef<PlannedEntry> plans,
                                llvm::StringRef chip);

/// "12.5 MiB".
std::string humanBytes(int64_t bytes);

/// The arena bytes live at each op position of E: its named arena tensors
/// (inputs and outputs, resident throughout) and the intermediates live
/// there.
std::vector<int64_t> liveBytes(const PlannedEntry &e);

/// For the entry point with the largest arena: where its peak is and the
/// ROWS largest buffers live there, with their nodes and sizes.
void printPeak(llvm::ArrayRef<PlannedEntry> plans, llvm::raw_ostream &os, size_t rows);

/// The largest tensor-level peak tcc-rematerialize reached in MODULE's
/// functions (their tcc.remat records), or 0.
int64_t rematModelPeak(mlir::ModuleOp module);

/// Prints each planned entry point's region sizes, its peak and the buffers
/// live there, the bytes by kind (activations, parameters, optimizer state,
/// workspace), what tcc-rematerialize recomputed and its cost, and its
/// largest buffers. WITHOUT (may be empty): the plans before recomputation,
/// for the saving. CHIP as for memoryFootprint.
void printMemoryReport(mlir::ModuleOp module, llvm::ArrayRef<PlannedEntry> plans,
                       llvm::ArrayRef<PlannedEntry> without, llvm::raw_ostream &os,
                       llvm::StringRef chip);

/// Writes an SVG to PATH: the live arena bytes over the schedule of the
/// entry point with the largest arena, for PLANS and (when not empty)
/// WITHOUT, the plans before recomputation, each on its own schedule scaled
/// to one width; BUDGET (0: none) as a line. False with MESSAGE on an I/O
/// error.
bool writeMemoryPlot(llvm::StringRef path, llvm::ArrayRef<PlannedEntry> plans,
                     llvm::ArrayRef<PlannedEntry> without, int64_t budget, int64_t state,
                     std::string &message);

} // namespace tcc

#endif // TCC_COMPILER_MEMORYREPORT_H
