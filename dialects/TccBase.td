//===- TccBase.td - the tcc dialect and its shared definitions -*- tablegen -*-===//
//
// The dialect, its type constraints and enums, shared by every op file.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_BASE_TD
#define TCC_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tcc_Dialect : Dialect {
  let name = "tcc";
  let cppNamespace = "::tcc";
  let summary = "Tensor ops at the level of ONNX and HLO, with static shapes";
  let description = [{
    The tcc dialect holds a model's forward computation and, after the
    training passes, the whole training step. Tensors are ranked and static;
    broadcasting is explicit (`tcc.broadcast_in_dim`), so every elementwise op
    has operands of one shape. ONNX operators that are compositions of simpler
    ones (Softsign, Mish, Einsum, GroupNormalization, ...) are decomposed by
    the importer; see docs/dialect.md for the mapping.
  }];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 0;
}

class Tcc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tcc_Dialect, mnemonic, traits>;

// Signed integers are signless in tcc (as in arith); unsigned ONNX types keep
// their signedness so that lowering can pick unsigned division and compares.
def Tcc_Int : AnyTypeOf<[AnySignlessInteger, AnyUnsignedInteger]>;
def Tcc_Element : AnyTypeOf<[AnyFloat, Tcc_Int]>;

def Tcc_Tensor : StaticShapeTensorOf<[Tcc_Element]>;
def Tcc_FloatTensor : StaticShapeTensorOf<[AnyFloat]>;
def Tcc_NumTensor : StaticShapeTensorOf<[AnyFloat, Tcc_Int]>;
def Tcc_IntTensor : StaticShapeTensorOf<[Tcc_Int]>;
def Tcc_BoolTensor : StaticShapeTensorOf<[I1]>;
def Tcc_IndexTensor : StaticShapeTensorOf<[I32, I64]>;

def Tcc_CmpPredicate : I32EnumAttr<"CmpPredicate", "comparison predicate", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::tcc";
}

def Tcc_ScatterReduction : I32EnumAttr<"ScatterReduction",
    "how a scatter combines an update with the existing element", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"add", 1>,
    I32EnumAttrCase<"mul", 2>, I32EnumAttrCase<"max", 3>,
    I32EnumAttrCase<"min", 4>]> {
  let cppNamespace = "::tcc";
}

def Tcc_LossReduction : I32EnumAttr<"LossReduction", "loss reduction", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"sum", 1>,
    I32EnumAttrCase<"mean", 2>]> {
  let cppNamespace = "::tcc";
}

def Tcc_RandomDistribution : I32EnumAttr<"RandomDistribution",
    "distribution of tcc.random", [
    I32EnumAttrCase<"uniform", 0>, I32EnumAttrCase<"normal", 1>]> {
  let cppNamespace = "::tcc";
}

def Tcc_PadMode : I32EnumAttr<"PadMode", "padding mode", [
    I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"reflect", 1>,
    I32EnumAttrCase<"edge", 2>, I32EnumAttrCase<"wrap", 3>]> {
  let cppNamespace = "::tcc";
}

def Tcc_ResizeMode : I32EnumAttr<"ResizeMode", "interpolation mode", [
    I32EnumAttrCase<"nearest", 0>, I32EnumAttrCase<"linear", 1>,
    I32EnumAttrCase<"cubic", 2>]> {
  let cppNamespace = "::tcc";
}

def Tcc_CoordinateMode : I32EnumAttr<"CoordinateMode",
    "how an output coordinate maps to an input coordinate", [
    I32EnumAttrCase<"half_pixel", 0>, I32EnumAttrCase<"align_corners", 1>,
    I32EnumAttrCase<"asymmetric", 2>, I32EnumAttrCase<"pytorch_half_pixel", 3>,
    I32EnumAttrCase<"tf_crop_and_resize", 4>,
    I32EnumAttrCase<"half_pixel_symmetric", 5>]> {
  let cppNamespace = "::tcc";
}

def Tcc_NearestMode : I32EnumAttr<"NearestMode", "rounding for nearest mode", [
    I32EnumAttrCase<"round_prefer_floor", 0>,
    I32EnumAttrCase<"round_prefer_ceil", 1>,
    I32EnumAttrCase<"floor", 2>, I32EnumAttrCase<"ceil", 3>]> {
  let cppNamespace = "::tcc";
}

#endif // TCC_BASE_TD
