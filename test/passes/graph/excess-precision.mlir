// RUN: tcc-opt --split-input-file --tcc-excess-precision %s | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// Tests that a fused chain of bf16 ops computes in f32 and rounds once, at
// the value the kernel yields: x + b, then erf, then a product, with no
// rounding between them (truncf / extf pairs of the emulation removed).
// CHECK-LABEL: func.func @chain
//       CHECK: linalg.generic
//       CHECK: ^bb0(%[[X:.*]]: bf16, %[[B:.*]]: bf16, %{{.*}}: bf16):
//   CHECK-DAG: %[[XW:.*]] = arith.extf %[[X]] {{.*}}: bf16 to f32
//   CHECK-DAG: %[[BW:.*]] = arith.extf %[[B]] {{.*}}: bf16 to f32
//       CHECK: %[[S:.*]] = arith.addf %[[XW]], %[[BW]] : f32
//       CHECK: %[[E:.*]] = math.erf %[[S]] : f32
//       CHECK: %[[P:.*]] = arith.mulf %[[S]], %[[E]] : f32
//       CHECK: %[[R:.*]] = arith.truncf %[[P]] {{.*}}: f32 to bf16
//       CHECK: linalg.yield %[[R]] : bf16
func.func @chain(%x: tensor<64xbf16>, %b: tensor<64xbf16>) -> tensor<64xbf16> {
  %e = tensor.empty() : tensor<64xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %b : tensor<64xbf16>, tensor<64xbf16>) outs(%e : tensor<64xbf16>) {
  ^bb0(%xi: bf16, %bi: bf16, %o: bf16):
    %s = arith.addf %xi, %bi : bf16
    %f = math.erf %s : bf16
    %p = arith.mulf %s, %f : bf16
    linalg.yield %p : bf16
  } -> tensor<64xbf16>
  return %r : tensor<64xbf16>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Tests that a rounding the IR asks for (a tcc.cast, lowered to truncf)
// stays: the f32 sum is rounded to fp16 before the multiply reads it, and
// the value read by the next op of the chain is the rounded one.
// CHECK-LABEL: func.func @explicit
//       CHECK: %[[S:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
//       CHECK: %[[H:.*]] = arith.truncf %[[S]] : f32 to f16
//       CHECK: %[[HW:.*]] = arith.extf %[[H]] {{.*}}: f16 to f32
//       CHECK: arith.mulf %[[HW]], %{{.*}} : f32
func.func @explicit(%x: tensor<64xf32>, %y: tensor<64xf16>) -> tensor<64xf16> {
  %e = tensor.empty() : tensor<64xf16>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<64xf32>, tensor<64xf16>) outs(%e : tensor<64xf16>) {
  ^bb0(%xi: f32, %yi: f16, %o: f16):
    %s = arith.addf %xi, %xi : f32
    %h = arith.truncf %s : f32 to f16
    %p = arith.mulf %h, %yi : f16
    linalg.yield %p : f16
  } -> tensor<64xf16>
  return %r : tensor<64xf16>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Tests that a widening the IR asked for (an fp32-class op's cast of its
// 16-bit input) reads the rounded value: the emulated product is rounded,
// widened by the explicit extf, and only then read by exp.
// CHECK-LABEL: func.func @widened
//       CHECK: %[[M:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
//       CHECK: %[[MR:.*]] = arith.truncf %[[M]] {{.*}}: f32 to bf16
//       CHECK: %[[W:.*]] = arith.extf %[[MR]] : bf16 to f32
//       CHECK: %[[E:.*]] = math.exp %[[W]] : f32
func.func @widened(%x: tensor<64xbf16>) -> tensor<64xbf16> {
  %e = tensor.empty() : tensor<64xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xbf16>) outs(%e : tensor<64xbf16>) {
  ^bb0(%xi: bf16, %o: bf16):
    %c = arith.constant 1.250000e-01 : bf16
    %m = arith.mulf %xi, %c : bf16
    %w = arith.extf %m : bf16 to f32
    %x2 = math.exp %w : f32
    %t = arith.truncf %x2 : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64xbf16>
  return %r : tensor<64xbf16>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Tests that a 16-bit select between a product and a constant (attention's
// masked fill) selects between f32 values, so that the widened op after it
// reads the unrounded product.
// CHECK-LABEL: func.func @masked
//       CHECK: %[[M:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
//       CHECK: %[[S:.*]] = arith.select %{{.*}}, %{{.*}}, %[[M]] : f32
//       CHECK: %[[E:.*]] = math.exp %[[S]] : f32
func.func @masked(%c: tensor<64xi1>, %x: tensor<64xbf16>) -> tensor<64xbf16> {
  %e = tensor.empty() : tensor<64xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%c, %x : tensor<64xi1>, tensor<64xbf16>) outs(%e : tensor<64xbf16>) {
  ^bb0(%ci: i1, %xi: bf16, %o: bf16):
    %k = arith.constant 1.250000e-01 : bf16
    %ninf = arith.constant 0xFF80 : bf16
    %m = arith.mulf %xi, %k : bf16
    %s = arith.select %ci, %ninf, %m : bf16
    %w = arith.extf %s : bf16 to f32
    %x2 = math.exp %w : f32
    %t = arith.truncf %x2 : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64xbf16>
  return %r : tensor<64xbf16>
}

// -----

#id = affine_map<(d0) -> (d0)>

// Tests that f32 code is left as it is.
// CHECK-LABEL: func.func @fp32
//       CHECK: arith.addf %{{.*}}, %{{.*}} : f32
//   CHECK-NOT: arith.extf
//   CHECK-NOT: arith.truncf
func.func @fp32(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%xi: f32, %o: f32):
    %s = arith.addf %xi, %xi : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
