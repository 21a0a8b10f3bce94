// RUN: tcc-opt --split-input-file --tcc-mark-library-calls=interleaved-heads=true %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-mark-library-calls %s | FileCheck %s --check-prefix=OFF

// Attention heads as strides (interleaved-heads: CPU artifacts). The
// lowering moves heads between [B, T, H, D] and [B, H, T, D] with copies
// around batched products; a batched call reads and writes the [B, T, H, D]
// buffers instead (abi.h's HEADS and INTERLEAVED, bits A = 1, B = 2, C = 4)
// and the copies go. Here B = 2, H = 3, T = 5, D = 4.

// A from a copy of a [2, 5, 3, 4] buffer, C read only by a copy into one:
// the call reads %s and writes %y, which is allocated after the matmul in
// the input and must come before the call (the copy was its first writer).
#in = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func private @tcc_library_call_0(memref<2x5x3x4xf32>, memref<6x4x5xf32>, memref<2x5x3x5xf32>)
// CHECK-LABEL: func.func @heads
//  CHECK-SAME: (%[[S:.*]]: memref<2x5x3x4xf32>, %[[K:.*]]: memref<6x4x5xf32>)
//       CHECK: %[[Y:.*]] = memref.alloc() {{.*}} : memref<2x5x3x5xf32>
//       CHECK: call @tcc_library_call_0(%[[S]], %[[K]], %[[Y]]) {tcc.library_call = {kind = 1 : i32, params = array<i64: 6, 5, 5, 4, 0, 0, 0, 0, 0, 0, 3, 5>}}
//   CHECK-NOT: linalg.generic
//       CHECK: return %[[Y]]
// OFF-LABEL: func.func @heads
//       OFF: linalg.generic
//       OFF: call @tcc_library_call_0({{.*}}) {tcc.library_call = {kind = 1 : i32, params = array<i64: 6, 5, 5, 4, 0, 0, 0, 0>}}
//       OFF: linalg.generic
func.func @heads(%s: memref<2x5x3x4xf32>, %k: memref<6x4x5xf32>) -> memref<2x5x3x5xf32> {
  %z = arith.constant 0.0 : f32
  %q = memref.alloc() {alignment = 64 : i64} : memref<2x3x5x4xf32>
  linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : memref<2x5x3x4xf32>) outs(%q : memref<2x3x5x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %qc = memref.collapse_shape %q [[0, 1], [2], [3]] : memref<2x3x5x4xf32> into memref<6x5x4xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<6x5x5xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<6x5x5xf32>)
  linalg.batch_matmul ins(%qc, %k : memref<6x5x4xf32>, memref<6x4x5xf32>) outs(%c : memref<6x5x5xf32>)
  %ce = memref.expand_shape %c [[0, 1], [2], [3]] output_shape [2, 3, 5, 5] : memref<6x5x5xf32> into memref<2x3x5x5xf32>
  %y = memref.alloc() {alignment = 64 : i64} : memref<2x5x3x5xf32>
  linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ce : memref<2x3x5x5xf32>) outs(%y : memref<2x5x3x5xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return %y : memref<2x5x3x5xf32>
}

// -----

// The result copied into [B, cols, H, rows] (heads and the matrix
// transposed, as a key gradient Q^T dS comes out): the call computes
// C^T = B^T A^T, A and B swapped with their transposes flipped (trans_a 1,
// trans_b 1), M and N swapped, and writes the copy's buffer; its A is then
// the interleaved source, stored transposed. A copy that two products read
// stays until the second one has taken its source too.
#in = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @transposed
//  CHECK-SAME: (%[[S:.*]]: memref<2x5x3x4xf32>, %[[A:.*]]: memref<6x4x5xf32>, %[[W:.*]]: memref<6x4x4xf32>)
//       CHECK: %[[Y:.*]] = memref.alloc() {{.*}} : memref<2x4x3x4xf32>
//       CHECK: call @tcc_library_call_0(%[[S]], %[[A]], %[[Y]]) {tcc.library_call = {kind = 1 : i32, params = array<i64: 6, 4, 4, 5, 1, 1, 0, 0, 0, 0, 3, 5>}}
//       CHECK: call @tcc_library_call_1(%[[S]], %[[W]], %{{.*}}) {tcc.library_call = {kind = 1 : i32, params = array<i64: 6, 5, 4, 4, 0, 0, 0, 0, 0, 0, 3, 1>}}
//   CHECK-NOT: linalg.generic
func.func @transposed(%s: memref<2x5x3x4xf32>, %a: memref<6x4x5xf32>, %w: memref<6x4x4xf32>)
    -> (memref<2x4x3x4xf32>, memref<6x5x4xf32>) {
  %z = arith.constant 0.0 : f32
  %q = memref.alloc() {alignment = 64 : i64} : memref<2x3x5x4xf32>
  linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : memref<2x5x3x4xf32>) outs(%q : memref<2x3x5x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  %qc = memref.collapse_shape %q [[0, 1], [2], [3]] : memref<2x3x5x4xf32> into memref<6x5x4xf32>
  // [6, 4, 4] = A [6, 4, 5] x Q [6, 5, 4]
  %c = memref.alloc() {alignment = 64 : i64} : memref<6x4x4xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<6x4x4xf32>)
  linalg.batch_matmul ins(%a, %qc : memref<6x4x5xf32>, memref<6x5x4xf32>) outs(%c : memref<6x4x4xf32>)
  %ce = memref.expand_shape %c [[0, 1], [2], [3]] output_shape [2, 3, 4, 4] : memref<6x4x4xf32> into memref<2x3x4x4xf32>
  %y = memref.alloc() {alignment = 64 : i64} : memref<2x4x3x4xf32>
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ce : memref<2x3x4x4xf32>) outs(%y : memref<2x4x3x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  // [6, 5, 4] = Q [6, 5, 4] x W [6, 4, 4]
  %d = memref.alloc() {alignment = 64 : i64} : memref<6x5x4xf32>
  linalg.fill ins(%z : f32) outs(%d : memref<6x5x4xf32>)
  linalg.batch_matmul ins(%qc, %w : memref<6x5x4xf32>, memref<6x4x4xf32>) outs(%d : memref<6x5x4xf32>)
  return %y, %d : memref<2x4x3x4xf32>, memref<6x5x4xf32>
}

