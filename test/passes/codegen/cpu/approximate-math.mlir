// RUN: tcc-opt --split-input-file --tcc-approximate-math %s | FileCheck %s

// The numeric accuracy of the approximations is test/integration/approximate-math.mlir's.

// Tests that the f32 ops on the list become polynomial arithmetic (fma
// chains, no call of libm left to block vectorization).
// CHECK-LABEL: func.func @listed_f32
//   CHECK-NOT:   math.{{exp|expm1|log|log1p|log2|tanh|erf}} {{.*}}: f32
//       CHECK:   math.fma {{.*}} : f32
//   CHECK-NOT:   math.{{exp|expm1|log|log1p|log2|tanh|erf}} {{.*}}: f32
//       CHECK:   return
func.func @listed_f32(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32) {
  %0 = math.exp %x : f32
  %1 = math.expm1 %x : f32
  %2 = math.log %x : f32
  %3 = math.log1p %x : f32
  %4 = math.log2 %x : f32
  %5 = math.tanh %x : f32
  %6 = math.erf %x : f32
  return %0, %1, %2, %3, %4, %5, %6 : f32, f32, f32, f32, f32, f32, f32
}

// -----

// Tests that exp2 is on the list but upstream has no f32 polynomial for it:
// an f32 exp2 stays, an f16 one is computed by the f32 op.
// CHECK-LABEL: func.func @exp2
//  CHECK-SAME:   (%[[X:.+]]: f32, %[[H:.+]]: f16)
//       CHECK:   %[[A:.+]] = math.exp2 %[[X]] : f32
//       CHECK:   %[[W:.+]] = arith.extf %[[H]] : f16 to f32
//       CHECK:   %[[B:.+]] = math.exp2 %[[W]] : f32
//       CHECK:   %[[R:.+]] = arith.truncf %[[B]] : f32 to f16
//       CHECK:   return %[[A]], %[[R]]
func.func @exp2(%x: f32, %h: f16) -> (f32, f16) {
  %0 = math.exp2 %x : f32
  %1 = math.exp2 %h : f16
  return %0, %1 : f32, f16
}

// -----

// Tests that vectors of f32 are approximated lane by lane, as vectors.
// CHECK-LABEL: func.func @vector_f32
//   CHECK-NOT:   math.tanh
//       CHECK:   math.fma {{.*}} : vector<8xf32>
//   CHECK-NOT:   math.tanh
//       CHECK:   return
func.func @vector_f32(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.tanh %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

// Tests that f16 is computed in f32 and rounded back.
// CHECK-LABEL: func.func @through_f32
//  CHECK-SAME:   (%[[X:.+]]: f16)
//       CHECK:   %[[W:.+]] = arith.extf %[[X]] : f16 to f32
//   CHECK-NOT:   math.erf
//       CHECK:   math.fma {{.*}} : f32
//       CHECK:   %[[R:.+]] = arith.truncf %{{.+}} : f32 to f16
//       CHECK:   return %[[R]]
func.func @through_f32(%x: f16) -> f16 {
  %0 = math.erf %x : f16
  return %0 : f16
}

// -----

// Tests that f64 keeps libm's correctly rounded functions, and that ops
// off the list (trigonometric, sqrt) are left alone in f32 too.
// CHECK-LABEL: func.func @kept
//       CHECK:   math.exp %{{.+}} : f64
//       CHECK:   math.log %{{.+}} : f64
//       CHECK:   math.sin %{{.+}} : f32
//       CHECK:   math.sqrt %{{.+}} : f32
func.func @kept(%x: f64, %y: f32) -> (f64, f64, f32, f32) {
  %0 = math.exp %x : f64
  %1 = math.log %x : f64
  %2 = math.sin %y : f32
  %3 = math.sqrt %y : f32
  return %0, %1, %2, %3 : f64, f64, f32, f32
}

// -----

// Tests tcc's erf: x clamped to [-3.92, 3.92], x P(x^2) / Q(x^2) with P of
// degree 6 and Q of degree 4 (10 fma), one division, the result clamped to
// [-1, 1]; no selects between intervals. Vectors get splat constants.
// CHECK-LABEL: func.func @rational_erf
//  CHECK-SAME:   (%[[X:.+]]: vector<8xf32>)
//   CHECK-DAG:   %[[C:.+]] = arith.constant dense<3.920000e+00> : vector<8xf32>
//   CHECK-DAG:   %[[NC:.+]] = arith.constant dense<-3.920000e+00> : vector<8xf32>
//       CHECK:   %[[LO:.+]] = arith.minimumf %[[X]], %[[C]]
//       CHECK:   %[[XC:.+]] = arith.maximumf %[[LO]], %[[NC]]
//       CHECK:   %[[T:.+]] = arith.mulf %[[XC]], %[[XC]]
// CHECK-COUNT-6:   math.fma {{.*}}, %[[T]], {{.*}} : vector<8xf32>
//       CHECK:   %[[NUM:.+]] = arith.mulf %[[XC]],
// CHECK-COUNT-4:   math.fma {{.*}}, %[[T]], {{.*}} : vector<8xf32>
//       CHECK:   %[[R:.+]] = arith.divf %[[NUM]],
//       CHECK:   %[[R1:.+]] = arith.minimumf %[[R]],
//       CHECK:   %[[R2:.+]] = arith.maximumf %[[R1]],
//   CHECK-NOT:   arith.select
//       CHECK:   return %[[R2]]
func.func @rational_erf(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.erf %x : vector<8xf32>
  return %0 : vector<8xf32>
}
