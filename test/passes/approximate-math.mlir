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
