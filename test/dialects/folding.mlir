// RUN: tcc-opt --split-input-file --canonicalize %s | FileCheck %s

// Folders and canonicalization patterns of the tcc dialect, one case each:
// constant folding, algebraic identities, data movement of constants, and the
// folds that must be refused.

//===----------------------------------------------------------------------===//
// Unary float ops
//===----------------------------------------------------------------------===//

// Tests that exp of a constant folds.
// CHECK-LABEL: func.func @fold_exp
//       CHECK:   %[[C:.+]] = tcc.constant dense<[1.000000e+00, 2.71828175]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_exp() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = tcc.exp %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that log of a constant folds, and that log of a negative is a NaN (of
// either sign, as the host's libm makes it).
// CHECK-LABEL: func.func @fold_log
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 0.693147182, {{0x7FC00000|0xFFC00000}}]> : tensor<3xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_log() -> tensor<3xf32> {
  %c = tcc.constant dense<[1.0, 2.0, -1.0]> : tensor<3xf32>
  %0 = tcc.log %c : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that sqrt of a constant folds.
// CHECK-LABEL: func.func @fold_sqrt
//       CHECK:   %[[C:.+]] = tcc.constant dense<[2.000000e+00, 1.41421354]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_sqrt() -> tensor<2xf32> {
  %c = tcc.constant dense<[4.0, 2.0]> : tensor<2xf32>
  %0 = tcc.sqrt %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that rsqrt of a constant folds.
// CHECK-LABEL: func.func @fold_rsqrt
//       CHECK:   %[[C:.+]] = tcc.constant dense<[5.000000e-01, 2.000000e+00]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_rsqrt() -> tensor<2xf32> {
  %c = tcc.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %0 = tcc.rsqrt %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that reciprocal of a constant folds, to infinity at zero.
// CHECK-LABEL: func.func @fold_reciprocal
//       CHECK:   %[[C:.+]] = tcc.constant dense<[5.000000e-01, -2.500000e-01, 0x7F800000]> : tensor<3xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_reciprocal() -> tensor<3xf32> {
  %c = tcc.constant dense<[2.0, -4.0, 0.0]> : tensor<3xf32>
  %0 = tcc.reciprocal %c : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that tanh of a constant folds.
// CHECK-LABEL: func.func @fold_tanh
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 0.761594176]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_tanh() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = tcc.tanh %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that sigmoid of a constant folds.
// CHECK-LABEL: func.func @fold_sigmoid
//       CHECK:   %[[C:.+]] = tcc.constant dense<[5.000000e-01, 0.731058597]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_sigmoid() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = tcc.sigmoid %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that erf of a constant folds.
// CHECK-LABEL: func.func @fold_erf
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 0.842700779]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_erf() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = tcc.erf %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that softplus of a constant folds without overflow for large inputs.
// CHECK-LABEL: func.func @fold_softplus
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.693147182, 1.31326163, 1.000000e+03]> : tensor<3xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_softplus() -> tensor<3xf32> {
  %c = tcc.constant dense<[0.0, 1.0, 1000.0]> : tensor<3xf32>
  %0 = tcc.softplus %c : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that sin of a constant folds.
// CHECK-LABEL: func.func @fold_sin
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 0.841470957]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_sin() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = tcc.sin %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that cos of a constant folds.
// CHECK-LABEL: func.func @fold_cos
//       CHECK:   %[[C:.+]] = tcc.constant dense<[1.000000e+00, 0.540302277]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_cos() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = tcc.cos %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that tan of a constant folds.
// CHECK-LABEL: func.func @fold_tan
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 0.546302497]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_tan() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 0.5]> : tensor<2xf32>
  %0 = tcc.tan %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that asin of a constant folds.
// CHECK-LABEL: func.func @fold_asin
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 0.52359879]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_asin() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 0.5]> : tensor<2xf32>
  %0 = tcc.asin %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that acos of a constant folds.
// CHECK-LABEL: func.func @fold_acos
//       CHECK:   %[[C:.+]] = tcc.constant dense<[1.57079637, 1.04719758]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_acos() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 0.5]> : tensor<2xf32>
  %0 = tcc.acos %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that atan of a constant folds.
// CHECK-LABEL: func.func @fold_atan
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 0.463647604]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_atan() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 0.5]> : tensor<2xf32>
  %0 = tcc.atan %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that sinh of a constant folds.
// CHECK-LABEL: func.func @fold_sinh
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 0.521095276]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_sinh() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 0.5]> : tensor<2xf32>
  %0 = tcc.sinh %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that cosh of a constant folds.
// CHECK-LABEL: func.func @fold_cosh
//       CHECK:   %[[C:.+]] = tcc.constant dense<[1.000000e+00, 1.12762594]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_cosh() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 0.5]> : tensor<2xf32>
  %0 = tcc.cosh %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that asinh of a constant folds.
// CHECK-LABEL: func.func @fold_asinh
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 0.481211811]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_asinh() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 0.5]> : tensor<2xf32>
  %0 = tcc.asinh %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that acosh of a constant folds.
