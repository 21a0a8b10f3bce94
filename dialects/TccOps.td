//===- TccOps.td - the ops of the tcc dialect ----------------*- tablegen -*-===//
//
// Every tcc op: elementwise math, data movement, linear algebra and neural
// network ops, reductions, normalization, losses. Shapes are static.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_OPS_TD
#define TCC_OPS_TD

include "dialects/TccBase.td"
include "dialects/TccInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Tcc_ConstantOp : Tcc_Op<"constant", [Tcc_Precision<"Explicit", "types of its own">, ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    A tensor whose value is known when the model is compiled: a folded shape
    computation, an ONNX `Constant`, an integer initializer.

    ```mlir
    %c = tcc.constant dense<[1, 2]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

class Tcc_UnaryOp<string mnemonic, Type type, string math,
                  list<Trait> traits = []>
    : Tcc_Op<mnemonic, !listconcat([Pure, Elementwise,
                                    SameOperandsAndResultType], traits)> {
  let summary = "elementwise " # math;
  let description = "Computes `" # math # "` for each element.\n\n"
      # "```mlir\n%y = tcc." # mnemonic # " %x : tensor<4xf32>\n```";
  let arguments = (ins type:$input);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Tcc_NegOp : Tcc_UnaryOp<"neg", Tcc_NumTensor, "-x", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_AbsOp : Tcc_UnaryOp<"abs", Tcc_NumTensor, "|x|", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_SignOp : Tcc_UnaryOp<"sign", Tcc_NumTensor, "sign(x)", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_ExpOp : Tcc_UnaryOp<"exp", Tcc_FloatTensor, "exp(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_LogOp : Tcc_UnaryOp<"log", Tcc_FloatTensor, "log(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_SqrtOp : Tcc_UnaryOp<"sqrt", Tcc_FloatTensor, "sqrt(x)", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_RsqrtOp : Tcc_UnaryOp<"rsqrt", Tcc_FloatTensor, "1/sqrt(x)", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_ReciprocalOp : Tcc_UnaryOp<"reciprocal", Tcc_FloatTensor, "1/x", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_TanhOp : Tcc_UnaryOp<"tanh", Tcc_FloatTensor, "tanh(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_SigmoidOp : Tcc_UnaryOp<"sigmoid", Tcc_FloatTensor, "1/(1+exp(-x))", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_ReluOp : Tcc_UnaryOp<"relu", Tcc_NumTensor, "max(x, 0)", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_ErfOp : Tcc_UnaryOp<"erf", Tcc_FloatTensor, "erf(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_SoftplusOp : Tcc_UnaryOp<"softplus", Tcc_FloatTensor, "log(1+exp(x))", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_SinOp : Tcc_UnaryOp<"sin", Tcc_FloatTensor, "sin(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_CosOp : Tcc_UnaryOp<"cos", Tcc_FloatTensor, "cos(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
// The rest of ONNX's trigonometric and hyperbolic functions (Tan ... Atanh).
def Tcc_TanOp : Tcc_UnaryOp<"tan", Tcc_FloatTensor, "tan(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_AsinOp : Tcc_UnaryOp<"asin", Tcc_FloatTensor, "asin(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_AcosOp : Tcc_UnaryOp<"acos", Tcc_FloatTensor, "acos(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_AtanOp : Tcc_UnaryOp<"atan", Tcc_FloatTensor, "atan(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_SinhOp : Tcc_UnaryOp<"sinh", Tcc_FloatTensor, "sinh(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_CoshOp : Tcc_UnaryOp<"cosh", Tcc_FloatTensor, "cosh(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_AsinhOp : Tcc_UnaryOp<"asinh", Tcc_FloatTensor, "asinh(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_AcoshOp : Tcc_UnaryOp<"acosh", Tcc_FloatTensor, "acosh(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_AtanhOp : Tcc_UnaryOp<"atanh", Tcc_FloatTensor, "atanh(x)", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]>;
def Tcc_FloorOp : Tcc_UnaryOp<"floor", Tcc_FloatTensor, "floor(x)", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_CeilOp : Tcc_UnaryOp<"ceil", Tcc_FloatTensor, "ceil(x)", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_RoundOp : Tcc_UnaryOp<"round", Tcc_FloatTensor,
                              "x rounded half to even", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_NotOp : Tcc_UnaryOp<"not", Tcc_BoolTensor, "logical not", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;

def Tcc_GeluOp : Tcc_Op<"gelu", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">, Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `x * Phi(x)`, exactly (with erf) or with the tanh approximation.

    ```mlir
    %y = tcc.gelu %x {approximate = true} : tensor<4xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input,
                   DefaultValuedAttr<BoolAttr, "false">:$approximate);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

