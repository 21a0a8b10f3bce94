//===- TccNames.h - the attribute names and roles the stages agree on -----===//
//
// The contract between the importer, the passes and the artifact writer is
// carried by discardable attributes on functions, their arguments and the
// module. Each name is spelled here once; every stage includes this header.
// The names the runtime also knows (entry points, runtime inputs, metadata
// keys) are in runtime/include/tcc/abi.h, which both sides include.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_DIALECTS_TCCNAMES_H
#define TCC_DIALECTS_TCCNAMES_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace tcc {

namespace attr {
// What an argument or result of an entry point is (a StringAttr: its name).
// The importer marks graph inputs and outputs; tcc-build-train-step marks
// the parameters, the optimizer state and the runtime scalars.
inline constexpr llvm::StringLiteral input = "tcc.input";
inline constexpr llvm::StringLiteral output = "tcc.output";
inline constexpr llvm::StringLiteral param = "tcc.param";
inline constexpr llvm::StringLiteral state = "tcc.state";
/// On a tcc.param argument (frontends -> tcc-build-train-step, the artifact
/// writer): the parameter is one of the model's buffers (PyTorch's
/// register_buffer), state that is never trained and keeps its exact value.
/// The string says how the frontend knows: one of the three below.
inline constexpr llvm::StringLiteral buffer = "tcc.buffer";
/// The exporter recorded it (PyTorch's graph signature: kind BUFFER).
inline constexpr llvm::StringLiteral bufferBySignature = "graph signature";
/// The user named it (tcc --buffers).
inline constexpr llvm::StringLiteral bufferByOption = "option";
/// Its values hold an infinity or NaN, which no trained parameter does: a
/// guess, which the training step warns about.
inline constexpr llvm::StringLiteral bufferByValues = "non-finite values";
/// On a result: the parameter or state argument (by name) whose new value it
/// is, so that the memory plan updates it in place.
inline constexpr llvm::StringLiteral update = "tcc.update";
/// On an input or output whose leading dimension follows the batch (the
/// frontends, dialects/BatchRows.h): the rows of that dimension per sample
/// (an i64), so that the runtime can pad a partial batch. On the function:
/// the compiled batch.
inline constexpr llvm::StringLiteral batchRows = "tcc.batch_rows";
inline constexpr llvm::StringLiteral batch = "tcc.batch";

// On a batch norm op (importer -> tcc-build-train-step).
/// The argument numbers of its running mean and variance.
inline constexpr llvm::StringLiteral runningStats = "tcc.running_stats";
/// ONNX's momentum of the running statistics.
inline constexpr llvm::StringLiteral momentum = "tcc.momentum";

// On an op (tcc-build-train-step -> tcc-precision): computes in f32 under any
// precision policy (the optimizer, the gradient norm, loss scaling).
inline constexpr llvm::StringLiteral keepFp32 = "tcc.keep_fp32";

// On the module (importer).
inline constexpr llvm::StringLiteral opset = "tcc.opset";
/// The node of a batch norm that an eval-mode export folded into a
/// convolution (tcc-build-train-step warns: it cannot train as one).
inline constexpr llvm::StringLiteral foldedBatchNorm = "tcc.folded_batch_norm";
/// The exporter that wrote the model, where the file says so:
/// exporterTorchExport for PyTorch's dynamo exporter (its graph signature).
inline constexpr llvm::StringLiteral exporter = "tcc.exporter";
inline constexpr llvm::StringLiteral exporterTorchExport = "torch.export";
/// {node, rule, count}: the first node that the exporter's optimizer
/// rewrote (onnxscript's rule_name metadata), its rule, how many nodes carry
/// one (tcc-build-train-step warns: the rewrites change what trains).
inline constexpr llvm::StringLiteral exportRewrites = "tcc.export_rewrites";
/// The state_dict names of the parameters in the exporter's graph
/// signature that are no initializer of the file (merged, folded or
/// dropped; tcc-build-train-step warns).
inline constexpr llvm::StringLiteral exportMissing = "tcc.export_missing";
/// String key / value pairs for the descriptor's metadata table.
inline constexpr llvm::StringLiteral metadata = "tcc.metadata";

// On a function (tcc-lower-to-linalg -> tcc-plan-memory): the element types
// of arguments before lowering widened them.
inline constexpr llvm::StringLiteral declaredTypes = "tcc.declared_types";

// Rematerialization (tcc-rematerialize -> tcc-keep-recomputed, the memory
// report).
/// In a clone's location (FusedLoc metadata) and then on the ops it lowers
/// to: the clone's number, unique in its function.
inline constexpr llvm::StringLiteral recomputed = "tcc.recomputed";
/// On a function: what was recomputed and the model's peaks.
inline constexpr llvm::StringLiteral remat = "tcc.remat";

// The memory plan (tcc-plan-memory -> readPlans, the memory report).
inline constexpr llvm::StringLiteral plan = "tcc.plan";
inline constexpr llvm::StringLiteral planTemps = "tcc.plan_temps";
/// The ONNX node each of tcc.plan_temps' buffers was allocated for.
inline constexpr llvm::StringLiteral planTempNames = "tcc.plan_temp_names";
inline constexpr llvm::StringLiteral arenaSize = "tcc.arena_size";
inline constexpr llvm::StringLiteral stateSize = "tcc.state_size";

// Library calls (tcc-mark-library-calls -> lowering, the artifact writer).
/// On a call: its kind and parameters.
inline constexpr llvm::StringLiteral libraryCall = "tcc.library_call";
/// On the module: the descriptor's library-call table.
inline constexpr llvm::StringLiteral libraryCalls = "tcc.library_calls";
/// A call of a collective declaration (tcc-schedule-collectives): its kind,
/// its parameters and, for a START, the module-wide `id` its WAIT's
/// `start` names; the module's table of them (the descriptor's
/// collectives), as tcc.library_call / tcc.library_calls.
/// In a tcc.library_call of a convolution (tcc-filter-layouts -> lowering):
/// the set K of buffers, listed by the module's tcc.filter_layouts (an
/// array of arrays of state tensor names), that the runtime may keep in
/// the call's filter layout.
inline constexpr llvm::StringLiteral filterLayout = "filter_layout";
inline constexpr llvm::StringLiteral filterLayouts = "tcc.filter_layouts";
inline constexpr llvm::StringLiteral collective = "tcc.collective";
inline constexpr llvm::StringLiteral collectives = "tcc.collectives";
/// On a linalg op that computes a convolution's gradient (tcc-lower-to-linalg
/// -> tcc-mark-library-calls): {kind, params} of the library call it is
/// (abi.h's CONV2D_BACKWARD_DATA / _WEIGHTS, the parameters up to the
/// padding). Fusion leaves such ops whole (passes/lowering/ConvBackward.h).
inline constexpr llvm::StringLiteral convBackward = "tcc.conv_backward";

// Device code (the CUDA pipeline -> the artifact writer), on the module.
inline constexpr llvm::StringLiteral device = "tcc.device";
inline constexpr llvm::StringLiteral devicePtx = "tcc.device_ptx";
inline constexpr llvm::StringLiteral kernels = "tcc.kernels";
/// --cuda-emulation (tcc-gpu-emulated-kernels): {kernel name: [twin symbol,
/// shared memory bytes, synchronizes (0 / 1)]}, the host twins of the kernels.
inline constexpr llvm::StringLiteral emulatedKernels = "tcc.emulated_kernels";
} // namespace attr

/// The role of a buffer in the memory plan. The first four are what a plan
/// entry's "role" says (and the artifact's tcc_role); the planner also
/// places the new values of parameters and state (Update, in their slot)
/// and intermediates (Temp).
enum class BufferRole { Input, Output, Param, State, Update, Temp };

/// The spelling in a `tcc.plan` entry and in messages.
llvm::StringRef roleName(BufferRole role);
/// The inverse of roleName, for the four roles a plan records.
std::optional<BufferRole> parsePlanRole(llvm::StringRef name);
/// Parameters and state persist across runs, in the state region.
inline bool isPersistent(BufferRole role) {
  return role == BufferRole::Param || role == BufferRole::State;
}

} // namespace tcc

#endif // TCC_DIALECTS_TCCNAMES_H