// -----

// What stays copies: a source whose rows are not head-sized (a slice of a
// [B, T, 3 H, D] projection: oneDNN would fall back to a slow kernel), a
// source written between its copy and the product, and a result with
// another reader.
#in = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @kept
//       CHECK: linalg.generic
//       CHECK: linalg.generic
//       CHECK: call @tcc_library_call_0({{.*}}) {tcc.library_call = {kind = 1 : i32, params = array<i64: 6, 5, 5, 4, 0, 0, 0, 0>}}
//       CHECK: call @tcc_library_call_1({{.*}}) {tcc.library_call = {kind = 1 : i32, params = array<i64: 6, 5, 5, 4, 0, 0, 0, 0>}}
//       CHECK: linalg.generic
func.func @kept(%qkv: memref<2x5x9x4xf32>, %k: memref<6x4x5xf32>, %s: memref<2x5x3x4xf32>)
    -> (memref<2x5x3x5xf32>, memref<6x5x5xf32>, memref<6x5x5xf32>) {
  %z = arith.constant 0.0 : f32
  %slice = memref.subview %qkv[0, 0, 0, 0] [2, 5, 3, 4] [1, 1, 1, 1] : memref<2x5x9x4xf32> to memref<2x5x3x4xf32, strided<[180, 36, 4, 1]>>
  %q = memref.alloc() {alignment = 64 : i64} : memref<2x3x5x4xf32>
  linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%slice : memref<2x5x3x4xf32, strided<[180, 36, 4, 1]>>) outs(%q : memref<2x3x5x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %p = memref.alloc() {alignment = 64 : i64} : memref<2x3x5x4xf32>
  linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : memref<2x5x3x4xf32>) outs(%p : memref<2x3x5x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.fill ins(%z : f32) outs(%s : memref<2x5x3x4xf32>)
  %qc = memref.collapse_shape %q [[0, 1], [2], [3]] : memref<2x3x5x4xf32> into memref<6x5x4xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<6x5x5xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<6x5x5xf32>)
  linalg.batch_matmul ins(%qc, %k : memref<6x5x4xf32>, memref<6x4x5xf32>) outs(%c : memref<6x5x5xf32>)
  %pc = memref.collapse_shape %p [[0, 1], [2], [3]] : memref<2x3x5x4xf32> into memref<6x5x4xf32>
  %d = memref.alloc() {alignment = 64 : i64} : memref<6x5x5xf32>
  linalg.fill ins(%z : f32) outs(%d : memref<6x5x5xf32>)
  linalg.batch_matmul ins(%pc, %k : memref<6x5x4xf32>, memref<6x4x5xf32>) outs(%d : memref<6x5x5xf32>)
  %ce = memref.expand_shape %c [[0, 1], [2], [3]] output_shape [2, 3, 5, 5] : memref<6x5x5xf32> into memref<2x3x5x5xf32>
  %y = memref.alloc() {alignment = 64 : i64} : memref<2x5x3x5xf32>
  linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ce : memref<2x3x5x5xf32>) outs(%y : memref<2x5x3x5xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return %y, %c, %d : memref<2x5x3x5xf32>, memref<6x5x5xf32>, memref<6x5x5xf32>
}