// CHECK-LABEL: func.func @fold_acosh
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 1.31695795]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_acosh() -> tensor<2xf32> {
  %c = tcc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = tcc.acosh %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that atanh of a constant folds.
// CHECK-LABEL: func.func @fold_atanh
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 0.549306154]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_atanh() -> tensor<2xf32> {
  %c = tcc.constant dense<[0.0, 0.5]> : tensor<2xf32>
  %0 = tcc.atanh %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that floor of a constant folds, toward negative infinity.
// CHECK-LABEL: func.func @fold_floor
//       CHECK:   %[[C:.+]] = tcc.constant dense<[-2.000000e+00, 1.000000e+00]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_floor() -> tensor<2xf32> {
  %c = tcc.constant dense<[-1.5, 1.5]> : tensor<2xf32>
  %0 = tcc.floor %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that ceil of a constant folds, toward positive infinity.
// CHECK-LABEL: func.func @fold_ceil
//       CHECK:   %[[C:.+]] = tcc.constant dense<[-1.000000e+00, 2.000000e+00]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_ceil() -> tensor<2xf32> {
  %c = tcc.constant dense<[-1.5, 1.5]> : tensor<2xf32>
  %0 = tcc.ceil %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that round of a constant folds, with halves to even.
// CHECK-LABEL: func.func @fold_round
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 2.000000e+00, 2.000000e+00, -0.000000e+00]> : tensor<4xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_round() -> tensor<4xf32> {
  %c = tcc.constant dense<[0.5, 1.5, 2.5, -0.5]> : tensor<4xf32>
  %0 = tcc.round %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a unary float fold rounds its result to the operand's type (bf16).
// CHECK-LABEL: func.func @fold_bf16_exp
//       CHECK:   %[[C:.+]] = tcc.constant dense<2.718750e+00> : tensor<2xbf16>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_bf16_exp() -> tensor<2xbf16> {
  %c = tcc.constant dense<1.0> : tensor<2xbf16>
  %0 = tcc.exp %c : tensor<2xbf16>
  return %0 : tensor<2xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// Unary ops on floats and integers
//===----------------------------------------------------------------------===//

// Tests that neg of a float constant folds.
// CHECK-LABEL: func.func @fold_neg_float
//       CHECK:   %[[C:.+]] = tcc.constant dense<[-1.500000e+00, 2.000000e+00]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_neg_float() -> tensor<2xf32> {
  %c = tcc.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %0 = tcc.neg %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that neg of an integer constant folds.
// CHECK-LABEL: func.func @fold_neg_int
//       CHECK:   %[[C:.+]] = tcc.constant dense<[-3, 4]> : tensor<2xi32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_neg_int() -> tensor<2xi32> {
  %c = tcc.constant dense<[3, -4]> : tensor<2xi32>
  %0 = tcc.neg %c : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// Tests that abs of float and integer constants folds.
// CHECK-LABEL: func.func @fold_abs
//   CHECK-DAG:   %[[F:.+]] = tcc.constant dense<[1.500000e+00, 2.000000e+00]> : tensor<2xf32>
//   CHECK-DAG:   %[[I:.+]] = tcc.constant dense<[3, 4]> : tensor<2xi32>
//       CHECK:   return %[[F]], %[[I]]
func.func @fold_abs() -> (tensor<2xf32>, tensor<2xi32>) {
  %f = tcc.constant dense<[-1.5, 2.0]> : tensor<2xf32>
  %i = tcc.constant dense<[-3, 4]> : tensor<2xi32>
  %0 = tcc.abs %f : tensor<2xf32>
  %1 = tcc.abs %i : tensor<2xi32>
  return %0, %1 : tensor<2xf32>, tensor<2xi32>
}

// -----

// Tests that abs of an unsigned constant is the identity on its value (200 is
// not read as -56).
// CHECK-LABEL: func.func @fold_unsigned_abs
//       CHECK:   %[[C:.+]] = tcc.constant dense<200> : tensor<2xui8>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_unsigned_abs() -> tensor<2xui8> {
  %c = tcc.constant dense<200> : tensor<2xui8>
  %0 = tcc.abs %c : tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

// Tests that sign of a float constant folds, keeping NaN.
// CHECK-LABEL: func.func @fold_sign_float
//       CHECK:   %[[C:.+]] = tcc.constant dense<[-1.000000e+00, 0.000000e+00, 1.000000e+00, 0x7FC00000]> : tensor<4xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_sign_float() -> tensor<4xf32> {
  %c = tcc.constant dense<[-2.5, 0.0, 3.0, 0x7FC00000]> : tensor<4xf32>
  %0 = tcc.sign %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that sign of signed and unsigned integer constants folds (ui8 255 is
// positive).
// CHECK-LABEL: func.func @fold_sign_int
//   CHECK-DAG:   %[[I:.+]] = tcc.constant dense<[-1, 0, 1]> : tensor<3xi32>
//   CHECK-DAG:   %[[U:.+]] = tcc.constant dense<[1, 0, 1]> : tensor<3xui8>
//       CHECK:   return %[[I]], %[[U]]
func.func @fold_sign_int() -> (tensor<3xi32>, tensor<3xui8>) {
  %i = tcc.constant dense<[-7, 0, 7]> : tensor<3xi32>
  %u = tcc.constant dense<[255, 0, 7]> : tensor<3xui8>
  %0 = tcc.sign %i : tensor<3xi32>
  %1 = tcc.sign %u : tensor<3xui8>
  return %0, %1 : tensor<3xi32>, tensor<3xui8>
}

// -----

// Tests that relu of a float constant folds, keeping NaN as max(x, 0) does.
// CHECK-LABEL: func.func @fold_relu_float
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 2.500000e+00, 0x7FC00000]> : tensor<3xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_relu_float() -> tensor<3xf32> {
  %c = tcc.constant dense<[-1.0, 2.5, 0x7FC00000]> : tensor<3xf32>
  %0 = tcc.relu %c : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that relu of signed and unsigned integer constants folds.
// CHECK-LABEL: func.func @fold_relu_int
//   CHECK-DAG:   %[[I:.+]] = tcc.constant dense<[0, 5]> : tensor<2xi32>
//   CHECK-DAG:   %[[U:.+]] = tcc.constant dense<[200, 5]> : tensor<2xui8>
//       CHECK:   return %[[I]], %[[U]]
func.func @fold_relu_int() -> (tensor<2xi32>, tensor<2xui8>) {
  %i = tcc.constant dense<[-5, 5]> : tensor<2xi32>
  %u = tcc.constant dense<[200, 5]> : tensor<2xui8>
  %0 = tcc.relu %i : tensor<2xi32>
  %1 = tcc.relu %u : tensor<2xui8>
  return %0, %1 : tensor<2xi32>, tensor<2xui8>
}

// -----

// Tests that not of a boolean constant folds.
// CHECK-LABEL: func.func @fold_not
//       CHECK:   %[[C:.+]] = tcc.constant dense<[false, true]> : tensor<2xi1>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_not() -> tensor<2xi1> {
  %c = tcc.constant dense<[true, false]> : tensor<2xi1>
  %0 = tcc.not %c : tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// Tests that neg(neg(x)) folds to x.
// CHECK-LABEL: func.func @neg_neg
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @neg_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.neg %x : tensor<4xf32>
  %1 = tcc.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Tests that not(not(x)) folds to x.
// CHECK-LABEL: func.func @not_not
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xi1>)
//  CHECK-NEXT:   return %[[X]]
func.func @not_not(%x: tensor<4xi1>) -> tensor<4xi1> {
  %0 = tcc.not %x : tensor<4xi1>
  %1 = tcc.not %0 : tensor<4xi1>
  return %1 : tensor<4xi1>
}

// -----

//===----------------------------------------------------------------------===//
// Clamp and cast
//===----------------------------------------------------------------------===//

// Tests that clamp of a float constant folds, keeping NaN.
// CHECK-LABEL: func.func @fold_clamp_float
//       CHECK:   %[[C:.+]] = tcc.constant dense<[0.000000e+00, 3.000000e+00, 6.000000e+00, 0x7FC00000]> : tensor<4xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_clamp_float() -> tensor<4xf32> {
  %c = tcc.constant dense<[-1.0, 3.0, 7.0, 0x7FC00000]> : tensor<4xf32>
  %0 = tcc.clamp %c {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that clamp of integer constants folds, with one bound and with an
// unsigned type.
// CHECK-LABEL: func.func @fold_clamp_int
//   CHECK-DAG:   %[[I:.+]] = tcc.constant dense<[-2, 0, 9]> : tensor<3xi64>
//   CHECK-DAG:   %[[U:.+]] = tcc.constant dense<[10, 100, 100]> : tensor<3xui8>
//       CHECK:   return %[[I]], %[[U]]
func.func @fold_clamp_int() -> (tensor<3xi64>, tensor<3xui8>) {
  %i = tcc.constant dense<[-5, 0, 9]> : tensor<3xi64>
  %u = tcc.constant dense<[3, 100, 250]> : tensor<3xui8>
  %0 = tcc.clamp %i {min = -2.0 : f64} : tensor<3xi64>
  %1 = tcc.clamp %u {min = 10.0 : f64, max = 100.0 : f64} : tensor<3xui8>
  return %0, %1 : tensor<3xi64>, tensor<3xui8>
}

// -----

// Tests that clamp without bounds folds to its input.
// CHECK-LABEL: func.func @clamp_unbounded
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @clamp_unbounded(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.clamp %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a float to integer cast folds, truncating toward zero.
// CHECK-LABEL: func.func @fold_cast_float_to_int
//   CHECK-DAG:   %[[I:.+]] = tcc.constant dense<[-2, 0, 2, 7]> : tensor<4xi64>
//   CHECK-DAG:   %[[U:.+]] = tcc.constant dense<[0, 255]> : tensor<2xui8>
//       CHECK:   return %[[I]], %[[U]]
func.func @fold_cast_float_to_int() -> (tensor<4xi64>, tensor<2xui8>) {
  %c = tcc.constant dense<[-2.7, -0.5, 2.7, 7.0]> : tensor<4xf32>
  %u = tcc.constant dense<[0.9, 255.5]> : tensor<2xf32>
  %0 = tcc.cast %c : tensor<4xf32> to tensor<4xi64>
  %1 = tcc.cast %u : tensor<2xf32> to tensor<2xui8>
  return %0, %1 : tensor<4xi64>, tensor<2xui8>
}

// -----

// Tests that an integer to float cast folds, reading unsigned values as
// unsigned.
// CHECK-LABEL: func.func @fold_cast_int_to_float
//   CHECK-DAG:   %[[I:.+]] = tcc.constant dense<[-3.000000e+00, 5.000000e+00]> : tensor<2xf32>
//   CHECK-DAG:   %[[U:.+]] = tcc.constant dense<[2.550000e+02, 1.000000e+00]> : tensor<2xf16>
//       CHECK:   return %[[I]], %[[U]]
func.func @fold_cast_int_to_float() -> (tensor<2xf32>, tensor<2xf16>) {
  %i = tcc.constant dense<[-3, 5]> : tensor<2xi32>
  %u = tcc.constant dense<[255, 1]> : tensor<2xui8>
  %0 = tcc.cast %i : tensor<2xi32> to tensor<2xf32>
  %1 = tcc.cast %u : tensor<2xui8> to tensor<2xf16>
  return %0, %1 : tensor<2xf32>, tensor<2xf16>
}

// -----

// Tests that casts to i1 fold to x != 0, for floats (NaN is true) and integers.
// CHECK-LABEL: func.func @fold_cast_to_bool
//   CHECK-DAG:   %[[F:.+]] = tcc.constant dense<[false, true, true, true]> : tensor<4xi1>
//   CHECK-DAG:   %[[I:.+]] = tcc.constant dense<[true, false, true]> : tensor<3xi1>
//       CHECK:   return %[[F]], %[[I]]
func.func @fold_cast_to_bool() -> (tensor<4xi1>, tensor<3xi1>) {
  %f = tcc.constant dense<[0.0, 0.5, -2.0, 0x7FC00000]> : tensor<4xf32>
  %i = tcc.constant dense<[256, 0, -1]> : tensor<3xi64>
  %0 = tcc.cast %f : tensor<4xf32> to tensor<4xi1>
  %1 = tcc.cast %i : tensor<3xi64> to tensor<3xi1>
  return %0, %1 : tensor<4xi1>, tensor<3xi1>
}

// -----

// Tests that integer to integer casts fold: bool widens as 0/1, signless
// sign-extends, and narrowing wraps.
// CHECK-LABEL: func.func @fold_cast_int_to_int
//   CHECK-DAG:   %[[B:.+]] = tcc.constant dense<[1, 0]> : tensor<2xi32>
//   CHECK-DAG:   %[[S:.+]] = tcc.constant dense<-1> : tensor<2xi64>
//   CHECK-DAG:   %[[N:.+]] = tcc.constant dense<[44, -1]> : tensor<2xi8>
//       CHECK:   return %[[B]], %[[S]], %[[N]]
func.func @fold_cast_int_to_int() -> (tensor<2xi32>, tensor<2xi64>, tensor<2xi8>) {
  %b = tcc.constant dense<[true, false]> : tensor<2xi1>
  %s = tcc.constant dense<-1> : tensor<2xi8>
  %n = tcc.constant dense<[300, 255]> : tensor<2xi32>
  %0 = tcc.cast %b : tensor<2xi1> to tensor<2xi32>
  %1 = tcc.cast %s : tensor<2xi8> to tensor<2xi64>
  %2 = tcc.cast %n : tensor<2xi32> to tensor<2xi8>
  return %0, %1, %2 : tensor<2xi32>, tensor<2xi64>, tensor<2xi8>
}

// -----

// Tests that a cast to the operand's own type folds to the operand.
// CHECK-LABEL: func.func @cast_identity
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @cast_identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.cast %x : tensor<4xf32> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that float to integer casts without a defined result (NaN, out of the
// type's range) are left to the runtime.
// CHECK-LABEL: func.func @no_fold_cast_undefined
//       CHECK:   tcc.cast {{.*}} : tensor<f32> to tensor<i32>
//       CHECK:   tcc.cast {{.*}} : tensor<f32> to tensor<ui8>
//       CHECK:   tcc.cast {{.*}} : tensor<f32> to tensor<ui8>
func.func @no_fold_cast_undefined() -> (tensor<i32>, tensor<ui8>, tensor<ui8>) {
  %nan = tcc.constant dense<0x7FC00000> : tensor<f32>
  %big = tcc.constant dense<300.0> : tensor<f32>
  %neg = tcc.constant dense<-1.0> : tensor<f32>
  %0 = tcc.cast %nan : tensor<f32> to tensor<i32>
  %1 = tcc.cast %big : tensor<f32> to tensor<ui8>
  %2 = tcc.cast %neg : tensor<f32> to tensor<ui8>
  return %0, %1, %2 : tensor<i32>, tensor<ui8>, tensor<ui8>
}

// -----

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

// Tests that add of float and integer constants folds.
// CHECK-LABEL: func.func @fold_add
//   CHECK-DAG:   %[[F:.+]] = tcc.constant dense<[4.000000e+00, -1.500000e+00]> : tensor<2xf32>
//   CHECK-DAG:   %[[I:.+]] = tcc.constant dense<[4, -128]> : tensor<2xi8>
//       CHECK:   return %[[F]], %[[I]]
func.func @fold_add() -> (tensor<2xf32>, tensor<2xi8>) {
  %a = tcc.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %b = tcc.constant dense<[2.5, 0.5]> : tensor<2xf32>
  %i = tcc.constant dense<[1, 127]> : tensor<2xi8>
  %j = tcc.constant dense<[3, 1]> : tensor<2xi8>
  %0 = tcc.add %a, %b : tensor<2xf32>
  %1 = tcc.add %i, %j : tensor<2xi8>
  return %0, %1 : tensor<2xf32>, tensor<2xi8>
}

// -----

// Tests that sub of float and integer constants folds.
// CHECK-LABEL: func.func @fold_sub
//   CHECK-DAG:   %[[F:.+]] = tcc.constant dense<[-1.000000e+00, -2.500000e+00]> : tensor<2xf32>
//   CHECK-DAG:   %[[I:.+]] = tcc.constant dense<[-2, 6]> : tensor<2xi32>
//       CHECK:   return %[[F]], %[[I]]
func.func @fold_sub() -> (tensor<2xf32>, tensor<2xi32>) {
  %a = tcc.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %b = tcc.constant dense<[2.5, 0.5]> : tensor<2xf32>
  %i = tcc.constant dense<[1, 7]> : tensor<2xi32>
  %j = tcc.constant dense<[3, 1]> : tensor<2xi32>
  %0 = tcc.sub %a, %b : tensor<2xf32>
  %1 = tcc.sub %i, %j : tensor<2xi32>
  return %0, %1 : tensor<2xf32>, tensor<2xi32>
}

// -----

// Tests that mul of float and integer constants folds.
// CHECK-LABEL: func.func @fold_mul
//   CHECK-DAG:   %[[F:.+]] = tcc.constant dense<[3.750000e+00, -1.000000e+00]> : tensor<2xf32>
//   CHECK-DAG:   %[[I:.+]] = tcc.constant dense<[-21, 0]> : tensor<2xi32>
//       CHECK:   return %[[F]], %[[I]]
func.func @fold_mul() -> (tensor<2xf32>, tensor<2xi32>) {
  %a = tcc.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %b = tcc.constant dense<[2.5, 0.5]> : tensor<2xf32>
  %i = tcc.constant dense<[-7, 0]> : tensor<2xi32>
  %j = tcc.constant dense<[3, 5]> : tensor<2xi32>
  %0 = tcc.mul %a, %b : tensor<2xf32>
  %1 = tcc.mul %i, %j : tensor<2xi32>
  return %0, %1 : tensor<2xf32>, tensor<2xi32>
}

// -----

// Tests that div of float constants folds, to infinity for a zero divisor.
// CHECK-LABEL: func.func @fold_div_float
//       CHECK:   %[[C:.+]] = tcc.constant dense<[6.000000e-01, -4.000000e+00, 0xFF800000]> : tensor<3xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_div_float() -> tensor<3xf32> {
  %a = tcc.constant dense<[1.5, -2.0, -1.0]> : tensor<3xf32>
  %b = tcc.constant dense<[2.5, 0.5, 0.0]> : tensor<3xf32>
  %0 = tcc.div %a, %b : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that signed integer div folds, truncating toward zero.
// CHECK-LABEL: func.func @fold_div_signed
//       CHECK:   %[[C:.+]] = tcc.constant dense<[-2, 2, -2]> : tensor<3xi32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_div_signed() -> tensor<3xi32> {
  %a = tcc.constant dense<[-7, 7, 7]> : tensor<3xi32>
  %b = tcc.constant dense<[3, 3, -3]> : tensor<3xi32>
  %0 = tcc.div %a, %b : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Tests that unsigned integer div folds as unsigned (250 / 2 is 125, not -3).
// CHECK-LABEL: func.func @fold_div_unsigned
//       CHECK:   %[[C:.+]] = tcc.constant dense<[125, 83]> : tensor<2xui8>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_div_unsigned() -> tensor<2xui8> {
  %a = tcc.constant dense<[250, 250]> : tensor<2xui8>
  %b = tcc.constant dense<[2, 3]> : tensor<2xui8>
  %0 = tcc.div %a, %b : tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

// Tests that pow of float constants folds.
// CHECK-LABEL: func.func @fold_pow_float
//       CHECK:   %[[C:.+]] = tcc.constant dense<[8.000000e+00, 3.000000e+00, 2.500000e-01]> : tensor<3xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_pow_float() -> tensor<3xf32> {
  %a = tcc.constant dense<[2.0, 9.0, 2.0]> : tensor<3xf32>
  %b = tcc.constant dense<[3.0, 0.5, -2.0]> : tensor<3xf32>
  %0 = tcc.pow %a, %b : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that integer pow folds with wrap-around, also for exponents of 64 and
// more (3^65 mod 2^32 is 1820079875).
// CHECK-LABEL: func.func @fold_pow_int
//       CHECK:   %[[C:.+]] = tcc.constant dense<[1024, 1, 1820079875]> : tensor<3xi32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_pow_int() -> tensor<3xi32> {
  %a = tcc.constant dense<[2, 5, 3]> : tensor<3xi32>
  %b = tcc.constant dense<[10, 0, 65]> : tensor<3xi32>
  %0 = tcc.pow %a, %b : tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Tests that integer pow with a negative exponent is not folded.
// CHECK-LABEL: func.func @no_fold_pow_negative_exponent
//       CHECK:   tcc.pow
func.func @no_fold_pow_negative_exponent() -> tensor<i32> {
  %a = tcc.constant dense<2> : tensor<i32>
  %b = tcc.constant dense<-1> : tensor<i32>
  %0 = tcc.pow %a, %b : tensor<i32>
  return %0 : tensor<i32>
}

// -----

// Tests that max of float constants folds, propagating NaN from either side.
// CHECK-LABEL: func.func @fold_max_float
//       CHECK:   %[[C:.+]] = tcc.constant dense<[2.500000e+00, -1.000000e+00, 0x7FC00000, 0x7FC00000]> : tensor<4xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_max_float() -> tensor<4xf32> {
  %a = tcc.constant dense<[1.5, -1.0, 0x7FC00000, 1.0]> : tensor<4xf32>
  %b = tcc.constant dense<[2.5, -2.0, 1.0, 0x7FC00000]> : tensor<4xf32>
  %0 = tcc.max %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that min of float constants folds, propagating NaN from either side.
// CHECK-LABEL: func.func @fold_min_float
//       CHECK:   %[[C:.+]] = tcc.constant dense<[1.500000e+00, -2.000000e+00, 0x7FC00000, 0x7FC00000]> : tensor<4xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_min_float() -> tensor<4xf32> {
  %a = tcc.constant dense<[1.5, -1.0, 0x7FC00000, 1.0]> : tensor<4xf32>
  %b = tcc.constant dense<[2.5, -2.0, 1.0, 0x7FC00000]> : tensor<4xf32>
  %0 = tcc.min %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that integer max and min fold, signed for signless types and unsigned
// for unsigned ones.
// CHECK-LABEL: func.func @fold_max_min_int
//   CHECK-DAG:   %[[MAXS:.+]] = tcc.constant dense<[1, 5]> : tensor<2xi8>
//   CHECK-DAG:   %[[MINS:.+]] = tcc.constant dense<[-1, 3]> : tensor<2xi8>
//   CHECK-DAG:   %[[MAXU:.+]] = tcc.constant dense<[255, 5]> : tensor<2xui8>
//   CHECK-DAG:   %[[MINU:.+]] = tcc.constant dense<[1, 3]> : tensor<2xui8>
//       CHECK:   return %[[MAXS]], %[[MINS]], %[[MAXU]], %[[MINU]]
func.func @fold_max_min_int() -> (tensor<2xi8>, tensor<2xi8>, tensor<2xui8>, tensor<2xui8>) {
  %a = tcc.constant dense<[-1, 3]> : tensor<2xi8>
  %b = tcc.constant dense<[1, 5]> : tensor<2xi8>
  %ua = tcc.constant dense<[255, 3]> : tensor<2xui8>
  %ub = tcc.constant dense<[1, 5]> : tensor<2xui8>
  %0 = tcc.max %a, %b : tensor<2xi8>
  %1 = tcc.min %a, %b : tensor<2xi8>
  %2 = tcc.max %ua, %ub : tensor<2xui8>
  %3 = tcc.min %ua, %ub : tensor<2xui8>
  return %0, %1, %2, %3 : tensor<2xi8>, tensor<2xi8>, tensor<2xui8>, tensor<2xui8>
}

// -----

// Tests that max(x, x) and min(x, x) fold to x.
// CHECK-LABEL: func.func @max_min_same_operand
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//  CHECK-NEXT:   return %[[X]], %[[X]]
func.func @max_min_same_operand(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = tcc.max %x, %x : tensor<4xf32>
  %1 = tcc.min %x, %x : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that and, or and xor of boolean constants fold.
// CHECK-LABEL: func.func @fold_and_or_xor
//   CHECK-DAG:   %[[AND:.+]] = tcc.constant dense<[true, false, false, false]> : tensor<4xi1>
//   CHECK-DAG:   %[[OR:.+]] = tcc.constant dense<[true, true, true, false]> : tensor<4xi1>
//   CHECK-DAG:   %[[XOR:.+]] = tcc.constant dense<[false, true, true, false]> : tensor<4xi1>
//       CHECK:   return %[[AND]], %[[OR]], %[[XOR]]
func.func @fold_and_or_xor() -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %a = tcc.constant dense<[true, true, false, false]> : tensor<4xi1>
  %b = tcc.constant dense<[true, false, true, false]> : tensor<4xi1>
  %0 = tcc.and %a, %b : tensor<4xi1>
  %1 = tcc.or %a, %b : tensor<4xi1>
  %2 = tcc.xor %a, %b : tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Tests that and(x, x) and or(x, x) fold to x.
// CHECK-LABEL: func.func @and_or_same_operand
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xi1>)
//  CHECK-NEXT:   return %[[X]], %[[X]]
func.func @and_or_same_operand(%x: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = tcc.and %x, %x : tensor<4xi1>
  %1 = tcc.or %x, %x : tensor<4xi1>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// -----

//===----------------------------------------------------------------------===//
// Identities, and the folds that must not happen
//===----------------------------------------------------------------------===//

// Tests that x + 0 and 0 + x fold to x.
// CHECK-LABEL: func.func @add_zero
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi32>)
//  CHECK-NEXT:   return %[[X]], %[[X]], %[[I]]
func.func @add_zero(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) {
  %z = tcc.constant dense<0.0> : tensor<4xf32>
  %zi = tcc.constant dense<0> : tensor<4xi32>
  %0 = tcc.add %x, %z : tensor<4xf32>
  %1 = tcc.add %z, %x : tensor<4xf32>
  %2 = tcc.add %i, %zi : tensor<4xi32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>
}

// -----

// Tests that x - 0 folds to x.
// CHECK-LABEL: func.func @sub_zero
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @sub_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = tcc.constant dense<0.0> : tensor<4xf32>
  %0 = tcc.sub %x, %z : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that 0 - x is not x: only a zero on the right is an identity.
// CHECK-LABEL: func.func @zero_sub
//       CHECK:   tcc.sub
func.func @zero_sub(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = tcc.constant dense<0.0> : tensor<4xf32>
  %0 = tcc.sub %z, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that x * 1 and 1 * x fold to x.
// CHECK-LABEL: func.func @mul_one
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi64>)
//  CHECK-NEXT:   return %[[X]], %[[X]], %[[I]]
func.func @mul_one(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi64>) {
  %one = tcc.constant dense<1.0> : tensor<4xf32>
  %onei = tcc.constant dense<1> : tensor<4xi64>
  %0 = tcc.mul %x, %one : tensor<4xf32>
  %1 = tcc.mul %one, %x : tensor<4xf32>
  %2 = tcc.mul %onei, %i : tensor<4xi64>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>
}

// -----

// Tests that x / 1 folds to x.
// CHECK-LABEL: func.func @div_one
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @div_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = tcc.constant dense<1.0> : tensor<4xf32>
  %0 = tcc.div %x, %one : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that x ^ 1 folds to x.
// CHECK-LABEL: func.func @pow_one
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @pow_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = tcc.constant dense<1.0> : tensor<4xf32>
  %0 = tcc.pow %x, %one : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that float x * 0 stays: it is NaN, not 0, for x = inf or NaN.
// CHECK-LABEL: func.func @no_fold_mul_zero_float
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//       CHECK:   %[[Z:.+]] = tcc.constant dense<0.000000e+00> : tensor<4xf32>
//       CHECK:   %[[M:.+]] = tcc.mul %[[X]], %[[Z]] : tensor<4xf32>
//       CHECK:   return %[[M]]
func.func @no_fold_mul_zero_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = tcc.constant dense<0.0> : tensor<4xf32>
  %0 = tcc.mul %x, %z : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that integer division by zero stays for the runtime to report, signed
// and unsigned.
// CHECK-LABEL: func.func @no_fold_div_by_zero
//       CHECK:   tcc.div {{.*}} : tensor<2xi32>
//       CHECK:   tcc.div {{.*}} : tensor<ui8>
func.func @no_fold_div_by_zero() -> (tensor<2xi32>, tensor<ui8>) {
  %a = tcc.constant dense<[6, 7]> : tensor<2xi32>
  %b = tcc.constant dense<[3, 0]> : tensor<2xi32>
  %ua = tcc.constant dense<6> : tensor<ui8>
  %ub = tcc.constant dense<0> : tensor<ui8>
  %0 = tcc.div %a, %b : tensor<2xi32>
  %1 = tcc.div %ua, %ub : tensor<ui8>
  return %0, %1 : tensor<2xi32>, tensor<ui8>
}

// -----

//===----------------------------------------------------------------------===//
// Compare and select
//===----------------------------------------------------------------------===//

// Tests that compare of float constants folds for every predicate, with NaN
// unordered (only ne holds).
// CHECK-LABEL: func.func @fold_compare_float
//   CHECK-DAG:   %[[EQ:.+]] = tcc.constant dense<[false, true, false, false]> : tensor<4xi1>
//   CHECK-DAG:   %[[NE:.+]] = tcc.constant dense<[true, false, true, true]> : tensor<4xi1>
//   CHECK-DAG:   %[[LT:.+]] = tcc.constant dense<[true, false, false, false]> : tensor<4xi1>
//   CHECK-DAG:   %[[LE:.+]] = tcc.constant dense<[true, true, false, false]> : tensor<4xi1>
//   CHECK-DAG:   %[[GT:.+]] = tcc.constant dense<[false, false, true, false]> : tensor<4xi1>
//   CHECK-DAG:   %[[GE:.+]] = tcc.constant dense<[false, true, true, false]> : tensor<4xi1>
//       CHECK:   return %[[EQ]], %[[NE]], %[[LT]], %[[LE]], %[[GT]], %[[GE]]
func.func @fold_compare_float() -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %a = tcc.constant dense<[1.0, 2.0, 3.0, 0x7FC00000]> : tensor<4xf32>
  %b = tcc.constant dense<[2.0, 2.0, -3.0, 1.0]> : tensor<4xf32>
  %0 = tcc.compare eq, %a, %b : tensor<4xf32>
  %1 = tcc.compare ne, %a, %b : tensor<4xf32>
  %2 = tcc.compare lt, %a, %b : tensor<4xf32>
  %3 = tcc.compare le, %a, %b : tensor<4xf32>
  %4 = tcc.compare gt, %a, %b : tensor<4xf32>
  %5 = tcc.compare ge, %a, %b : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Tests that compare of integer constants folds, signed for signless types and
// unsigned for unsigned ones (200 > 1 as ui8, -56 < 1 as i8).
// CHECK-LABEL: func.func @fold_compare_int
//   CHECK-DAG:   %[[S:.+]] = tcc.constant dense<[true, false]> : tensor<2xi1>
//   CHECK-DAG:   %[[U:.+]] = tcc.constant dense<false> : tensor<2xi1>
//       CHECK:   return %[[S]], %[[U]]
func.func @fold_compare_int() -> (tensor<2xi1>, tensor<2xi1>) {
  %a = tcc.constant dense<[-56, 7]> : tensor<2xi8>
  %b = tcc.constant dense<[1, 7]> : tensor<2xi8>
  %ua = tcc.constant dense<[200, 7]> : tensor<2xui8>
  %ub = tcc.constant dense<[1, 7]> : tensor<2xui8>
  %0 = tcc.compare lt, %a, %b : tensor<2xi8>
  %1 = tcc.compare lt, %ua, %ub : tensor<2xui8>
  return %0, %1 : tensor<2xi1>, tensor<2xi1>
}

// -----

// Tests that select with a splat condition folds to the chosen branch.
// CHECK-LABEL: func.func @select_splat_cond
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>, %[[Y:.+]]: tensor<4xf32>)
//  CHECK-NEXT:   return %[[X]], %[[Y]]
func.func @select_splat_cond(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t = tcc.constant dense<true> : tensor<4xi1>
  %f = tcc.constant dense<false> : tensor<4xi1>
  %0 = tcc.select %t, %x, %y : tensor<4xi1>, tensor<4xf32>
  %1 = tcc.select %f, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that select with a constant condition and constant branches folds
// elementwise, also when a branch is a splat.
// CHECK-LABEL: func.func @fold_select_constant
//       CHECK:   %[[C:.+]] = tcc.constant dense<[1.000000e+00, 5.000000e+00, 1.000000e+00]> : tensor<3xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_select_constant() -> tensor<3xf32> {
  %c = tcc.constant dense<[true, false, true]> : tensor<3xi1>
  %t = tcc.constant dense<1.0> : tensor<3xf32>
  %f = tcc.constant dense<[4.0, 5.0, 6.0]> : tensor<3xf32>
  %0 = tcc.select %c, %t, %f : tensor<3xi1>, tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that select with one value on both branches folds to that value.
// CHECK-LABEL: func.func @select_same_branches
//  CHECK-SAME:   (%[[C:.+]]: tensor<4xi1>, %[[X:.+]]: tensor<4xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @select_same_branches(%c: tensor<4xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.select %c, %x, %x : tensor<4xi1>, tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that select with a non-constant condition stays.
// CHECK-LABEL: func.func @no_fold_select
//       CHECK:   tcc.select
func.func @no_fold_select(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.select %c, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// Tests that broadcast_in_dim to the operand's own type folds to the operand.
// CHECK-LABEL: func.func @broadcast_identity
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @broadcast_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tcc.broadcast_in_dim %x, dims = [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that broadcast_in_dim of a constant folds, repeating along the new and
// the size-1 dimensions.
// CHECK-LABEL: func.func @fold_broadcast_constant
//   CHECK-DAG:   %[[NEW:.+]] = tcc.constant dense<{{\[}}[1, 2, 3], [1, 2, 3]]> : tensor<2x3xi64>
//   CHECK-DAG:   %[[ONE:.+]] = tcc.constant dense<{{\[}}[1, 1, 1], [2, 2, 2]]> : tensor<2x3xi64>
//       CHECK:   return %[[NEW]], %[[ONE]]
func.func @fold_broadcast_constant() -> (tensor<2x3xi64>, tensor<2x3xi64>) {
  %v = tcc.constant dense<[1, 2, 3]> : tensor<3xi64>
  %w = tcc.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %0 = tcc.broadcast_in_dim %v, dims = [1] : tensor<3xi64> -> tensor<2x3xi64>
  %1 = tcc.broadcast_in_dim %w, dims = [0, 1] : tensor<2x1xi64> -> tensor<2x3xi64>
  return %0, %1 : tensor<2x3xi64>, tensor<2x3xi64>
}

// -----

// Tests that broadcast_in_dim of a non-splat constant into more than 4096
// elements is refused (the table would be emitted into the artifact and read
// at run time; the broadcast fuses into its consumers instead), while a splat
// of any size still folds.
// CHECK-LABEL: func.func @no_fold_large_broadcast
//   CHECK-DAG:   %[[V:.+]] = tcc.constant dense<[1, 2]> : tensor<2xi64>
//   CHECK-DAG:   %[[S:.+]] = tcc.constant dense<7> : tensor<2049x2xi64>
//   CHECK-DAG:   %[[B:.+]] = tcc.broadcast_in_dim %[[V]], dims = [1] : tensor<2xi64> -> tensor<2049x2xi64>
//       CHECK:   return %[[B]], %[[S]]
func.func @no_fold_large_broadcast() -> (tensor<2049x2xi64>, tensor<2049x2xi64>) {
  %v = tcc.constant dense<[1, 2]> : tensor<2xi64>
  %s = tcc.constant dense<7> : tensor<2xi64>
  %0 = tcc.broadcast_in_dim %v, dims = [1] : tensor<2xi64> -> tensor<2049x2xi64>
  %1 = tcc.broadcast_in_dim %s, dims = [1] : tensor<2xi64> -> tensor<2049x2xi64>
  return %0, %1 : tensor<2049x2xi64>, tensor<2049x2xi64>
}

// -----

// Tests that broadcast_in_dim of a broadcast_in_dim composes into one.
// CHECK-LABEL: func.func @compose_broadcasts
//  CHECK-SAME:   (%[[X:.+]]: tensor<3xf32>)
//  CHECK-NEXT:   %[[B:.+]] = tcc.broadcast_in_dim %[[X]], dims = [1] : tensor<3xf32> -> tensor<2x3x4xf32>
//  CHECK-NEXT:   return %[[B]]
func.func @compose_broadcasts(%x: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %0 = tcc.broadcast_in_dim %x, dims = [0] : tensor<3xf32> -> tensor<3x4xf32>
  %1 = tcc.broadcast_in_dim %0, dims = [1, 2] : tensor<3x4xf32> -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// Tests that reshape to the operand's own type folds to the operand.
// CHECK-LABEL: func.func @reshape_identity
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @reshape_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tcc.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a chain of reshapes becomes one reshape of the first operand.
// CHECK-LABEL: func.func @reshape_chain
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//  CHECK-NEXT:   %[[R:.+]] = tcc.reshape %[[X]] : tensor<2x3xf32> -> tensor<3x2xf32>
//  CHECK-NEXT:   return %[[R]]
func.func @reshape_chain(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = tcc.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = tcc.reshape %0 : tensor<6xf32> -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// Tests that a reshape chain back to the original type folds away entirely.
// CHECK-LABEL: func.func @reshape_round_trip
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @reshape_round_trip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tcc.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = tcc.reshape %0 : tensor<6xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// Tests that reshape of a constant folds, keeping the row-major order.
// CHECK-LABEL: func.func @fold_reshape_constant
//       CHECK:   %[[C:.+]] = tcc.constant dense<{{\[}}[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_reshape_constant() -> tensor<3x2xi64> {
  %c = tcc.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = tcc.reshape %c : tensor<2x3xi64> -> tensor<3x2xi64>
  return %0 : tensor<3x2xi64>
}

// -----

// Tests that transpose with the identity permutation folds to its operand.
// CHECK-LABEL: func.func @transpose_identity
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tcc.transpose %x, perm = [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that transpose of a constant folds.
// CHECK-LABEL: func.func @fold_transpose_constant
//       CHECK:   %[[C:.+]] = tcc.constant dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi64>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_transpose_constant() -> tensor<3x2xi64> {
  %c = tcc.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = tcc.transpose %c, perm = [1, 0] : tensor<2x3xi64> -> tensor<3x2xi64>
  return %0 : tensor<3x2xi64>
}

// -----

// Tests that transpose of a rank-3 constant folds with a non-involutive
// permutation (result dimension i is operand dimension perm[i]).
// CHECK-LABEL: func.func @fold_transpose_rank3
//       CHECK:   %[[C:.+]] = tcc.constant dense<{{\[}}{{\[}}[0, 3]], {{\[}}[1, 4]], {{\[}}[2, 5]]]> : tensor<3x1x2xi64>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_transpose_rank3() -> tensor<3x1x2xi64> {
  %c = tcc.constant dense<[[[0, 1, 2]], [[3, 4, 5]]]> : tensor<2x1x3xi64>
  %0 = tcc.transpose %c, perm = [2, 1, 0] : tensor<2x1x3xi64> -> tensor<3x1x2xi64>
  return %0 : tensor<3x1x2xi64>
}

// -----

// Tests that concat of a single operand folds to the operand.
// CHECK-LABEL: func.func @concat_single
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @concat_single(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tcc.concat %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a concat of a concat along the same axis reads the inner one's
// operands (a three-way Split's gradient is built pairwise; the inner
// concatenation would be one more buffer and copy), and that one along
// another axis stays nested.
// CHECK-LABEL: func.func @concat_nested
//  CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x3xf32>, %[[C:.+]]: tensor<2x3xf32>)
//       CHECK:   %[[FLAT:.+]] = tcc.concat %[[A]], %[[B]], %[[C]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x9xf32>
//       CHECK:   %[[ROWS:.+]] = tcc.concat %[[A]], %[[B]] {axis = 0 : i64}
//       CHECK:   %[[MIXED:.+]] = tcc.concat %[[ROWS]], %[[ROWS]] {axis = 1 : i64}
//       CHECK:   return %[[FLAT]], %[[MIXED]]
func.func @concat_nested(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xf32>) -> (tensor<2x9xf32>, tensor<4x6xf32>) {
  %bc = tcc.concat %b, %c {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %abc = tcc.concat %a, %bc {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x6xf32>) -> tensor<2x9xf32>
  %ab = tcc.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %mixed = tcc.concat %ab, %ab {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x6xf32>
  return %abc, %mixed : tensor<2x9xf32>, tensor<4x6xf32>
}

// -----

// Tests that concat of constants folds along an inner axis, splats included
// (the shape computation Shape -> Concat of exported models).
// CHECK-LABEL: func.func @fold_concat_constants
//   CHECK-DAG:   %[[INNER:.+]] = tcc.constant dense<{{\[}}[1, 7, 7], [2, 7, 7]]> : tensor<2x3xi64>
//   CHECK-DAG:   %[[OUTER:.+]] = tcc.constant dense<[4, -1, 8]> : tensor<3xi64>
//       CHECK:   return %[[INNER]], %[[OUTER]]
func.func @fold_concat_constants() -> (tensor<2x3xi64>, tensor<3xi64>) {
  %a = tcc.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %b = tcc.constant dense<7> : tensor<2x2xi64>
  %0 = tcc.concat %a, %b {axis = 1 : i64} : (tensor<2x1xi64>, tensor<2x2xi64>) -> tensor<2x3xi64>
  %s = tcc.constant dense<4> : tensor<1xi64>
  %t = tcc.constant dense<[-1, 8]> : tensor<2xi64>
  %1 = tcc.concat %s, %t {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  return %0, %1 : tensor<2x3xi64>, tensor<3xi64>
}

// -----

// Tests that a slice covering the whole operand with unit strides folds to the
// operand.
// CHECK-LABEL: func.func @slice_identity
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//  CHECK-NEXT:   return %[[X]]
func.func @slice_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tcc.slice %x, start = [0, 0], stride = [1, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a same-shaped slice with a negative stride (a reversal) is not an
// identity and folds on constants.
// CHECK-LABEL: func.func @fold_slice_reverse
//       CHECK:   %[[C:.+]] = tcc.constant dense<[3, 2, 1, 0]> : tensor<4xi64>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_slice_reverse() -> tensor<4xi64> {
  %c = tcc.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %0 = tcc.slice %c, start = [3], stride = [-1] : tensor<4xi64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Tests that a strided slice of a rank-2 constant with a negative stride folds.
// CHECK-LABEL: func.func @fold_slice_constant
//       CHECK:   %[[C:.+]] = tcc.constant dense<{{\[}}[7, 5], [3, 1]]> : tensor<2x2xi64>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_slice_constant() -> tensor<2x2xi64> {
  %c = tcc.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>
  %0 = tcc.slice %c, start = [1, 3], stride = [-1, -2] : tensor<2x4xi64> -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

// Tests that gather of constants folds, with the indices' shape in place of
// the gathered axis.
// CHECK-LABEL: func.func @fold_gather_constant
//       CHECK:   %[[C:.+]] = tcc.constant dense<{{\[}}[1, 3], [4, 6]]> : tensor<2x2xi64>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_gather_constant() -> tensor<2x2xi64> {
  %t = tcc.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %i = tcc.constant dense<[0, 2]> : tensor<2xi32>
  %0 = tcc.gather %t, %i {axis = 1 : i64} : (tensor<2x3xi64>, tensor<2xi32>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

// Tests that a negative gather index counts from the end (Shape -> Gather[-1]).
// CHECK-LABEL: func.func @fold_gather_negative_index
//       CHECK:   %[[C:.+]] = tcc.constant dense<768> : tensor<i64>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_gather_negative_index() -> tensor<i64> {
  %shape = tcc.constant dense<[8, 128, 768]> : tensor<3xi64>
  %i = tcc.constant dense<-1> : tensor<i64>
  %0 = tcc.gather %shape, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Tests that gather with an out-of-range index is left for the runtime to
// report, even from a splat table that every index would read alike.
// CHECK-LABEL: func.func @no_fold_gather_out_of_range
//       CHECK:   tcc.gather
//       CHECK:   tcc.gather
func.func @no_fold_gather_out_of_range() -> (tensor<2xi64>, tensor<2xf32>) {
  %t = tcc.constant dense<[1, 2, 3]> : tensor<3xi64>
  %s = tcc.constant dense<1.0> : tensor<3xf32>
  %i = tcc.constant dense<[0, 3]> : tensor<2xi64>
  %0 = tcc.gather %t, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  %1 = tcc.gather %s, %i {axis = 0 : i64} : (tensor<3xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %0, %1 : tensor<2xi64>, tensor<2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// Tests that reduce_sum of a constant folds, keeping the reduced dimension.
// CHECK-LABEL: func.func @fold_reduce_sum_keepdims
//       CHECK:   %[[C:.+]] = tcc.constant dense<{{\[}}[6.000000e+00], [1.500000e+01]]> : tensor<2x1xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_reduce_sum_keepdims() -> tensor<2x1xf32> {
  %c = tcc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = tcc.reduce_sum %c {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// Tests that reduce_sum of an integer constant folds over the outer axis
// without keepdims.
// CHECK-LABEL: func.func @fold_reduce_sum_int
//       CHECK:   %[[C:.+]] = tcc.constant dense<[3, 7, 9]> : tensor<3xi32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_reduce_sum_int() -> tensor<3xi32> {
  %c = tcc.constant dense<[[-1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %0 = tcc.reduce_sum %c {axes = array<i64: 0>, keepdims = false} : tensor<2x3xi32> -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Tests that reduce_mean of a constant folds over two axes, with and without
// keepdims.
// CHECK-LABEL: func.func @fold_reduce_mean
//   CHECK-DAG:   %[[K:.+]] = tcc.constant dense<3.500000e+00> : tensor<1x1xf32>
//   CHECK-DAG:   %[[S:.+]] = tcc.constant dense<3.500000e+00> : tensor<f32>
//       CHECK:   return %[[K]], %[[S]]
func.func @fold_reduce_mean() -> (tensor<1x1xf32>, tensor<f32>) {
  %c = tcc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = tcc.reduce_mean %c {axes = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<1x1xf32>
  %1 = tcc.reduce_mean %c {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %0, %1 : tensor<1x1xf32>, tensor<f32>
}

// -----

// Tests that reduce_max of a constant folds, propagating NaN.
// CHECK-LABEL: func.func @fold_reduce_max
//       CHECK:   %[[C:.+]] = tcc.constant dense<[3.000000e+00, 0x7FC00000]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_reduce_max() -> tensor<2xf32> {
  %c = tcc.constant dense<[[1.0, 3.0, -2.0], [1.0, 0x7FC00000, 2.0]]> : tensor<2x3xf32>
  %0 = tcc.reduce_max %c {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that reduce_min of a constant folds, propagating NaN.
// CHECK-LABEL: func.func @fold_reduce_min
//       CHECK:   %[[C:.+]] = tcc.constant dense<[-2.000000e+00, 0x7FC00000]> : tensor<2xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_reduce_min() -> tensor<2xf32> {
  %c = tcc.constant dense<[[1.0, 3.0, -2.0], [1.0, 0x7FC00000, 2.0]]> : tensor<2x3xf32>
  %0 = tcc.reduce_min %c {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that reduce_max and reduce_min of an integer constant fold.
// CHECK-LABEL: func.func @fold_int_reduce_max_min
//   CHECK-DAG:   %[[MAX:.+]] = tcc.constant dense<{{\[}}[4, 5, 6]]> : tensor<1x3xi64>
//   CHECK-DAG:   %[[MIN:.+]] = tcc.constant dense<{{\[}}[-1, 2, 3]]> : tensor<1x3xi64>
//       CHECK:   return %[[MAX]], %[[MIN]]
func.func @fold_int_reduce_max_min() -> (tensor<1x3xi64>, tensor<1x3xi64>) {
  %c = tcc.constant dense<[[-1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = tcc.reduce_max %c {axes = array<i64: 0>} : tensor<2x3xi64> -> tensor<1x3xi64>
  %1 = tcc.reduce_min %c {axes = array<i64: 0>} : tensor<2x3xi64> -> tensor<1x3xi64>
  return %0, %1 : tensor<1x3xi64>, tensor<1x3xi64>
}

// -----

// Tests that reduce_prod of a constant folds (the element count of a shape).
// CHECK-LABEL: func.func @fold_reduce_prod
//       CHECK:   %[[C:.+]] = tcc.constant dense<98304> : tensor<i64>
//  CHECK-NEXT:   return %[[C]]
func.func @fold_reduce_prod() -> tensor<i64> {
  %shape = tcc.constant dense<[1, 128, 768]> : tensor<3xi64>
  %0 = tcc.reduce_prod %shape {axes = array<i64: 0>, keepdims = false} : tensor<3xi64> -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Tests that a reduction over no axes folds to its operand.
// CHECK-LABEL: func.func @reduce_empty_axes
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//  CHECK-NEXT:   return %[[X]], %[[X]]
func.func @reduce_empty_axes(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = tcc.reduce_sum %x {axes = array<i64>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = tcc.reduce_max %x {axes = array<i64>, keepdims = false} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Tests that reductions of unsigned constants are not folded.
// CHECK-LABEL: func.func @no_fold_reduce_unsigned
//       CHECK:   tcc.reduce_sum
func.func @no_fold_reduce_unsigned() -> tensor<ui8> {
  %c = tcc.constant dense<[200, 100]> : tensor<2xui8>
  %0 = tcc.reduce_sum %c {axes = array<i64: 0>, keepdims = false} : tensor<2xui8> -> tensor<ui8>
  return %0 : tensor<ui8>
}

// -----

// Tests that integer max, min and mean over an empty dimension are not folded
// (there is no value), while sum and float max fold to their identities.
// CHECK-LABEL: func.func @reduce_empty_dimension
//   CHECK-DAG:   %[[SUM:.+]] = tcc.constant dense<0> : tensor<1x2xi32>
//   CHECK-DAG:   %[[FMAX:.+]] = tcc.constant dense<0xFF800000> : tensor<1x2xf32>
//   CHECK-DAG:   %[[MAX:.+]] = tcc.reduce_max {{.*}} : tensor<0x2xi32> -> tensor<1x2xi32>
//   CHECK-DAG:   %[[MEAN:.+]] = tcc.reduce_mean {{.*}} : tensor<0x2xi32> -> tensor<1x2xi32>
//       CHECK:   return %[[SUM]], %[[MAX]], %[[MEAN]], %[[FMAX]]
func.func @reduce_empty_dimension() -> (tensor<1x2xi32>, tensor<1x2xi32>, tensor<1x2xi32>, tensor<1x2xf32>) {
  %e = tcc.constant dense<> : tensor<0x2xi32>
  %f = tcc.constant dense<> : tensor<0x2xf32>
  %0 = tcc.reduce_sum %e {axes = array<i64: 0>} : tensor<0x2xi32> -> tensor<1x2xi32>
  %1 = tcc.reduce_max %e {axes = array<i64: 0>} : tensor<0x2xi32> -> tensor<1x2xi32>
  %2 = tcc.reduce_mean %e {axes = array<i64: 0>} : tensor<0x2xi32> -> tensor<1x2xi32>
  %3 = tcc.reduce_max %f {axes = array<i64: 0>} : tensor<0x2xf32> -> tensor<1x2xf32>
  return %0, %1, %2, %3 : tensor<1x2xi32>, tensor<1x2xi32>, tensor<1x2xi32>, tensor<1x2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Size limit: no large non-splat constants
//===----------------------------------------------------------------------===//

// Tests that folds of large splats make splats of any size: elementwise ops,
// compare, cast and broadcast_in_dim.
// CHECK-LABEL: func.func @fold_large_splat
//   CHECK-DAG:   %[[EXP:.+]] = tcc.constant dense<1.000000e+00> : tensor<65537xf32>
//   CHECK-DAG:   %[[ADD:.+]] = tcc.constant dense<2.000000e+00> : tensor<65537xf32>
//   CHECK-DAG:   %[[CMP:.+]] = tcc.constant dense<true> : tensor<65537xi1>
//   CHECK-DAG:   %[[CAST:.+]] = tcc.constant dense<0> : tensor<65537xi32>
//   CHECK-DAG:   %[[BC:.+]] = tcc.constant dense<0.000000e+00> : tensor<2x65537xf32>
//   CHECK-NOT:   tcc.exp
//   CHECK-NOT:   tcc.add
//   CHECK-NOT:   tcc.compare
//   CHECK-NOT:   tcc.cast
//   CHECK-NOT:   tcc.broadcast_in_dim
//       CHECK:   return %[[EXP]], %[[ADD]], %[[CMP]], %[[CAST]], %[[BC]]
func.func @fold_large_splat() -> (tensor<65537xf32>, tensor<65537xf32>, tensor<65537xi1>, tensor<65537xi32>, tensor<2x65537xf32>) {
  %z = tcc.constant dense<0.0> : tensor<65537xf32>
  %0 = tcc.exp %z : tensor<65537xf32>
  %1 = tcc.add %0, %0 : tensor<65537xf32>
  %2 = tcc.compare lt, %z, %0 : tensor<65537xf32>
  %3 = tcc.cast %z : tensor<65537xf32> to tensor<65537xi32>
  %4 = tcc.broadcast_in_dim %z, dims = [1] : tensor<65537xf32> -> tensor<2x65537xf32>
  return %0, %1, %2, %3, %4 : tensor<65537xf32>, tensor<65537xf32>, tensor<65537xi1>, tensor<65537xi32>, tensor<2x65537xf32>
}

// -----

// Tests that a fold whose result would be a non-splat constant of more than
// 65536 elements is refused: broadcast_in_dim of a non-splat, and concat of
// two different splats.
// CHECK-LABEL: func.func @no_fold_large_non_splat
//       CHECK:   tcc.broadcast_in_dim
//       CHECK:   tcc.concat
func.func @no_fold_large_non_splat() -> (tensor<2x40000xf32>, tensor<70000xf32>) {
  %v = tcc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = tcc.broadcast_in_dim %v, dims = [0] : tensor<2xf32> -> tensor<2x40000xf32>
  %a = tcc.constant dense<1.0> : tensor<35000xf32>
  %b = tcc.constant dense<2.0> : tensor<35000xf32>
  %1 = tcc.concat %a, %b {axis = 0 : i64} : (tensor<35000xf32>, tensor<35000xf32>) -> tensor<70000xf32>
  return %0, %1 : tensor<2x40000xf32>, tensor<70000xf32>
}

// -----

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

// Tests that a batched matmul with a weight broadcast over the batch becomes
// one 2-D matmul between reshapes (no broadcast copy of the weight).
// CHECK-LABEL: func.func @matmul_broadcast_weight
// CHECK-SAME: (%[[X:.+]]: tensor<4x3x8xf32>, %[[W:.+]]: tensor<8x5xf32>)
// CHECK: %[[F:.+]] = tcc.reshape %[[X]] : tensor<4x3x8xf32> -> tensor<12x8xf32>
// CHECK: %[[P:.+]] = tcc.matmul %[[F]], %[[W]] : (tensor<12x8xf32>, tensor<8x5xf32>) -> tensor<12x5xf32>
// CHECK: %[[R:.+]] = tcc.reshape %[[P]] : tensor<12x5xf32> -> tensor<4x3x5xf32>
// CHECK-NOT: tcc.broadcast_in_dim
// CHECK: return %[[R]]
func.func @matmul_broadcast_weight(%x: tensor<4x3x8xf32>, %w: tensor<8x5xf32>) -> tensor<4x3x5xf32> {
  %b = tcc.broadcast_in_dim %w, dims = [1, 2] : tensor<8x5xf32> -> tensor<4x8x5xf32>
  %y = tcc.matmul %x, %b : (tensor<4x3x8xf32>, tensor<4x8x5xf32>) -> tensor<4x3x5xf32>
  return %y : tensor<4x3x5xf32>
}

// -----

// Tests that a weight broadcast along one of its own (size-1) dimensions is
// not mistaken for a batch broadcast: the batched matmul stays.
// CHECK-LABEL: func.func @matmul_broadcast_within_weight
// CHECK: tcc.broadcast_in_dim
// CHECK: tcc.matmul %{{.+}}, %{{.+}} : (tensor<4x3x8xf32>, tensor<4x8x5xf32>) -> tensor<4x3x5xf32>
func.func @matmul_broadcast_within_weight(%x: tensor<4x3x8xf32>, %w: tensor<8x1xf32>) -> tensor<4x3x5xf32> {
  %b = tcc.broadcast_in_dim %w, dims = [1, 2] : tensor<8x1xf32> -> tensor<4x8x5xf32>
  %y = tcc.matmul %x, %b : (tensor<4x3x8xf32>, tensor<4x8x5xf32>) -> tensor<4x3x5xf32>
  return %y : tensor<4x3x5xf32>
}

// -----

// Tests that a batched matmul whose weight differs per batch element stays.
// CHECK-LABEL: func.func @matmul_batched_weight
// CHECK: tcc.matmul %{{.+}}, %{{.+}} : (tensor<4x3x8xf32>, tensor<4x8x5xf32>) -> tensor<4x3x5xf32>
func.func @matmul_batched_weight(%x: tensor<4x3x8xf32>, %w: tensor<4x8x5xf32>) -> tensor<4x3x5xf32> {
  %y = tcc.matmul %x, %w : (tensor<4x3x8xf32>, tensor<4x8x5xf32>) -> tensor<4x3x5xf32>
  return %y : tensor<4x3x5xf32>
}

// -----

// Tests that the transpose of a product is the product of the transposed
// operands in swapped order, and that a transpose of a transpose folds: the
// gradient of a weight read as `x @ w.T`, `(x.T @ dy).T`, becomes `dy.T @ x`.
// CHECK-LABEL: func.func @transpose_of_matmul
// CHECK-SAME: (%[[X:.+]]: tensor<6x4xf32>, %[[D:.+]]: tensor<6x3xf32>)
// CHECK: %[[DT:.+]] = tcc.transpose %[[D]], perm = [1, 0] : tensor<6x3xf32> -> tensor<3x6xf32>
// CHECK: %[[G:.+]] = tcc.matmul %[[DT]], %[[X]] : (tensor<3x6xf32>, tensor<6x4xf32>) -> tensor<3x4xf32>
// CHECK-NOT: tcc.transpose
// CHECK: return %[[G]]
func.func @transpose_of_matmul(%x: tensor<6x4xf32>, %d: tensor<6x3xf32>) -> tensor<3x4xf32> {
  %xt = tcc.transpose %x, perm = [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %g = tcc.matmul %xt, %d : (tensor<4x6xf32>, tensor<6x3xf32>) -> tensor<4x3xf32>
  %gt = tcc.transpose %g, perm = [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  return %gt : tensor<3x4xf32>
}

// -----

// Tests the batched form (the last two dimensions swapped, the batch kept).
// CHECK-LABEL: func.func @transpose_of_batched_matmul
// CHECK-SAME: (%[[A:.+]]: tensor<2x5x4xf32>, %[[B:.+]]: tensor<2x4x3xf32>)
// CHECK-DAG: %[[BT:.+]] = tcc.transpose %[[B]], perm = [0, 2, 1] : tensor<2x4x3xf32> -> tensor<2x3x4xf32>
// CHECK-DAG: %[[AT:.+]] = tcc.transpose %[[A]], perm = [0, 2, 1] : tensor<2x5x4xf32> -> tensor<2x4x5xf32>
// CHECK: %[[P:.+]] = tcc.matmul %[[BT]], %[[AT]] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK: return %[[P]]
func.func @transpose_of_batched_matmul(%a: tensor<2x5x4xf32>, %b: tensor<2x4x3xf32>) -> tensor<2x3x5xf32> {
  %p = tcc.matmul %a, %b : (tensor<2x5x4xf32>, tensor<2x4x3xf32>) -> tensor<2x5x3xf32>
  %t = tcc.transpose %p, perm = [0, 2, 1] : tensor<2x5x3xf32> -> tensor<2x3x5xf32>
  return %t : tensor<2x3x5xf32>
}

// -----

// Tests that a product read elsewhere too, or transposed across its batch
// dimension, is left as it is (rewriting would compute it twice, or is not
// a product of transposes).
// CHECK-LABEL: func.func @transpose_of_matmul_kept
// CHECK: %[[P:.+]] = tcc.matmul
// CHECK: tcc.transpose %[[P]], perm = [1, 0]
// CHECK: %[[Q:.+]] = tcc.matmul
// CHECK: tcc.transpose %[[Q]], perm = [1, 0, 2]
func.func @transpose_of_matmul_kept(%a: tensor<5x4xf32>, %b: tensor<4x3xf32>, %c: tensor<2x5x4xf32>, %d: tensor<2x4x3xf32>)
    -> (tensor<3x5xf32>, tensor<5x3xf32>, tensor<5x2x3xf32>) {
  %p = tcc.matmul %a, %b : (tensor<5x4xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  %t = tcc.transpose %p, perm = [1, 0] : tensor<5x3xf32> -> tensor<3x5xf32>
  %q = tcc.matmul %c, %d : (tensor<2x5x4xf32>, tensor<2x4x3xf32>) -> tensor<2x5x3xf32>
  %u = tcc.transpose %q, perm = [1, 0, 2] : tensor<2x5x3xf32> -> tensor<5x2x3xf32>
  return %t, %p, %u : tensor<3x5xf32>, tensor<5x3xf32>, tensor<5x2x3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Simplifications of the training graph (issue 5)
//===----------------------------------------------------------------------===//

// Tests that a transpose of a transpose becomes one transpose of the first
// operand, with the composed permutation.
// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.+]] = tcc.transpose %[[X]], perm = [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK: return %[[T]]
func.func @transpose_of_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %a = tcc.transpose %x, perm = [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %b = tcc.transpose %a, perm = [1, 0, 2] : tensor<3x4x2xf32> -> tensor<4x3x2xf32>
  return %b : tensor<4x3x2xf32>
}

// -----

// Tests that transposes that undo each other fold away.
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: tcc.transpose
// CHECK: return %[[X]]
func.func @transpose_inverse(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = tcc.transpose %x, perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %b = tcc.transpose %a, perm = [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  return %b : tensor<2x3xf32>
}

// -----

// Tests that a cast to a wider type and back folds to the operand.
// CHECK-LABEL: func.func @cast_round_trip
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi8>)
// CHECK-NOT: tcc.cast
// CHECK: return %[[X]], %[[I]]
func.func @cast_round_trip(%x: tensor<4xf32>, %i: tensor<4xi8>) -> (tensor<4xf32>, tensor<4xi8>) {
  %w = tcc.cast %x : tensor<4xf32> to tensor<4xf64>
  %y = tcc.cast %w : tensor<4xf64> to tensor<4xf32>
  %wi = tcc.cast %i : tensor<4xi8> to tensor<4xi32>
  %j = tcc.cast %wi : tensor<4xi32> to tensor<4xi8>
  return %y, %j : tensor<4xf32>, tensor<4xi8>
}

// -----

// Tests that a cast through a narrower type (which rounds) is kept.
// CHECK-LABEL: func.func @cast_through_narrower
// CHECK: tcc.cast %{{.+}} : tensor<4xf32> to tensor<4xf16>
// CHECK: tcc.cast %{{.+}} : tensor<4xf16> to tensor<4xf32>
func.func @cast_through_narrower(%x: tensor<4xf32>) -> tensor<4xf32> {
  %n = tcc.cast %x : tensor<4xf32> to tensor<4xf16>
  %y = tcc.cast %n : tensor<4xf16> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that division by a power of two becomes multiplication by its exact
// inverse.
// CHECK-LABEL: func.func @div_by_power_of_two
// CHECK: %[[K:.+]] = tcc.constant dense<1.250000e-01> : tensor<4xf32>
// CHECK: tcc.mul %{{.+}}, %[[K]] : tensor<4xf32>
// CHECK-NOT: tcc.div
func.func @div_by_power_of_two(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = tcc.constant dense<8.0> : tensor<4xf32>
  %y = tcc.div %x, %c : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that division by a constant without an exact inverse stays (1/3
// rounds, so x * (1/3) may differ from x / 3 in the last bit).
// CHECK-LABEL: func.func @div_by_three
// CHECK: tcc.div
func.func @div_by_three(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = tcc.constant dense<3.0> : tensor<4xf32>
  %y = tcc.div %x, %c : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that pow(x, 2) becomes x * x.
// CHECK-LABEL: func.func @pow_two
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[Y:.+]] = tcc.mul %[[X]], %[[X]] : tensor<4xf32>
// CHECK-NOT: tcc.pow
// CHECK: return %[[Y]]
func.func @pow_two(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = tcc.constant dense<2.0> : tensor<4xf32>
  %y = tcc.pow %x, %c : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that pow with another exponent stays.
// CHECK-LABEL: func.func @pow_three
// CHECK: tcc.pow
func.func @pow_three(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = tcc.constant dense<3.0> : tensor<4xf32>
  %y = tcc.pow %x, %c : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A 3x3 convolution on a 1x1 map (padding 1) only ever multiplies the
// filter's centre with the input: a 1x1 convolution of the centre taps,
// without padding.
// CHECK-LABEL: func.func @conv_taps_on_padding
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x1x1xf32>, %[[W:.+]]: tensor<8x4x3x3xf32>)
// CHECK: %[[C:.+]] = tcc.slice %[[W]], start = [0, 0, 1, 1], stride = [1, 1, 1, 1] : tensor<8x4x3x3xf32> -> tensor<8x4x1x1xf32>
// CHECK: tcc.conv %[[X]], %[[C]] {dilations = array<i64: 1, 1>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x1x1xf32>, tensor<8x4x1x1xf32>) -> tensor<2x8x1x1xf32>
func.func @conv_taps_on_padding(%x: tensor<2x4x1x1xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x1x1xf32> {
  %y = tcc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x4x1x1xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x1x1xf32>
  return %y : tensor<2x8x1x1xf32>
}

// -----

// Stride 2 on a 2x2 map: the first row and column of taps meet padding only;
// the last ones meet the input (2x2 taps, the high padding kept). On a 5x5
// map every tap meets the input: the convolution stays.
// CHECK-LABEL: func.func @conv_taps_strided
// CHECK: tcc.slice %{{.*}}, start = [0, 0, 1, 1], stride = [1, 1, 1, 1] : tensor<8x4x3x3xf32> -> tensor<8x4x2x2xf32>
// CHECK: tcc.conv {{.*}} pad_high = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x4x2x2xf32>, tensor<8x4x2x2xf32>) -> tensor<2x8x1x1xf32>
// CHECK: tcc.conv {{.*}} : (tensor<2x4x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x3x3xf32>
func.func @conv_taps_strided(%x: tensor<2x4x2x2xf32>, %w: tensor<8x4x3x3xf32>, %x5: tensor<2x4x5x5xf32>)
    -> (tensor<2x8x1x1xf32>, tensor<2x8x3x3xf32>) {
  %y = tcc.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x4x2x2xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x1x1xf32>
  %z = tcc.conv %x5, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x4x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x3x3xf32>
  return %y, %z : tensor<2x8x1x1xf32>, tensor<2x8x3x3xf32>
}

// -----

// The gradient of a three-way split (attention's q, k, v): one zero pad per
// part, summed. Adjacent parts join into a concatenation, the whole sum into
// one, flattened: no zero-filled copies of the whole tensor, no inner
// concatenation copied again.
// CHECK-LABEL: func.func @add_of_split_pads
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4xf32>, %[[K:.+]]: tensor<2x4xf32>, %[[V:.+]]: tensor<2x4xf32>)
// CHECK-NOT: tcc.pad
// CHECK-NOT: tcc.add
// CHECK: %[[QKV:.+]] = tcc.concat %[[Q]], %[[K]], %[[V]] {axis = 1 : i64}
// CHECK: return %[[QKV]] : tensor<2x12xf32>
func.func @add_of_split_pads(%q: tensor<2x4xf32>, %k: tensor<2x4xf32>, %v: tensor<2x4xf32>) -> tensor<2x12xf32> {
  %pq = tcc.pad %q, low = [0, 0], high = [0, 8] : tensor<2x4xf32> -> tensor<2x12xf32>
  %pk = tcc.pad %k, low = [0, 4], high = [0, 4] : tensor<2x4xf32> -> tensor<2x12xf32>
  %pv = tcc.pad %v, low = [0, 8], high = [0, 0] : tensor<2x4xf32> -> tensor<2x12xf32>
  %s = tcc.add %pq, %pk : tensor<2x12xf32>
  %t = tcc.add %s, %pv : tensor<2x12xf32>
  return %t : tensor<2x12xf32>
}

// -----

// Pads alike: the sum moves inside. Pads with a gap between the parts, pads
// that differ along two axes, a pad with a second use, and a pad of a
// nonzero value stay as they are.
// CHECK-LABEL: func.func @add_of_pads_kept
// CHECK: %[[S:.+]] = tcc.add %arg0, %arg1 : tensor<2x4xf32>
// CHECK: tcc.pad %[[S]], low = [1, 0], high = [0, 2]
// CHECK-COUNT-4: tcc.add
func.func @add_of_pads_kept(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>)
    -> (tensor<3x6xf32>, tensor<2x12xf32>, tensor<3x9xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %pa = tcc.pad %a, low = [1, 0], high = [0, 2] : tensor<2x4xf32> -> tensor<3x6xf32>
  %pb = tcc.pad %b, low = [1, 0], high = [0, 2] : tensor<2x4xf32> -> tensor<3x6xf32>
  %alike = tcc.add %pa, %pb : tensor<3x6xf32>
  %ga = tcc.pad %a, low = [0, 0], high = [0, 8] : tensor<2x4xf32> -> tensor<2x12xf32>
  %gb = tcc.pad %b, low = [0, 6], high = [0, 2] : tensor<2x4xf32> -> tensor<2x12xf32>
  %gap = tcc.add %ga, %gb : tensor<2x12xf32>
  %da = tcc.pad %a, low = [0, 0], high = [1, 5] : tensor<2x4xf32> -> tensor<3x9xf32>
  %db = tcc.pad %b, low = [1, 5], high = [0, 0] : tensor<2x4xf32> -> tensor<3x9xf32>
  %diag = tcc.add %da, %db : tensor<3x9xf32>
  %ua = tcc.pad %a, low = [0, 0], high = [0, 4] : tensor<2x4xf32> -> tensor<2x8xf32>
  %ub = tcc.pad %b, low = [0, 4], high = [0, 0] : tensor<2x4xf32> -> tensor<2x8xf32>
  %used = tcc.add %ua, %ub : tensor<2x8xf32>
  %na = tcc.pad %a, low = [0, 0], high = [0, 4] {value = 1.0 : f64} : tensor<2x4xf32> -> tensor<2x8xf32>
  %nb = tcc.pad %b, low = [0, 4], high = [0, 0] : tensor<2x4xf32> -> tensor<2x8xf32>
  %ones = tcc.add %na, %nb : tensor<2x8xf32>
  return %alike, %gap, %diag, %used, %ua, %ones : tensor<3x6xf32>, tensor<2x12xf32>, tensor<3x9xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Tests that the erf GELU as PyTorch 1.13 exports it, x * (1 + erf(x /
// sqrt 2)) * 0.5, becomes tcc.gelu.
// CHECK-LABEL: func.func @gelu_from_erf
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//  CHECK-NEXT:   %[[G:.+]] = tcc.gelu %[[X]] : tensor<4xf32>
//  CHECK-NEXT:   return %[[G]]
func.func @gelu_from_erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %sqrt2 = tcc.constant dense<1.41421354> : tensor<4xf32>
  %one = tcc.constant dense<1.0> : tensor<4xf32>
  %half = tcc.constant dense<0.5> : tensor<4xf32>
  %0 = tcc.div %x, %sqrt2 : tensor<4xf32>
  %1 = tcc.erf %0 : tensor<4xf32>
  %2 = tcc.add %1, %one : tensor<4xf32>
  %3 = tcc.mul %x, %2 : tensor<4xf32>
  %4 = tcc.mul %3, %half : tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// Tests that Hugging Face's grouping, (x * 0.5) * (1 + erf(x * (1 / sqrt
// 2))), becomes tcc.gelu too.
// CHECK-LABEL: func.func @gelu_from_erf_grouped
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//  CHECK-NEXT:   %[[G:.+]] = tcc.gelu %[[X]] : tensor<2x3xf32>
//  CHECK-NEXT:   return %[[G]]
func.func @gelu_from_erf_grouped(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %inv = tcc.constant dense<0.707106769> : tensor<2x3xf32>
  %one = tcc.constant dense<1.0> : tensor<2x3xf32>
  %half = tcc.constant dense<0.5> : tensor<2x3xf32>
  %0 = tcc.mul %inv, %x : tensor<2x3xf32>
  %1 = tcc.erf %0 : tensor<2x3xf32>
  %2 = tcc.add %one, %1 : tensor<2x3xf32>
  %3 = tcc.mul %x, %half : tensor<2x3xf32>
  %4 = tcc.mul %3, %2 : tensor<2x3xf32>
  return %4 : tensor<2x3xf32>
}

// -----

// Tests that the GELU pattern stays ops when an intermediate has another
// reader (here erf's result), when the scale is not 1 / sqrt 2, or when the
// erf reads another tensor than the product.
// CHECK-LABEL: func.func @no_gelu_from_erf
//   CHECK-NOT:   tcc.gelu
//       CHECK:   return
func.func @no_gelu_from_erf(%x: tensor<4xf32>, %y: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %sqrt2 = tcc.constant dense<1.41421354> : tensor<4xf32>
  %c15 = tcc.constant dense<1.5> : tensor<4xf32>
  %one = tcc.constant dense<1.0> : tensor<4xf32>
  %half = tcc.constant dense<0.5> : tensor<4xf32>
  %0 = tcc.div %x, %sqrt2 : tensor<4xf32>
  %1 = tcc.erf %0 : tensor<4xf32>
  %2 = tcc.add %1, %one : tensor<4xf32>
  %3 = tcc.mul %x, %2 : tensor<4xf32>
  %4 = tcc.mul %3, %half : tensor<4xf32>
  %10 = tcc.div %x, %c15 : tensor<4xf32>
  %11 = tcc.erf %10 : tensor<4xf32>
  %12 = tcc.add %11, %one : tensor<4xf32>
  %13 = tcc.mul %x, %12 : tensor<4xf32>
  %14 = tcc.mul %13, %half : tensor<4xf32>
  %20 = tcc.div %y, %sqrt2 : tensor<4xf32>
  %21 = tcc.erf %20 : tensor<4xf32>
  %22 = tcc.add %21, %one : tensor<4xf32>
  %23 = tcc.mul %x, %22 : tensor<4xf32>
  %24 = tcc.mul %23, %half : tensor<4xf32>
  return %4, %1, %14, %24 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
