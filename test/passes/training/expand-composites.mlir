// RUN: tcc-opt --split-input-file --tcc-expand-composites %s | FileCheck %s

// Composite activations become primitive tcc ops, one pattern per case; the
// expansions stay numerically safe (no exp of large positive values).

// Tests that exact gelu becomes 0.5 x (1 + erf(x / sqrt 2)).
// CHECK-LABEL: func.func @gelu_exact
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//   CHECK-DAG:   %[[HALF:.+]] = tcc.constant dense<5.000000e-01> : tensor<4xf32>
//   CHECK-DAG:   %[[ONE:.+]] = tcc.constant dense<1.000000e+00> : tensor<4xf32>
//   CHECK-DAG:   %[[RSQRT2:.+]] = tcc.constant dense<0.707106769> : tensor<4xf32>
//       CHECK:   %[[SCALED:.+]] = tcc.mul %[[X]], %[[RSQRT2]] : tensor<4xf32>
//       CHECK:   %[[ERF:.+]] = tcc.erf %[[SCALED]] : tensor<4xf32>
//       CHECK:   %[[SUM:.+]] = tcc.add %[[ONE]], %[[ERF]] : tensor<4xf32>
//       CHECK:   %[[HALFX:.+]] = tcc.mul %[[HALF]], %[[X]] : tensor<4xf32>
//       CHECK:   %[[Y:.+]] = tcc.mul %[[HALFX]], %[[SUM]] : tensor<4xf32>
//       CHECK:   return %[[Y]]
//   CHECK-NOT:   tcc.gelu
func.func @gelu_exact(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.gelu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tanh-approximated gelu becomes
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// CHECK-LABEL: func.func @gelu_tanh
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//   CHECK-DAG:   %[[HALF:.+]] = tcc.constant dense<5.000000e-01> : tensor<4xf32>
//   CHECK-DAG:   %[[ONE:.+]] = tcc.constant dense<1.000000e+00> : tensor<4xf32>
//   CHECK-DAG:   %[[K:.+]] = tcc.constant dense<0.797884583> : tensor<4xf32>
//   CHECK-DAG:   %[[C:.+]] = tcc.constant dense<4.471500e-02> : tensor<4xf32>
//       CHECK:   %[[X2:.+]] = tcc.mul %[[X]], %[[X]] : tensor<4xf32>
//       CHECK:   %[[X3:.+]] = tcc.mul %[[X]], %[[X2]] : tensor<4xf32>
//       CHECK:   %[[CX3:.+]] = tcc.mul %[[C]], %[[X3]] : tensor<4xf32>
//       CHECK:   %[[POLY:.+]] = tcc.add %[[X]], %[[CX3]] : tensor<4xf32>
//       CHECK:   %[[ARG:.+]] = tcc.mul %[[K]], %[[POLY]] : tensor<4xf32>
//       CHECK:   %[[TANH:.+]] = tcc.tanh %[[ARG]] : tensor<4xf32>
//       CHECK:   %[[SUM:.+]] = tcc.add %[[ONE]], %[[TANH]] : tensor<4xf32>
//       CHECK:   %[[HALFX:.+]] = tcc.mul %[[HALF]], %[[X]] : tensor<4xf32>
//       CHECK:   %[[Y:.+]] = tcc.mul %[[HALFX]], %[[SUM]] : tensor<4xf32>
//       CHECK:   return %[[Y]]
//   CHECK-NOT:   tcc.gelu
func.func @gelu_tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.gelu %x {approximate = true} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that softplus becomes max(x, 0) + log(1 + exp(-|x|)), which cannot
// overflow.
// CHECK-LABEL: func.func @softplus
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//   CHECK-DAG:   %[[ONE:.+]] = tcc.constant dense<1.000000e+00> : tensor<4xf32>
//       CHECK:   %[[ABS:.+]] = tcc.abs %[[X]] : tensor<4xf32>
//       CHECK:   %[[NEG:.+]] = tcc.neg %[[ABS]] : tensor<4xf32>
//       CHECK:   %[[EXP:.+]] = tcc.exp %[[NEG]] : tensor<4xf32>
//       CHECK:   %[[SUM:.+]] = tcc.add %[[ONE]], %[[EXP]] : tensor<4xf32>
//       CHECK:   %[[LOG:.+]] = tcc.log %[[SUM]] : tensor<4xf32>
//       CHECK:   %[[RELU:.+]] = tcc.relu %[[X]] : tensor<4xf32>
//       CHECK:   %[[Y:.+]] = tcc.add %[[RELU]], %[[LOG]] : tensor<4xf32>
//       CHECK:   return %[[Y]]
//   CHECK-NOT:   tcc.softplus
func.func @softplus(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.softplus %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that leaky_relu becomes select(x >= 0, x, alpha x).
// CHECK-LABEL: func.func @leaky_relu
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//   CHECK-DAG:   %[[ZERO:.+]] = tcc.constant dense<0.000000e+00> : tensor<4xf32>
//   CHECK-DAG:   %[[ALPHA:.+]] = tcc.constant dense<1.000000e-01> : tensor<4xf32>
//       CHECK:   %[[SCALED:.+]] = tcc.mul %[[X]], %[[ALPHA]] : tensor<4xf32>
//       CHECK:   %[[COND:.+]] = tcc.compare ge, %[[X]], %[[ZERO]] : tensor<4xf32>
//       CHECK:   %[[Y:.+]] = tcc.select %[[COND]], %[[X]], %[[SCALED]] : tensor<4xi1>, tensor<4xf32>
//       CHECK:   return %[[Y]]
//   CHECK-NOT:   tcc.leaky_relu
func.func @leaky_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.leaky_relu %x {alpha = 0.1 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that elu becomes select(x > 0, x, alpha (exp(min(x, 0)) - 1)), so that
// exp never sees a positive value.
// CHECK-LABEL: func.func @elu
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//   CHECK-DAG:   %[[ALPHA:.+]] = tcc.constant dense<5.000000e-01> : tensor<4xf32>
//   CHECK-DAG:   %[[ONE:.+]] = tcc.constant dense<1.000000e+00> : tensor<4xf32>
//   CHECK-DAG:   %[[ZERO:.+]] = tcc.constant dense<0.000000e+00> : tensor<4xf32>
//       CHECK:   %[[MIN:.+]] = tcc.min %[[X]], %[[ZERO]] : tensor<4xf32>
//       CHECK:   %[[EXP:.+]] = tcc.exp %[[MIN]] : tensor<4xf32>
//       CHECK:   %[[EXPM1:.+]] = tcc.sub %[[EXP]], %[[ONE]] : tensor<4xf32>
//       CHECK:   %[[NEG:.+]] = tcc.mul %[[EXPM1]], %[[ALPHA]] : tensor<4xf32>
//       CHECK:   %[[COND:.+]] = tcc.compare gt, %[[X]], %[[ZERO]] : tensor<4xf32>
//       CHECK:   %[[Y:.+]] = tcc.select %[[COND]], %[[X]], %[[NEG]] : tensor<4xi1>, tensor<4xf32>
//       CHECK:   return %[[Y]]
//   CHECK-NOT:   tcc.elu
func.func @elu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.elu %x {alpha = 0.5 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that rsqrt becomes 1 / sqrt(x).
// CHECK-LABEL: func.func @rsqrt
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//   CHECK-DAG:   %[[ONE:.+]] = tcc.constant dense<1.000000e+00> : tensor<4xf32>
//       CHECK:   %[[SQRT:.+]] = tcc.sqrt %[[X]] : tensor<4xf32>
//       CHECK:   %[[Y:.+]] = tcc.div %[[ONE]], %[[SQRT]] : tensor<4xf32>
//       CHECK:   return %[[Y]]
//   CHECK-NOT:   tcc.rsqrt
func.func @rsqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.rsqrt %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that reciprocal becomes 1 / x, with the constant in the operand's
// shape and element type (f16).
// CHECK-LABEL: func.func @reciprocal
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf16>)
//       CHECK:   %[[ONE:.+]] = tcc.constant dense<1.000000e+00> : tensor<2x3xf16>
//       CHECK:   %[[Y:.+]] = tcc.div %[[ONE]], %[[X]] : tensor<2x3xf16>
//       CHECK:   return %[[Y]]
//   CHECK-NOT:   tcc.reciprocal
func.func @reciprocal(%x: tensor<2x3xf16>) -> tensor<2x3xf16> {
  %0 = tcc.reciprocal %x : tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// Tests that an expansion of constant operands is not folded away: the pass
// shows what it rewrote and leaves folding to the canonicalizer.
// CHECK-LABEL: func.func @no_folding
//       CHECK:   %[[ONE:.+]] = tcc.constant dense<1.000000e+00> : tensor<4xf32>
//       CHECK:   %[[Y:.+]] = tcc.div %[[ONE]], %[[ONE]] : tensor<4xf32>
//       CHECK:   return %[[Y]]
func.func @no_folding() -> tensor<4xf32> {
  %c = tcc.constant dense<1.0> : tensor<4xf32>
  %0 = tcc.reciprocal %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that ops that are not composites, including those the expansions
// produce, are left as they are.
// CHECK-LABEL: func.func @primitives_untouched
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//  CHECK-NEXT:   %[[E:.+]] = tcc.exp %[[X]] : tensor<4xf32>
//  CHECK-NEXT:   %[[S:.+]] = tcc.sigmoid %[[E]] : tensor<4xf32>
//  CHECK-NEXT:   %[[T:.+]] = tcc.tanh %[[S]] : tensor<4xf32>
//  CHECK-NEXT:   %[[R:.+]] = tcc.relu %[[T]] : tensor<4xf32>
//  CHECK-NEXT:   %[[Q:.+]] = tcc.sqrt %[[R]] : tensor<4xf32>
//  CHECK-NEXT:   %[[D:.+]] = tcc.div %[[Q]], %[[X]] : tensor<4xf32>
//  CHECK-NEXT:   %[[C:.+]] = tcc.clamp %[[D]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4xf32>
//  CHECK-NEXT:   return %[[C]]
func.func @primitives_untouched(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.exp %x : tensor<4xf32>
  %1 = tcc.sigmoid %0 : tensor<4xf32>
  %2 = tcc.tanh %1 : tensor<4xf32>
  %3 = tcc.relu %2 : tensor<4xf32>
  %4 = tcc.sqrt %3 : tensor<4xf32>
  %5 = tcc.div %4, %x : tensor<4xf32>
  %6 = tcc.clamp %5 {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  return %6 : tensor<4xf32>
}
