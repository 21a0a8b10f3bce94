//===- TccInterfaces.td - interfaces of the tcc dialect ----*- tablegen -*-===//
//
// The gradient rule of an op, for reverse-mode autodiff (passes/training/Autodiff.cpp).
// The rules are attached as external models (passes/training/autodiff/), so that the
// dialect does not depend on them and each rule sits next to the others.
// The precision class of an op, for the mixed-precision pass
// (passes/training/Precision.cpp): stated in each op's ODS by a Tcc_Precision trait.
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

def Tcc_PrecisionOpInterface : OpInterface<"PrecisionOpInterface"> {
  let cppNamespace = "::tcc";
  let description = [{
    The precision class of an op under a 16-bit policy (`tcc --precision=bf16
    | fp16`, pass `tcc-precision`), and why: `low` ops compute in 16 bits
    (their f32 operands are cast down; matmuls and convolutions accumulate in
    f32 inside), `follow` ops compute in the type of their operands (16 bits
    when any float operand is 16 bits), `widened` ops are typed like `follow`
    ones but compute in f32 inside and round their result once (softmax,
    transcendental functions: 16-bit storage, f32 arithmetic), `fp32` ops
    keep f32 (16-bit operands are cast up), `explicit` ops have types of
    their own (casts, constants).
    Ops declare it with `Tcc_Precision<"class", "why">` in their traits.
  }];
  let methods = [
    InterfaceMethod<"The op's precision class.", "::tcc::PrecisionClass",
      "getPrecisionClass", (ins), [{ return ConcreteOp::kPrecisionClass; }]>,
    InterfaceMethod<"Why the op is in its class, for --report=precision.",
      "::llvm::StringRef", "getPrecisionReason", (ins),
      [{ return ConcreteOp::precisionReason(); }]>
  ];
}

/// The C++ trait (dialects/TccInterfaces.h) that gives an op its class, with
/// the reason spelled into the op.
class Tcc_PrecisionTrait<string cls, string why>
    : NativeOpTrait<"Precision" # cls, [],
        "static ::llvm::StringRef precisionReason() { return \"" # why # "\"; }"> {
  let cppNamespace = "::tcc::OpTrait";
}

/// An op's precision class (Low, Follow, Fp32 or Explicit) and the reason.
class Tcc_Precision<string cls, string why>
    : TraitList<[Tcc_PrecisionTrait<cls, why>, Tcc_PrecisionOpInterface]>;

#endif // TCC_INTERFACES_TD
