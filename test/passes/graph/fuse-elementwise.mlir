// RUN: tcc-opt --split-input-file --tcc-fuse-elementwise %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-fuse-elementwise="sibling-reductions=false" %s | FileCheck %s --check-prefix=NOSIB
// Nothing expensive is computed twice: the one division and the one
// negation of the inputs below are still one each after fusion.
// RUN: tcc-opt --split-input-file --tcc-fuse-elementwise %s | grep -c "arith.divf" | FileCheck %s --check-prefix=ONCE
// RUN: tcc-opt --split-input-file --tcc-fuse-elementwise %s | grep -c "arith.negf" | FileCheck %s --check-prefix=ONCE
// ONCE: {{^}}1{{$}}
// A fused kernel holds at most max-kernel-size body ops (and operands).
// RUN: tcc-opt --split-input-file --tcc-fuse-elementwise="max-kernel-size=3" %s | FileCheck %s --check-prefix=BOUND

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// A chain of elementwise generics becomes one generic.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.maximumf %x, %z : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// An expensive producer with two consumers is computed once: the two
// consumers are siblings (both read it) and merge into one kernel with two
// results, into which the producer, now with one use, fuses.
// CHECK-LABEL: func.func @two_uses
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK-NOT: math.exp
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK-NOT: linalg.generic
func.func @two_uses(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.addf %v, %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.mulf %v, %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %y, %z : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A named matmul next to reshapes and a bias add stays a named matmul (the
// library call needs it): no reshape is propagated through it, nothing fuses
// into it.
// CHECK-LABEL: func.func @matmul_bias
// CHECK: linalg.matmul
// CHECK: linalg.generic
func.func @matmul_bias(%a: tensor<3x6xf32>, %b: tensor<6x4xf32>, %c: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %m = linalg.matmul ins(%a, %b : tensor<3x6xf32>, tensor<6x4xf32>) outs(%f : tensor<3x4xf32>) -> tensor<3x4xf32>
  %me = tensor.expand_shape %m [[0], [1, 2]] output_shape [3, 1, 4] : tensor<3x4xf32> into tensor<3x1x4xf32>
  %e3 = tensor.empty() : tensor<3x1x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%me, %c : tensor<3x1x4xf32>, tensor<1x4xf32>) outs(%e3 : tensor<3x1x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<3x1x4xf32>
  %r = tensor.collapse_shape %s [[0], [1, 2]] : tensor<3x1x4xf32> into tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// A cheap producer (one add of a broadcast bias) with two consumers is
// recomputed in each: reading its two inputs twice moves less memory than
// writing its result once and reading it twice. The two consumers then read
// the same inputs and merge as siblings (one kernel; CSE later shares the
// add).
// CHECK-LABEL: func.func @cheap_two_uses
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: math.{{exp|tanh}}
// CHECK: arith.addf
// CHECK: math.{{exp|tanh}}
// CHECK-NOT: linalg.generic
func.func @cheap_two_uses(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %t = arith.addf %v, %w : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %y, %z : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Must not duplicate: a cheap producer of three inputs with two consumers
// (2 x 3 reads > 3 reads + 1 write + 2 reads), a cheap producer whose
// result is also returned, and a division (not cheap). They all end in one
// multi-output kernel (siblings and multi-use producers), each computed
// once (the ONCE counts above: one division, one negation).
// CHECK-LABEL: func.func @no_duplication
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
func.func @no_duplication(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %three = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b, %c : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%u: f32, %v: f32, %w: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    %t = arith.addf %s, %w : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %p1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%three : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %p2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%three : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %ret = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.negf %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %q1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ret : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %div = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %t = arith.divf %v, %w : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%div : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%div : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %p1, %p2, %ret, %q1, %r1, %r2, %three : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// A cheap rounding of an f32 product to bf16 (plus a bias) read by a kernel
// right after the product and again by a later one (as the backward pass
// reads a forward activation) is not recomputed in the later one: that
// would keep the f32 product (twice the bytes) alive until then. The first
// kernel writes the 16-bit value too (multi-output), and the later kernel
// reads it.
// CHECK-LABEL: func.func @rounding_kept
// CHECK: %[[P:.+]] = linalg.matmul
// CHECK: %[[K:.+]]:2 = linalg.generic {{.*}} ins(%[[P]], %{{.+}} : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: %[[Q:.+]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[K]]#{{[01]}}, %[[Q]] : tensor<4x8xbf16>, tensor<4x8xf32>)
// The same in f32: the sum is no smaller than the product, so it is
// recomputed from the product and the bias in the later kernel (the
// traffic rule alone).
// CHECK-LABEL: func.func @same_width_recomputed
// CHECK: %[[P:.+]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[P]], %{{.+}} : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: %[[Q:.+]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[P]], %{{.+}}, %[[Q]] : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>)
func.func @rounding_kept(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %bias: tensor<8xf32>,
                         %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %eh = tensor.empty() : tensor<4x8xbf16>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<4x8xf32>, tensor<8xf32>) outs(%eh : tensor<4x8xbf16>) {
  ^bb0(%v: f32, %c: f32, %o: bf16):
    %vh = arith.truncf %v : f32 to bf16
    %ch = arith.truncf %c : f32 to bf16
    %t = arith.addf %vh, %ch : bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4x8xbf16>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %x = arith.extf %v : bf16 to f32
    %t = math.exp %x : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = linalg.matmul ins(%y, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r, %q : tensor<4x8xbf16>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: bf16, %g: f32, %o: f32):
    %x = arith.extf %v : bf16 to f32
    %t = arith.mulf %x, %g : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}
func.func @same_width_recomputed(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %bias: tensor<8xf32>,
                                 %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %t = arith.addf %v, %c : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = linalg.matmul ins(%y, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r, %q : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %g: f32, %o: f32):
    %t = arith.mulf %v, %g : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#rows = affine_map<(d0, d1) -> (d0)>

// Multi-output fusion: an expensive producer whose value is also returned
// fuses into its elementwise consumer; the fused kernel writes both.
// CHECK-LABEL: func.func @multi_use_producer
// CHECK: %[[F:.*]]:2 = linalg.generic
// CHECK: math.exp
// CHECK-NOT: math.exp
// CHECK: return %[[F]]#
// Must not: the producer's other use (a reduction) comes before the
// consumer, and a consumer reading the producer transposed.
// CHECK-LABEL: func.func @multi_use_not
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: linalg.generic
func.func @multi_use_producer(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.mulf %v, %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %y, %x : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @multi_use_not(%a: tensor<4x8xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %et = tensor.empty() : tensor<8x4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.addf %acc, %v : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.log %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %x2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %z = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x2 : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.sqrt %v : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %s, %y, %z, %z : tensor<4xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>

// Sibling reductions (a layer norm's sum and sum of squares over the same
// rows) become one kernel with two results; with sibling-reductions=false
// (CUDA) they stay apart.
// CHECK-LABEL: func.func @sibling_reductions
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK-NOT: linalg.generic
// NOSIB-LABEL: func.func @sibling_reductions
// NOSIB-COUNT-2: linalg.generic
func.func @sibling_reductions(%a: tensor<4x8xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.addf %acc, %v : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %q = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %t = arith.addf %acc, %sq : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %s, %q : tensor<4xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#rows = affine_map<(d0, d1) -> (d0)>

// Must not merge siblings: the first one's result is read before the
// second (the merged op could not take the second's place), and siblings
// that walk the innermost loop differently (one reads transposed: merged,
// neither would vectorize).
// CHECK-LABEL: func.func @siblings_not
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: linalg.generic
func.func @siblings_not(%a: tensor<8x8xf32>, %init: tensor<8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = tensor.empty() : tensor<8x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.addf %acc, %v : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  %z = linalg.generic {indexing_maps = [#id, #tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %t = arith.subf %v, %w : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  return %x, %r, %y, %z : tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A chain of four one-op generics: one kernel, or, with at most three body
// ops (and operands) per kernel, two: the last three ops fuse (the greedy
// driver fuses from the end of the chain), the first stays alone.
// CHECK-LABEL: func.func @bounded_chain
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// BOUND-LABEL: func.func @bounded_chain
// BOUND: linalg.generic
// BOUND-NEXT: ^bb0
// BOUND-NEXT: math.absf
// BOUND-NEXT: linalg.yield
// BOUND: linalg.generic
// BOUND: math.exp
// BOUND-NEXT: arith.addf
// BOUND-NEXT: arith.mulf
// BOUND-NOT: linalg.generic
func.func @bounded_chain(%a: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.absf %x : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%0 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.exp %x : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%1 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.addf %x, %x : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%2 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.mulf %x, %x : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %3 : tensor<8xf32>
}

// -----

// Tests that a producer that reads a parameter does not fuse into a
// consumer after the parameter's in-place update (the op computing the
// tcc.update result, which bufferization writes over the parameter): the
// fused kernel would read the new value. (A value recomputed right before
// its backward reader, tcc-rematerialize, sits so.)
#id1 = affine_map<(d0) -> (d0)>
// The product may join the update's own kernel (which reads each element
// before it writes it); the exponential stays a kernel of its own after it.
// CHECK-LABEL: func.func @read_before_update
// BOUND-LABEL: func.func @read_before_update
//       CHECK:   %[[U:.+]]:2 = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<8xf32>, tensor<8xf32>)
//       CHECK:   arith.mulf
//       CHECK:   linalg.generic {{.*}} ins(%[[U]]#0 : tensor<8xf32>)
//   CHECK-NOT:   arith.mulf
//       CHECK:   math.exp
func.func @read_before_update(%w: tensor<8xf32> {tcc.param = "w"}, %g: tensor<8xf32> {tcc.input = "g"})
    -> (tensor<8xf32> {tcc.output = "y"}, tensor<8xf32> {tcc.update = "w"}) {
  %e = tensor.empty() : tensor<8xf32>
  %p = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%w : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.mulf %x, %x : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %u = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %t = arith.subf %x, %d : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%p : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.exp %x : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %y, %u : tensor<8xf32>, tensor<8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// A 16-bit product's rounding stays its own op, so that the library call
// can write the rounded result itself (tcc-mark-library-calls); its readers
// (a bias add, the backward) fuse with each other, reading the rounded value.
// CHECK-LABEL: func.func @product_rounding
//       CHECK:   %[[C:.+]] = linalg.matmul
//       CHECK:   %[[Y:.+]] = linalg.generic {{.*}} ins(%[[C]] : tensor<4x8xf32>)
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:     arith.truncf
//  CHECK-NEXT:     linalg.yield
//       CHECK:   linalg.generic {{.*}} ins(%[[Y]], %arg2 : tensor<4x8xbf16>, tensor<8xbf16>)
//       CHECK:   return
func.func @product_rounding(%a: tensor<4x16xbf16>, %b: tensor<16x8xbf16>, %bias: tensor<8xbf16>)
    -> tensor<4x8xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = linalg.matmul ins(%a, %b : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e16 = tensor.empty() : tensor<4x8xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<4x8xf32>) outs(%e16 : tensor<4x8xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %z = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %bias : tensor<4x8xbf16>, tensor<8xbf16>) outs(%e16 : tensor<4x8xbf16>) {
  ^bb0(%x: bf16, %v: bf16, %o: bf16):
    %x32 = arith.extf %x : bf16 to f32
    %v32 = arith.extf %v : bf16 to f32
    %s = arith.addf %x32, %v32 : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  return %z : tensor<4x8xbf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Sums that something besides their rounding reads are not kept apart: the
// rounding fuses into its reader as any elementwise op does.
// CHECK-LABEL: func.func @product_sums_read_twice
//       CHECK:   %[[C:.+]] = linalg.matmul
//       CHECK:   linalg.generic {{.*}} ins(%[[C]] : tensor<4x8xf32>)
//       CHECK:     arith.truncf
//       CHECK:     arith.extf
//       CHECK:     math.exp
//       CHECK:   return
func.func @product_sums_read_twice(%a: tensor<4x16xbf16>, %b: tensor<16x8xbf16>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = linalg.matmul ins(%a, %b : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e16 = tensor.empty() : tensor<4x8xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<4x8xf32>) outs(%e16 : tensor<4x8xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x8xbf16>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %x32 = arith.extf %x : bf16 to f32
    %t = math.exp %x32 : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %z, %c : tensor<4x8xf32>, tensor<4x8xf32>
}
