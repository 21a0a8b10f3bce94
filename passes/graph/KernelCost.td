//===- KernelCost.td - the one cost model of kernels and tcc ops ---------===//
//
// What one kernel (a linalg op on tensors or buffers, or a tcc op) costs: the
// arithmetic of one iteration of its loops, the iterations and the bytes it
// moves. Attached to linalg's and tcc's ops as external models
// (KernelCost.cpp); tcc-fuse-elementwise decides with it and `tcc
// --report=fusion` prints it, tcc-rematerialize weighs what it recomputes
// with it (tcc::arithmetic: iterations x cost per point).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_KERNEL_COST_TD
#define TCC_KERNEL_COST_TD

include "mlir/IR/OpBase.td"

def KernelCostOpInterface : OpInterface<"KernelCostOpInterface"> {
  let description = [{
    A kernel's cost, for fusion and for rematerialization. The weights of
    one loop iteration are named once (tcc::cost in KernelCost.h): 1 per
    simple op (add, mul, compare, select, cast), 8 per division, remainder
    or square root, 8 per gathered element (a dependent load), 16 per
    transcendental function (exp, log, tanh, erf, pow, ...); index ops,
    constants and views are free.
    A linalg op sums the weights of its body's ops per point, over all its
    loops. A tcc op is weighed by family: elementwise ops per result element
    (transcendental 16, division or square root 8); matmuls and convolutions
    2 (a multiply-add) per result element and reduced element; softmax
    20 (16 + 4) and layer norm 10 per input element; a reshape 0; any other
    op (data movement, reductions, pooling, ...) 1 per element of the
    larger of its first result and its first operand, which is also the
    cost of an op that has no model at all.
    Bytes moved: every operand's footprint once (an output the body reads
    counts twice), an operand walked across its innermost dimension
    (transposed) and larger than 1 MiB counts one cache line per element;
    the minimum is the footprints alone. A tcc op has no layout yet: its
    operands' and results' footprints are both.
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
