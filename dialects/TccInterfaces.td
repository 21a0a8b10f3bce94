//===- TccInterfaces.td - interfaces of the tcc dialect ----*- tablegen -*-===//
//
// The gradient rule of an op, for reverse-mode autodiff (passes/Autodiff.cpp).
// The rules are attached as external models (passes/autodiff/), so that the
// dialect does not depend on them and each rule sits next to the others.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_INTERFACES_TD
#define TCC_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Tcc_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::tcc";
  let description = [{
    An op with a reverse-mode gradient rule: given the gradient of the loss
    with respect to each result, build the gradient with respect to each
    operand (vector-Jacobian products) at the builder's insertion point.
  }];
  let methods = [
    InterfaceMethod<[{
        Appends one value per operand to `operandGrads`: the gradient of the
        loss with respect to that operand, shaped like it, or a null value
        for an operand that has none (integer indices, a boolean condition).
        `resultGrads` holds one value per result; a null entry means the loss
        does not depend on that result (zero). Fails, with a diagnostic,
        when the op's gradient is not defined for these operands.
      }],
      "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

#endif // TCC_INTERFACES_TD
