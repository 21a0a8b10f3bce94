//===- LinalgPayload.h - a linalg op's body at one point of its loops -----===//
//
// For passes that build their own loops around a linalg op on buffers (GPU
// kernels, CPU reductions with register accumulators): load the operands at
// given loop indices, run the body, store the results.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_CODEGEN_LINALGPAYLOAD_H
#define TCC_PASSES_CODEGEN_LINALGPAYLOAD_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace tcc {

/// Loads the inputs of OP at loop indices IVS (one per loop), clones its body
/// with the outputs' block arguments bound to OUTS (null for outputs the body
/// does not read) and returns what it yields.
llvm::SmallVector<mlir::Value> emitLinalgPayload(mlir::OpBuilder &b, mlir::Location loc,
                                                 mlir::linalg::LinalgOp op, mlir::ValueRange ivs,
                                                 mlir::ValueRange outs);

/// Clones OP's body at loop indices IVS with its inputs' block arguments
/// bound to INS (one per input: the loaded value, or null for an unused
/// buffer or a scalar operand, which is used as is) and its outputs' to OUTS
/// (as above); returns what it yields.
llvm::SmallVector<mlir::Value> cloneLinalgBody(mlir::OpBuilder &b, mlir::Location loc,
                                               mlir::linalg::LinalgOp op, mlir::ValueRange ivs,
                                               mlir::ValueRange ins, mlir::ValueRange outs);

/// Loads each output at IVS, or leaves it null when the body does not read
/// it. An output with a non-null entry in KNOWN is not loaded: its value is
/// that (the constant of an absorbed fill, see initFills).
llvm::SmallVector<mlir::Value> loadLinalgOutputs(mlir::OpBuilder &b, mlir::Location loc,
                                                 mlir::linalg::LinalgOp op, mlir::ValueRange ivs,
                                                 mlir::ValueRange known = {});

/// The linalg.fill ops a lowering may absorb into OP, one entry per output
/// (null where none): OP reduces into registers started from the fill's
/// constant instead of loading what the fill wrote, so the fill's pass over
/// memory goes. An output qualifies when
///  - OP has reduction loops and its body reads the output,
///  - the output's indexing map is a permutation of OP's parallel loops
///    (every element is written exactly once), and
///  - the fill writes that same buffer (the same SSA value) with a scalar
///    and is the last op before OP in the block to use the buffer.
/// The caller erases the fills it absorbs.
llvm::SmallVector<mlir::linalg::FillOp> initFills(mlir::linalg::LinalgOp op);

/// The constants of FILLS (null where a fill is null), for loadLinalgOutputs.
llvm::SmallVector<mlir::Value> fillValues(llvm::ArrayRef<mlir::linalg::FillOp> fills);

/// Stores VALUES into the outputs at IVS.
void storeLinalgOutputs(mlir::OpBuilder &b, mlir::Location loc, mlir::linalg::LinalgOp op,
                        mlir::ValueRange ivs, mlir::ValueRange values);

} // namespace tcc

#endif // TCC_PASSES_CODEGEN_LINALGPAYLOAD_H
