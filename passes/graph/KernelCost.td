//===- KernelCost.td - the cost interface fusion decisions read ----------===//
//
// What one kernel (a linalg op on tensors or buffers) costs: the arithmetic
// of one iteration of its loops and the bytes it moves. Attached to linalg
// ops as external models (KernelCost.cpp); tcc-fuse-elementwise decides with
// it and `tcc --report=fusion` prints it.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_KERNEL_COST_TD
#define TCC_KERNEL_COST_TD

include "mlir/IR/OpBase.td"

def KernelCostOpInterface : OpInterface<"KernelCostOpInterface"> {
  let description = [{
    A kernel's cost for fusion decisions. Weights of one loop iteration:
    1 per simple arith op (add, mul, compare, select, cast), 8 per division,
    remainder or square root, 8 per gathered element (a dependent load),
    16 per transcendental function (exp, log, tanh, erf, pow, ...); index
    ops and constants are free. Bytes moved: every operand's footprint once
    (an output the body reads counts twice), an operand walked across its
    innermost dimension (transposed) and larger than 1 MiB counts one cache
    line per element; the minimum is the footprints alone.
  }];
  let cppNamespace = "::tcc";
  let methods = [
    InterfaceMethod<"Weighted arithmetic of one iteration of the loops",
                    "double", "getCostPerPoint">,
    InterfaceMethod<"Iterations of all loops", "int64_t", "getIterationCount">,
    InterfaceMethod<"Bytes read and written, with the strided-access penalty",
                    "int64_t", "getBytesMoved">,
    InterfaceMethod<"Bytes of the operands, each read or written once",
                    "int64_t", "getMinimumBytes">,
  ];
}

#endif // TCC_KERNEL_COST_TD