class Tcc_ParamUnaryOp<string mnemonic, string math, Trait precision>
    : Tcc_Op<mnemonic, [precision, Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "elementwise " # math;
  let description = "Computes `" # math # "` for each element.\n\n"
      # "```mlir\n%y = tcc." # mnemonic
      # " %x {alpha = 0.1 : f64} : tensor<4xf32>\n```";
  let arguments = (ins Tcc_FloatTensor:$input, F64Attr:$alpha);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Tcc_LeakyReluOp : Tcc_ParamUnaryOp<"leaky_relu", "x >= 0 ? x : alpha*x",
    Tcc_Precision<"Follow", "elementwise: rounds once per op">>;
def Tcc_EluOp : Tcc_ParamUnaryOp<"elu", "x > 0 ? x : alpha*(exp(x)-1)",
    Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">>;

def Tcc_ClampOp : Tcc_Op<"clamp", [Tcc_Precision<"Follow", "elementwise: rounds once per op">, Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "elementwise clamp to constant bounds";
  let description = [{
    `min(max(x, min), max)` with compile-time bounds (ONNX Clip with constant
    bounds, Relu6, HardSigmoid's outer clamp). A missing bound is unbounded.

    ```mlir
    %y = tcc.clamp %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
    ```
  }];
  let arguments = (ins Tcc_NumTensor:$input, OptionalAttr<F64Attr>:$min,
                   OptionalAttr<F64Attr>:$max);
  let results = (outs Tcc_NumTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Tcc_CastOp : Tcc_Op<"cast", [Tcc_Precision<"Explicit", "types of its own">, Pure, Elementwise, SameOperandsAndResultShape]> {
  let summary = "element type conversion";
  let description = [{
    Converts each element to the result's element type: floats round to
    nearest even, float to integer truncates toward zero, anything to i1 is
    `x != 0`.

    ```mlir
    %y = tcc.cast %x : tensor<4xf32> to tensor<4xi64>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops (operands have one shape; broadcasting is explicit)
//===----------------------------------------------------------------------===//

class Tcc_BinaryOp<string mnemonic, Type type, string math,
                   list<Trait> traits = []>
    : Tcc_Op<mnemonic, !listconcat([Pure, Elementwise,
                                    SameOperandsAndResultType], traits)> {
  let summary = "elementwise " # math;
  let description = "Computes `" # math # "` for each pair of elements; the "
      # "operands have one shape (broadcast with `tcc.broadcast_in_dim`).\n\n"
      # "```mlir\n%z = tcc." # mnemonic # " %x, %y : tensor<4xf32>\n```";
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Tcc_AddOp : Tcc_BinaryOp<"add", Tcc_NumTensor, "x + y", [Commutative, Tcc_Precision<"Follow", "elementwise: rounds once per op">]> {
  let hasCanonicalizer = 1;
}
def Tcc_SubOp : Tcc_BinaryOp<"sub", Tcc_NumTensor, "x - y", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_MulOp : Tcc_BinaryOp<"mul", Tcc_NumTensor, "x * y", [Commutative, Tcc_Precision<"Follow", "elementwise: rounds once per op">]> {
  let hasCanonicalizer = 1;
}
def Tcc_DivOp : Tcc_BinaryOp<"div", Tcc_NumTensor,
                             "x / y (integers truncate toward zero)", [Tcc_Precision<"Follow", "elementwise: rounds once per op">]> {
  let hasCanonicalizer = 1;
}
def Tcc_PowOp : Tcc_BinaryOp<"pow", Tcc_NumTensor, "x ^ y", [Tcc_Precision<"Widened", "transcendental: f32 inside, rounded once">]> {
  let hasCanonicalizer = 1;
}
def Tcc_MaxOp : Tcc_BinaryOp<"max", Tcc_NumTensor, "max(x, y)", [Commutative, Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_MinOp : Tcc_BinaryOp<"min", Tcc_NumTensor, "min(x, y)", [Commutative, Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_AndOp : Tcc_BinaryOp<"and", Tcc_BoolTensor, "x and y", [Commutative, Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_OrOp : Tcc_BinaryOp<"or", Tcc_BoolTensor, "x or y", [Commutative, Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;
def Tcc_XorOp : Tcc_BinaryOp<"xor", Tcc_BoolTensor, "x xor y", [Commutative, Tcc_Precision<"Follow", "elementwise: rounds once per op">]>;

def Tcc_CompareOp : Tcc_Op<"compare", [Tcc_Precision<"Follow", "elementwise: rounds once per op">, Pure, Elementwise,
    SameTypeOperands, InferTypeOpAdaptor]> {
  let summary = "elementwise comparison";
  let description = [{
    Compares two tensors of one type element by element; the result is i1.
    NaN compares unequal and unordered (`ne` is true, all others false).

    ```mlir
    %m = tcc.compare lt, %x, %y : tensor<4xf32>
    ```
  }];
  let arguments = (ins Tcc_CmpPredicate:$predicate, Tcc_NumTensor:$lhs,
                   Tcc_NumTensor:$rhs);
  let results = (outs Tcc_BoolTensor:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs)";
  let hasFolder = 1;
}

def Tcc_SelectOp : Tcc_Op<"select", [Tcc_Precision<"Follow", "elementwise: rounds once per op">, Pure, Elementwise,
    AllTypesMatch<["on_true", "on_false", "result"]>,
    AllShapesMatch<["cond", "result"]>]> {
  let summary = "elementwise choice (ONNX Where)";
  let description = [{
    Takes `on_true` where `cond` holds and `on_false` elsewhere.

    ```mlir
    %z = tcc.select %c, %x, %y : tensor<4xi1>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Tcc_BoolTensor:$cond, Tcc_Tensor:$on_true,
                   Tcc_Tensor:$on_false);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat =
      "$cond `,` $on_true `,` $on_false attr-dict `:` type($cond) `,` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Tcc_BroadcastInDimOp : Tcc_Op<"broadcast_in_dim", [Tcc_Precision<"Follow", "moves or picks values: exact in any type">, Pure, SameOperandsAndResultElementType]> {
  let summary = "explicit broadcast to a larger shape";
  let description = [{
    Operand dimension `i` becomes result dimension `dims[i]`; it must have the
    result's size or size 1 (then it is repeated). Result dimensions that no
    operand dimension maps to are repeated as well. The importer turns ONNX's
    implicit (numpy or legacy `axis`) broadcasting and `Expand` into this op.

    ```mlir
    %y = tcc.broadcast_in_dim %x, dims = [1] : tensor<4xf32> -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat =
      "$input `,` `dims` `=` $dims attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tcc_ReshapeOp : Tcc_Op<"reshape", [Tcc_Precision<"Follow", "moves or picks values: exact in any type">, Pure, SameOperandsAndResultElementType]> {
  let summary = "reinterpretation with another shape";
  let description = [{
    Row-major reinterpretation; element counts must match. ONNX Reshape,
    Flatten, Squeeze and Unsqueeze all become this op.

    ```mlir
    %y = tcc.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tcc_TransposeOp : Tcc_Op<"transpose", [Tcc_Precision<"Follow", "moves or picks values: exact in any type">, Pure, InferTypeOpAdaptor]> {
  let summary = "permutation of dimensions";
  let description = [{
    Result dimension `i` is operand dimension `perm[i]`.

    ```mlir
    %y = tcc.transpose %x, perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat =
      "$input `,` `perm` `=` $perm attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tcc_ConcatOp : Tcc_Op<"concat", [Tcc_Precision<"Follow", "moves or picks values: exact in any type">, Pure, InferTypeOpAdaptor]> {
  let summary = "concatenation along one axis";
  let description = [{
    ```mlir
    %z = tcc.concat %x, %y {axis = 0 : i64} : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
    ```
  }];
  let arguments = (ins Variadic<Tcc_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat =
      "$inputs attr-dict `:` `(` type($inputs) `)` `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tcc_SliceOp : Tcc_Op<"slice", [Tcc_Precision<"Follow", "moves or picks values: exact in any type">, Pure, SameOperandsAndResultElementType]> {
  let summary = "strided window of a tensor";
  let description = [{
    Result element `i` along dimension `d` is operand element
    `start[d] + i * stride[d]`; the result's shape gives the count. Strides may
    be negative (ONNX Slice with negative steps). ONNX Slice and Split become
    this op once their bounds are normalized.

    ```mlir
    %y = tcc.slice %x, start = [1], stride = [2] : tensor<8xf32> -> tensor<3xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, DenseI64ArrayAttr:$start,
                   DenseI64ArrayAttr:$stride);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input `,` `start` `=` $start `,` `stride` `=` $stride "
                       "attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tcc_PadOp : Tcc_Op<"pad", [Tcc_Precision<"Follow", "moves or picks values: exact in any type">, Pure, InferTypeOpAdaptor]> {
  let summary = "padding (constant, reflect, edge or wrap)";
  let description = [{
    Adds `low[d]` elements before and `high[d]` after dimension `d`; both are
    non-negative (negative ONNX pads become a slice). Constant mode fills with
    `value`.

    ```mlir
    %y = tcc.pad %x, low = [1], high = [2] {mode = 0 : i32, value = 0.0 : f64} : tensor<4xf32> -> tensor<7xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, DenseI64ArrayAttr:$low,
                   DenseI64ArrayAttr:$high,
                   DefaultValuedAttr<Tcc_PadMode, "::tcc::PadMode::constant">:$mode,
                   DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input `,` `low` `=` $low `,` `high` `=` $high "
                       "attr-dict `:` type($input) `->` type($result)";
}

def Tcc_GatherOp : Tcc_Op<"gather", [Tcc_Precision<"Follow", "moves or picks values: exact in any type">, Pure, InferTypeOpAdaptor]> {
  let summary = "take slices along an axis by index (ONNX Gather)";
  let description = [{
    Result shape: `input.shape[:axis] + indices.shape + input.shape[axis+1:]`.
    Negative indices count from the end. This is the embedding lookup.

    ```mlir
    %y = tcc.gather %table, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, Tcc_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` `(` type($input) `,` "
                       "type($indices) `)` `->` type($result)";
  let hasFolder = 1;
}

def Tcc_GatherElementsOp : Tcc_Op<"gather_elements", [Tcc_Precision<"Follow", "moves or picks values: exact in any type">, Pure, InferTypeOpAdaptor]> {
  let summary = "elementwise gather along an axis (ONNX GatherElements)";
  let description = [{
    `result[i][j][k] = input[index[i][j][k]][j][k]` for axis 0, and so on.

    ```mlir
    %y = tcc.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xi64>) -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, Tcc_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` `(` type($input) `,` "
                       "type($indices) `)` `->` type($result)";
}

def Tcc_ScatterElementsOp : Tcc_Op<"scatter_elements", [Tcc_Precision<"Fp32", "accumulates: f32 sums">, Pure, AllTypesMatch<["input", "result"]>,
     AllElementTypesMatch<["input", "updates"]>]> {
  let summary = "elementwise scatter along an axis (ONNX ScatterElements)";
  let description = [{
    Copies `input`, then for each element of `updates` writes (or combines by
    `reduction`) it at the position given by `indices` along `axis`.

    ```mlir
    %y = tcc.scatter_elements %x, %i, %u {axis = 0 : i64} : tensor<3xf32>, tensor<2xi64>, tensor<2xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, Tcc_IndexTensor:$indices,
                   Tcc_Tensor:$updates, I64Attr:$axis,
                   DefaultValuedAttr<Tcc_ScatterReduction,
                                     "::tcc::ScatterReduction::none">:$reduction);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input `,` $indices `,` $updates attr-dict `:` "
                       "type($input) `,` type($indices) `,` type($updates)";
  let hasVerifier = 1;
}

def Tcc_ScatterNdOp : Tcc_Op<"scatter_nd", [Tcc_Precision<"Fp32", "accumulates: f32 sums">, Pure, AllTypesMatch<["input", "result"]>,
     AllElementTypesMatch<["input", "updates"]>]> {
  let summary = "scatter slices by index tuples (ONNX ScatterND)";
  let description = [{
    `indices` has shape `[..., k]`; each index tuple selects a slice of
    `input` of rank `rank(input) - k` that receives the matching slice of
    `updates`.

    ```mlir
    %y = tcc.scatter_nd %x, %i, %u : tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Tcc_Tensor:$input, Tcc_IndexTensor:$indices,
                   Tcc_Tensor:$updates,
                   DefaultValuedAttr<Tcc_ScatterReduction,
                                     "::tcc::ScatterReduction::none">:$reduction);
  let results = (outs Tcc_Tensor:$result);
  let assemblyFormat = "$input `,` $indices `,` $updates attr-dict `:` "
                       "type($input) `,` type($indices) `,` type($updates)";
  let hasVerifier = 1;
}

def Tcc_CumSumOp : Tcc_Op<"cumsum", [Tcc_Precision<"Fp32", "accumulates: f32 sums">, Pure, SameOperandsAndResultType]> {
  let summary = "cumulative sum along an axis";
  let description = [{
    ```mlir
    %y = tcc.cumsum %x {axis = 0 : i64, exclusive = false, reverse = false} : tensor<4xf32>
    ```
  }];
  let arguments = (ins Tcc_NumTensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Tcc_NumTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Tcc_ReduceOp<string mnemonic, string math, Trait precision>
    : Tcc_Op<mnemonic, [precision, Pure, InferTypeOpAdaptor]> {
  let summary = math # " over the given axes";
  let description = "Reduces with `" # math # "` over `axes` (sorted, "
      # "non-negative, unique); reduced dimensions stay as size 1 when "
      # "`keepdims` holds. An empty `axes` list is the identity.\n\n"
      # "```mlir\n%y = tcc." # mnemonic
      # " %x {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>\n```";
  let arguments = (ins Tcc_NumTensor:$input, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Tcc_NumTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Tcc_ReduceSumOp : Tcc_ReduceOp<"reduce_sum", "sum", Tcc_Precision<"Fp32", "accumulates: f32 sums">>;
def Tcc_ReduceMeanOp : Tcc_ReduceOp<"reduce_mean", "mean", Tcc_Precision<"Fp32", "accumulates: f32 sums">>;
def Tcc_ReduceMaxOp : Tcc_ReduceOp<"reduce_max", "max", Tcc_Precision<"Follow", "a max / min: exact in any type">>;
def Tcc_ReduceMinOp : Tcc_ReduceOp<"reduce_min", "min", Tcc_Precision<"Follow", "a max / min: exact in any type">>;
def Tcc_ReduceProdOp : Tcc_ReduceOp<"reduce_prod", "product", Tcc_Precision<"Fp32", "accumulates: f32 sums">>;

class Tcc_ArgReduceOp<string mnemonic, string what>
    : Tcc_Op<mnemonic, [Tcc_Precision<"Follow", "a max / min: exact in any type">, Pure, InferTypeOpAdaptor]> {
  let summary = "index of the " # what # " along an axis";
  let description = "Index (i64) of the " # what # " along `axis`; ties "
      # "take the first index, or the last with `select_last_index`.\n\n"
      # "```mlir\n%i = tcc." # mnemonic
      # " %x {axis = 1 : i64, keepdims = true} : tensor<2x3xf32> -> tensor<2x1xi64>\n```";
  let arguments = (ins Tcc_NumTensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                   DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs StaticShapeTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Tcc_ArgMaxOp : Tcc_ArgReduceOp<"argmax", "maximum">;
def Tcc_ArgMinOp : Tcc_ArgReduceOp<"argmin", "minimum">;

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

def Tcc_MatmulOp : Tcc_Op<"matmul", [Tcc_Precision<"Low", "a product: 16-bit operands, f32 accumulation">, Pure, InferTypeOpAdaptor,
    AllElementTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "batched matrix product";
  let description = [{
    `[B..., M, K] x [B..., K, N] -> [B..., M, N]` with identical batch
    dimensions (the importer broadcasts them and promotes 1-D operands).

    ```mlir
    %z = tcc.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Tcc_NumTensor:$lhs, Tcc_NumTensor:$rhs);
  let results = (outs Tcc_NumTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` "
                       "type($rhs) `)` `->` type($result)";
  let hasCanonicalizer = 1;
}

def Tcc_ConvOp : Tcc_Op<"conv", [Tcc_Precision<"Low", "a product: 16-bit operands, f32 accumulation">, Pure, InferTypeOpAdaptor,
    AllElementTypesMatch<["input", "filter", "result"]>]> {
  let summary = "N-d grouped convolution, channels first";
  let description = [{
    Input `[N, C, D1..Dk]`, filter `[M, C/group, K1..Kk]`, result
    `[N, M, O1..Ok]` with `Oi = (Di + pad_low + pad_high - dilation*(Ki-1) - 1)
    / stride + 1`. ONNX's `auto_pad` is resolved to explicit pads at import;
    a bias is a separate broadcast add (fused back as an epilogue later).

    ```mlir
    %y = tcc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$filter,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high,
                   DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $filter attr-dict `:` `(` type($input) `,` "
                       "type($filter) `)` `->` type($result)";
  let hasCanonicalizer = 1;
}

def Tcc_ConvTransposeOp : Tcc_Op<"conv_transpose", [Tcc_Precision<"Low", "a product: 16-bit operands, f32 accumulation">, Pure, InferTypeOpAdaptor,
    AllElementTypesMatch<["input", "filter", "result"]>]> {
  let summary = "N-d grouped transposed convolution, channels first";
  let description = [{
    The gradient of `tcc.conv` with respect to its input. Input
    `[N, C, D1..Dk]`, filter `[C, M/group, K1..Kk]`, result `[N, M, O1..Ok]`
    with `Oi = stride*(Di-1) + output_padding + dilation*(Ki-1) + 1 - pad_low
    - pad_high`.

    ```mlir
    %y = tcc.conv_transpose %x, %w {strides = array<i64: 2>, dilations = array<i64: 1>, pad_low = array<i64: 0>, pad_high = array<i64: 0>, output_padding = array<i64: 0>, group = 1 : i64} : (tensor<1x2x3xf32>, tensor<2x4x3xf32>) -> tensor<1x4x7xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$filter,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high,
                   DenseI64ArrayAttr:$output_padding,
                   DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $filter attr-dict `:` `(` type($input) `,` "
                       "type($filter) `)` `->` type($result)";
}

def Tcc_ConvBackwardFilterOp : Tcc_Op<"conv_backward_filter", [Tcc_Precision<"Low", "a product: 16-bit operands, f32 accumulation">, Pure, InferTypeOpAdaptor,
    AllElementTypesMatch<["input", "grad", "result"]>]> {
  let summary = "Filter gradient of a grouped convolution, channels first";
  let description = [{
    The gradient of `tcc.conv` with respect to its filter: for the
    convolution of `input` `[N, C, D1..Dk]` (padded by `pad_low` /
    `pad_high`) by a filter `[M, C/group, K1..Kk]` (`kernel` gives the Ki)
    whose result's gradient is `grad` `[N, M, O1..Ok]`, the result
    `[M, C/group, K1..Kk]` is
    `sum over n, o of input[n, c, o*stride + k*dilation - pad_low] * grad[n, m, o]`
    with c in m's group. The windows must fit:
    `(Oi-1)*stride + (Ki-1)*dilation + 1 <= Di + pad_low + pad_high`; input
    rows no window reaches are ignored (as in the forward convolution). It
    is its own op (not transposes around a `tcc.conv`) so that code
    generation can hand it to a library's backward-weights convolution.

    ```mlir
    %dw = tcc.conv_backward_filter %x, %g {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<4x3x3x3xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$grad,
                   DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high,
                   DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` `(` type($input) `,` "
                       "type($grad) `)` `->` type($result)";
}

class Tcc_PoolOp<string mnemonic, string what, dag extra, Trait precision>
    : Tcc_Op<mnemonic, [precision, Pure, InferTypeOpAdaptor,
                        SameOperandsAndResultElementType]> {
  let summary = what # " pooling over the spatial dimensions";
  let description = what # " pooling of `[N, C, D1..Dk]` over windows of "
      # "`kernel`; `ceil_mode` rounds the output size up (a window must "
      # "still start inside the input or its low padding).\n\n"
      # "```mlir\n%y = tcc." # mnemonic
      # " %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, "
      # "dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, "
      # "pad_high = array<i64: 0, 0>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>\n```";
  let arguments = !con((ins Tcc_NumTensor:$input, DenseI64ArrayAttr:$kernel,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode), extra);
  let results = (outs Tcc_NumTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Tcc_MaxPoolOp : Tcc_PoolOp<"max_pool", "max", (ins),
    Tcc_Precision<"Follow", "moves or picks values: exact in any type">>;
def Tcc_AvgPoolOp : Tcc_PoolOp<"avg_pool", "average",
    (ins DefaultValuedAttr<BoolAttr, "false">:$count_include_pad), Tcc_Precision<"Fp32", "accumulates: f32 sums">>;

//===----------------------------------------------------------------------===//
// Normalization, softmax
//===----------------------------------------------------------------------===//

def Tcc_BatchNormInferenceOp : Tcc_Op<"batch_norm_inference", [Tcc_Precision<"Fp32", "normalization statistics">, Pure,
    AllTypesMatch<["input", "result"]>,
    AllTypesMatch<["scale", "bias", "mean", "variance"]>]> {
  let summary = "batch normalization with given statistics";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * scale + bias` per channel (dimension
    1 of `[N, C, ...]`).

    ```mlir
    %y = tcc.batch_norm_inference %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f64} : tensor<2x3x4xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$scale,
                   Tcc_FloatTensor:$bias, Tcc_FloatTensor:$mean,
                   Tcc_FloatTensor:$variance, F64Attr:$epsilon);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale `,` $bias `,` $mean `,` $variance "
                       "attr-dict `:` type($input) `,` type($scale)";
  let hasVerifier = 1;
}

def Tcc_BatchNormTrainingOp : Tcc_Op<"batch_norm_training", [Tcc_Precision<"Fp32", "normalization statistics">, Pure,
    InferTypeOpAdaptor, AllTypesMatch<["scale", "bias"]>]> {
  let summary = "batch normalization with batch statistics";
  let description = [{
    Normalizes with the mean and the biased variance of the batch, per
    channel; returns them too, so that running statistics can be updated.

    ```mlir
    %y, %m, %v = tcc.batch_norm_training %x, %s, %b {epsilon = 1.0e-05 : f64} : tensor<2x3x4xf32>, tensor<3xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$scale,
                   Tcc_FloatTensor:$bias, F64Attr:$epsilon);
  let results = (outs Tcc_FloatTensor:$result, Tcc_FloatTensor:$batch_mean,
                 Tcc_FloatTensor:$batch_variance);
  let assemblyFormat = "$input `,` $scale `,` $bias attr-dict `:` "
                       "type($input) `,` type($scale)";
}

def Tcc_LayerNormOp : Tcc_Op<"layer_norm", [Tcc_Precision<"Fp32", "normalization statistics">, Pure,
    InferTypeOpAdaptor]> {
  let summary = "layer normalization over the trailing dimensions";
  let description = [{
    Normalizes over dimensions `axis..rank-1`, then scales and (optionally)
    shifts. Also returns the mean and `1/sqrt(var + epsilon)`, shaped like
    the input with the normalized dimensions set to 1, for the backward pass.

    ```mlir
    %y, %mean, %rstd = tcc.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_FloatTensor:$scale,
                   Optional<Tcc_FloatTensor>:$bias, I64Attr:$axis,
                   F64Attr:$epsilon);
  let results = (outs Tcc_FloatTensor:$result, Tcc_FloatTensor:$mean,
                 Tcc_FloatTensor:$inv_std_dev);
  // Result types are spelled out: parsing must not infer them, because the
  // axis attribute is not yet a property while the op is being parsed.
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? attr-dict `:` "
                       "type($input) `,` type($scale) (`,` type($bias)^)? "
                       "`->` type($result) `,` type($mean) `,` type($inv_std_dev)";
}

class Tcc_SoftmaxOp<string mnemonic, string what, Trait precision>
    : Tcc_Op<mnemonic, [precision, Pure, SameOperandsAndResultType]> {
  let summary = what # " along one axis";
  let description = "Numerically stable " # what # " along `axis`.\n\n"
      # "```mlir\n%y = tcc." # mnemonic
      # " %x {axis = 1 : i64} : tensor<2x3xf32>\n```";
  let arguments = (ins Tcc_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tcc_SoftmaxOp : Tcc_SoftmaxOp<"softmax", "softmax",
    Tcc_Precision<"Widened", "exp and a row sum: f32 inside, 16-bit probabilities">>;
def Tcc_LogSoftmaxOp : Tcc_SoftmaxOp<"log_softmax", "log-softmax",
    Tcc_Precision<"Fp32", "log-probabilities for the loss">>;

//===----------------------------------------------------------------------===//
// Randomness, resampling, losses
//===----------------------------------------------------------------------===//

def Tcc_DropoutOp : Tcc_Op<"dropout", [Tcc_Precision<"Follow", "moves or picks values: exact in any type">, Pure, InferTypeOpAdaptor]> {
  let summary = "dropout (identity outside training)";
  let description = [{
    Without `rng` (a forward or inference function) this is the identity and
    the mask is all true. The training-step builder gives each dropout of the
    step the step's RNG state `rng = [seed, counter]` (a runtime input); then
    element `i` (row-major index) is kept when `u >= ratio`, where `u` is the
    first 32-bit word of Philox4x32-10 (Salmon et al., SC'11) with key
    `(seed low, seed high)` and counter `(i, stream, counter low, counter
    high)`, its top 24 bits scaled to [0, 1); kept elements are scaled by
    `1 / (1 - ratio)`. The mask is a pure function of (seed, counter, stream,
    i): the same on every backend and thread count, and reproducible after a
    resume. `stream` selects the random stream: two dropouts with different
    streams draw independent masks, and, since the op is pure, two dropouts
    of one value with one stream would be merged by CSE. The importer numbers
    the streams of a model 0, 1, 2, ...

    ```mlir
    %y, %mask = tcc.dropout %x {ratio = 0.1 : f64, stream = 0 : i64} : tensor<4xf32>
    %z, %keep = tcc.dropout %x rng(%rng : tensor<2xi64>) {ratio = 0.1 : f64, stream = 0 : i64} : tensor<4xf32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Optional<StaticShapeTensorOf<[I64]>>:$rng,
                   F64Attr:$ratio, I64Attr:$stream);
  let results = (outs Tcc_FloatTensor:$result, Tcc_BoolTensor:$mask);
  let assemblyFormat = [{
    $input (`rng` `(` $rng^ `:` type($rng) `)`)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Tcc_RandomOp : Tcc_Op<"random", [Tcc_Precision<"Follow", "random draws: the declared type">, Pure]> {
  let summary = "random numbers from the step's counter-based generator";
  let description = [{
    A tensor of independent draws: `uniform` in [a, b), or `normal` with mean
    a and standard deviation b. Element `i` (row-major index) takes the
    Philox4x32-10 words (w0, w1, ...) for key `(seed low, seed high)` and
    counter `(i, stream, counter low, counter high)`, as tcc.dropout does;
    u = (w0 >> 8) 2^-24 in [0, 1) gives `a + (b - a) u`, and Box-Muller gives
    `a + b sqrt(-2 ln u1) cos(2 pi u2)` with u1 = ((w0 >> 8) + 1) 2^-24 in
    (0, 1] and u2 = (w1 >> 8) 2^-24, computed in f32. The training-step
    builder gives `rng = [seed, counter]` (the step's runtime input) to every
    tcc.random of the step; without it (forward, eval_step, infer) the op
    draws one fixed sample, seed 0 and counter 0. The importer numbers the
    streams by ONNX node, as for dropout.

    ```mlir
    %u = tcc.random {a = 0.0 : f64, b = 1.0 : f64, distribution = 0 : i32, stream = 3 : i64} : tensor<4x8xf32>
    %n = tcc.random rng(%rng : tensor<2xi64>) {a = 0.0 : f64, b = 1.0 : f64, distribution = 1 : i32, stream = 4 : i64} : tensor<16xf32>
    ```
  }];
  let arguments = (ins Optional<StaticShapeTensorOf<[I64]>>:$rng, Tcc_RandomDistribution:$distribution,
                   F64Attr:$a, F64Attr:$b, I64Attr:$stream);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = [{
    (`rng` `(` $rng^ `:` type($rng) `)`)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Tcc_ResizeOp : Tcc_Op<"resize", [Tcc_Precision<"Follow", "moves or picks values: exact in any type">, Pure, SameOperandsAndResultElementType]> {
  let summary = "resampling by interpolation (ONNX Resize)";
  let description = [{
    Each output coordinate maps to the input through `scales` (output size /
    input size per dimension, as given or as computed from ONNX `sizes`) and
    `coordinate_mode`, then samples by `mode`.

    ```mlir
    %y = tcc.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
    ```
  }];
  let arguments = (ins Tcc_NumTensor:$input, DenseF64ArrayAttr:$scales,
      DefaultValuedAttr<Tcc_ResizeMode, "::tcc::ResizeMode::nearest">:$mode,
      DefaultValuedAttr<Tcc_CoordinateMode,
                        "::tcc::CoordinateMode::half_pixel">:$coordinate_mode,
      DefaultValuedAttr<Tcc_NearestMode,
                        "::tcc::NearestMode::round_prefer_floor">:$nearest_mode,
      DefaultValuedAttr<F64Attr, "-0.75">:$cubic_coeff_a,
      DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
      DefaultValuedAttr<F64Attr, "0.0">:$extrapolation_value,
      OptionalAttr<DenseF64ArrayAttr>:$roi);
  let results = (outs Tcc_NumTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tcc_NllLossOp : Tcc_Op<"nll_loss", [Tcc_Precision<"Fp32", "the loss">, Pure,
    InferTypeOpAdaptor]> {
  let summary = "negative log-likelihood loss";
  let description = [{
    `input` holds log-probabilities `[N, C, d1..]` (classes on dimension 1,
    as in ONNX), `target` class indices `[N, d1..]`. Each position contributes
    `-input[n, target, d..] * weight[target]`; positions whose target is
    `ignore_index` contribute nothing. `mean` divides by the summed weights.

    ```mlir
    %l = tcc.nll_loss %logp, %t {reduction = 2 : i32} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Tcc_FloatTensor:$input, Tcc_IndexTensor:$target,
                   Optional<Tcc_FloatTensor>:$weight,
                   DefaultValuedAttr<Tcc_LossReduction,
                                     "::tcc::LossReduction::mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Tcc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $target (`,` $weight^)? attr-dict `:` `(` "
                       "type($input) `,` type($target) (`,` type($weight)^)? "
                       "`)` `->` type($result)";
}

def Tcc_AllReduceOp : Tcc_Op<"all_reduce", [
    Tcc_Precision<"Follow", "averages values over the ranks in their own type">,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "mean over the ranks of a data-parallel job (a gradient bucket)";
  let description = [{
    Each result is its operand averaged over the ranks that run the step:
    the sum of every rank's value divided by the world size, which the
    runtime knows (one artifact runs on any number of ranks; alone, the
    op is the identity). `tcc-build-train-step --data-parallel` inserts one
    per gradient bucket, right after the backward completes the bucket's
    last gradient, so that the communication overlaps the rest of the
    backward; clipping, loss scaling and the optimizer read the results.
    `bucket` numbers the buckets in that order.

    On tensors the op has results; bufferization turns it into the form on
    buffers, which averages its operands in place and has no results, and
    `tcc-schedule-collectives` splits that into a runtime collective that
    starts the reduction and one that waits for it before the first reader
    (abi.h, tcc_collective_kind).

    ```mlir
    %a, %b = tcc.all_reduce %ga, %gb {bucket = 0 : i64} : tensor<64x32xf32>, tensor<32xf32> -> tensor<64x32xf32>, tensor<32xf32>
    tcc.all_reduce %ba, %bb {bucket = 0 : i64} : memref<64x32xf32>, memref<32xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyTypeOf<[Tcc_FloatTensor, AnyStaticShapeMemRef]>>:$operands,
                   I64Attr:$bucket);
  let results = (outs Variadic<Tcc_FloatTensor>:$results);
  let assemblyFormat = "$operands attr-dict `:` type($operands) (`->` type($results)^)?";
  let hasVerifier = 1;
}

#endif // TCC_OPS_TD
