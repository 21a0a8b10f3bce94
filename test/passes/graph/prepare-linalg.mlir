// RUN: tcc-opt --split-input-file --tcc-prepare-linalg %s | FileCheck %s

// A 2-D transpose feeding a matmul becomes the matmul's indexing map: the
// weight is read transposed, never copied.
// CHECK-DAG: #[[MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @transposed_weight
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul indexing_maps = [#[[MK]], #[[NK]], #[[MN]]] ins(%arg0, %arg1 : tensor<4x10xf32>, tensor<8x10xf32>)
func.func @transposed_weight(%x: tensor<4x10xf32>, %w: tensor<8x10xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<10x8xf32>
  %wt = linalg.transpose ins(%w : tensor<8x10xf32>) outs(%e : tensor<10x8xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<4x10xf32>, tensor<10x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Both operands transposed.
// CHECK-DAG: #[[KM:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @both_transposed
// CHECK: linalg.matmul indexing_maps = [#[[KM]], #[[NK]], #{{.*}}] ins(%arg0, %arg1 : tensor<10x4xf32>, tensor<8x10xf32>)
func.func @both_transposed(%a: tensor<10x4xf32>, %b: tensor<8x10xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e1 = tensor.empty() : tensor<4x10xf32>
  %at = linalg.transpose ins(%a : tensor<10x4xf32>) outs(%e1 : tensor<4x10xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<10x8xf32>
  %bt = linalg.transpose ins(%b : tensor<8x10xf32>) outs(%e2 : tensor<10x8xf32>) permutation = [1, 0]
  %y = linalg.matmul ins(%at, %bt : tensor<4x10xf32>, tensor<10x8xf32>) outs(%o : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Elementwise named ops become generics (for fusion); matmuls, convolutions
// and fills keep their names (for the library calls).
// CHECK-LABEL: func.func @named_ops
// CHECK: linalg.fill
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: linalg.batch_matmul
// CHECK: linalg.generic
// CHECK-NOT: linalg.add
// CHECK-NOT: linalg.transpose
func.func @named_ops(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>)
    -> (tensor<1x3x3x3xf32>, tensor<2x3x5xf32>) {
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x3x3x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) outs(%f : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %ob = tensor.empty() : tensor<2x3x5xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%ob : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %s = linalg.add ins(%m, %m : tensor<2x3x5xf32>, tensor<2x3x5xf32>) outs(%ob : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %c, %s : tensor<1x3x3x3xf32>, tensor<2x3x5xf32>
}

// -----

// A transposed product is computed in the transposed layout instead: the
// weight gradient X^T G of y = x W^T, transposed into W's layout, becomes
// G^T X, so that the optimizer reads it contiguously.
// CHECK-DAG: #[[KM:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @transposed_product
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x10xf32>)
// CHECK: %[[G:.*]] = linalg.matmul indexing_maps = [#[[KM]], #[[KN]], #[[MN]]] ins(%arg1, %arg0 : tensor<4x8xf32>, tensor<4x10xf32>) outs(%[[F]] : tensor<8x10xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[G]]
func.func @transposed_product(%x: tensor<4x10xf32>, %g: tensor<4x8xf32>) -> tensor<8x10xf32> {
  %e = tensor.empty() : tensor<10x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x10xf32>) outs(%e : tensor<10x4xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<10x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<10x8xf32>) -> tensor<10x8xf32>
  %wt = linalg.matmul ins(%xt, %g : tensor<10x4xf32>, tensor<4x8xf32>) outs(%f : tensor<10x8xf32>) -> tensor<10x8xf32>
  %e2 = tensor.empty() : tensor<8x10xf32>
  %w = linalg.transpose ins(%wt : tensor<10x8xf32>) outs(%e2 : tensor<8x10xf32>) permutation = [1, 0]
  return %w : tensor<8x10xf32>
}

// -----

// Not when the product has another use (it is needed in its own layout too)
// or accumulates into a tensor that is not a fill.
// CHECK-LABEL: func.func @transposed_product_kept
// CHECK: %[[P:.*]] = linalg.matmul ins(%arg0, %arg1 : tensor<10x4xf32>, tensor<4x8xf32>) outs(%arg2 : tensor<10x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<10x8xf32>) outs(%{{.*}} : tensor<8x10xf32>)
func.func @transposed_product_kept(%a: tensor<10x4xf32>, %b: tensor<4x8xf32>, %c: tensor<10x8xf32>) -> tensor<8x10xf32> {
  %p = linalg.matmul ins(%a, %b : tensor<10x4xf32>, tensor<4x8xf32>) outs(%c : tensor<10x8xf32>) -> tensor<10x8xf32>
  %e2 = tensor.empty() : tensor<8x10xf32>
  %t = linalg.transpose ins(%p : tensor<10x8xf32>) outs(%e2 : tensor<8x10xf32>) permutation = [1, 0]
  return %t : tensor<8x10xf32>
}

// -----

// Attention's transposed operands: K^T (the head split's transpose with the
// matrices' dimensions swapped) and P^T (the scores swapped), collapsed over
// batch and heads, become batch_matmul indexing maps; K's head split is then
// a transpose of its own (shared with Q's and V's by CSE), P is read as is.
// CHECK-DAG: #[[BMK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[BNK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[BKM:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[BMN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @attention_operands
// CHECK: %[[KH:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<2x8x3x4xf32>) outs(%{{.*}} : tensor<2x3x8x4xf32>)
// CHECK: %[[K3:.*]] = tensor.collapse_shape %[[KH]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x8x4xf32> into tensor<6x8x4xf32>
// CHECK: linalg.batch_matmul indexing_maps = [#[[BMK]], #[[BNK]], #[[BMN]]] ins(%arg0, %[[K3]] : tensor<6x8x4xf32>, tensor<6x8x4xf32>)
// CHECK: %[[P3:.*]] = tensor.collapse_shape %arg2 {{\[\[}}0, 1], [2], [3]] : tensor<2x3x8x8xf32> into tensor<6x8x8xf32>
// CHECK: linalg.batch_matmul indexing_maps = [#[[BKM]], #[[BNK]], #[[BMN]]] ins(%[[P3]], %arg3 : tensor<6x8x8xf32>, tensor<6x4x8xf32>)
func.func @attention_operands(%q: tensor<6x8x4xf32>, %k: tensor<2x8x3x4xf32>, %p: tensor<2x3x8x8xf32>,
                              %g: tensor<6x4x8xf32>) -> (tensor<6x8x8xf32>, tensor<6x8x4xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4x8xf32>
  %kt = linalg.transpose ins(%k : tensor<2x8x3x4xf32>) outs(%e : tensor<2x3x4x8xf32>) permutation = [0, 2, 3, 1]
  %kt3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x3x4x8xf32> into tensor<6x4x8xf32>
  %o = tensor.empty() : tensor<6x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<6x8x8xf32>) -> tensor<6x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt3 : tensor<6x8x4xf32>, tensor<6x4x8xf32>) outs(%f : tensor<6x8x8xf32>) -> tensor<6x8x8xf32>
  %e2 = tensor.empty() : tensor<2x3x8x8xf32>
  %pt = linalg.transpose ins(%p : tensor<2x3x8x8xf32>) outs(%e2 : tensor<2x3x8x8xf32>) permutation = [0, 1, 3, 2]
  %pt3 = tensor.collapse_shape %pt [[0, 1], [2], [3]] : tensor<2x3x8x8xf32> into tensor<6x8x8xf32>
  %gt = tensor.empty() : tensor<6x8x4xf32>
  %e3 = tensor.empty() : tensor<6x8x4xf32>
  %g2 = linalg.transpose ins(%g : tensor<6x4x8xf32>) outs(%e3 : tensor<6x8x4xf32>) permutation = [0, 2, 1]
  %o2 = tensor.empty() : tensor<6x8x4xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%o2 : tensor<6x8x4xf32>) -> tensor<6x8x4xf32>
  %dv = linalg.batch_matmul ins(%pt3, %g2 : tensor<6x8x8xf32>, tensor<6x8x4xf32>) outs(%f2 : tensor<6x8x4xf32>) -> tensor<6x8x4xf32>
  return %s, %dv : tensor<6x8x8xf32>, tensor<6x8x4xf32>
}

// -----

// The transpose of a sum of transposable products (a recurrent weight's
// gradient: one product per time step) moves to the terms, where each
// product is computed transposed: no strided read of the terms. (Sums come
// out of the lowering as generics.)
// CHECK-LABEL: func.func @transposed_sum
// CHECK-COUNT-2: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%arg1, %arg0 : tensor<4x8xf32>, tensor<4x10xf32>) outs(%{{.*}} : tensor<8x10xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x10xf32>, tensor<8x10xf32>) outs(%{{.*}} : tensor<8x10xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @transposed_sum(%x: tensor<4x10xf32>, %g: tensor<4x8xf32>) -> tensor<8x10xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x10xf32>) outs(%e : tensor<10x4xf32>) permutation = [1, 0]
  %o1 = tensor.empty() : tensor<10x8xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%o1 : tensor<10x8xf32>) -> tensor<10x8xf32>
  %p1 = linalg.matmul ins(%xt, %g : tensor<10x4xf32>, tensor<4x8xf32>) outs(%f1 : tensor<10x8xf32>) -> tensor<10x8xf32>
  %o2 = tensor.empty() : tensor<10x8xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%o2 : tensor<10x8xf32>) -> tensor<10x8xf32>
  %p2 = linalg.matmul ins(%xt, %g : tensor<10x4xf32>, tensor<4x8xf32>) outs(%f2 : tensor<10x8xf32>) -> tensor<10x8xf32>
  %o3 = tensor.empty() : tensor<10x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p1, %p2 : tensor<10x8xf32>, tensor<10x8xf32>) outs(%o3 : tensor<10x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<10x8xf32>
  %e2 = tensor.empty() : tensor<8x10xf32>
  %w = linalg.transpose ins(%s : tensor<10x8xf32>) outs(%e2 : tensor<8x10xf32>) permutation = [1, 0]
  return %w : tensor<8x10xf32>
}

// -----

// A result read only through slices that do not overlap is computed slice
// by slice: attention's projection x W^T + b read as Q, K and V becomes
// three products on row slices of W (each into its own empty tensor, its
// own fill), three bias adds on slices of b, through the reshape into
// [batch, tokens, features]; the whole [4, 2, 12] result is never made.
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#row = affine_map<(d0, d1, d2) -> (d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @projection_slices
//   CHECK-NOT: tensor<8x12xf32>
//   CHECK-NOT: tensor<4x2x12xf32>
//       CHECK: %[[W0:.*]] = tensor.extract_slice %arg1[0, 0] [4, 5] [1, 1]
//       CHECK: linalg.fill {{.*}} -> tensor<8x4xf32>
//       CHECK: linalg.matmul {{.*}} ins(%arg0, %[[W0]] : tensor<8x5xf32>, tensor<4x5xf32>)
//       CHECK: tensor.extract_slice %arg1[4, 0] [4, 5] [1, 1]
//       CHECK: linalg.matmul
//       CHECK: tensor.extract_slice %arg1[8, 0] [4, 5] [1, 1]
//       CHECK: linalg.matmul
//       CHECK: return {{.*}} : tensor<4x2x4xf32>, tensor<4x2x4xf32>, tensor<4x2x4xf32>
func.func @projection_slices(%x: tensor<8x5xf32>, %w: tensor<12x5xf32>, %b: tensor<12xf32>)
    -> (tensor<4x2x4xf32>, tensor<4x2x4xf32>, tensor<4x2x4xf32>) {
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<8x12xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<8x12xf32>) -> tensor<8x12xf32>
  %p = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %w : tensor<8x5xf32>, tensor<12x5xf32>) outs(%f : tensor<8x12xf32>) -> tensor<8x12xf32>
  %e = tensor.expand_shape %p [[0, 1], [2]] output_shape [4, 2, 12] : tensor<8x12xf32> into tensor<4x2x12xf32>
  %o3 = tensor.empty() : tensor<4x2x12xf32>
  %y = linalg.generic {indexing_maps = [#id3, #row, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %b : tensor<4x2x12xf32>, tensor<12xf32>) outs(%o3 : tensor<4x2x12xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x2x12xf32>
  %q = tensor.extract_slice %y[0, 0, 0] [4, 2, 4] [1, 1, 1] : tensor<4x2x12xf32> to tensor<4x2x4xf32>
  %k = tensor.extract_slice %y[0, 0, 4] [4, 2, 4] [1, 1, 1] : tensor<4x2x12xf32> to tensor<4x2x4xf32>
  %v = tensor.extract_slice %y[0, 0, 8] [4, 2, 4] [1, 1, 1] : tensor<4x2x12xf32> to tensor<4x2x4xf32>
  return %q, %k, %v : tensor<4x2x4xf32>, tensor<4x2x4xf32>, tensor<4x2x4xf32>
}

// -----

// Slices that overlap, or a result with another reader, keep the op whole.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @kept_whole
//       CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x12xf32>)
//       CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x12xf32>)
func.func @kept_whole(%x: tensor<4x12xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x12xf32>) {
  %o = tensor.empty() : tensor<4x12xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x12xf32>) outs(%o : tensor<4x12xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x12xf32>
  %a = tensor.extract_slice %y[0, 0] [4, 8] [1, 1] : tensor<4x12xf32> to tensor<4x8xf32>
  %b = tensor.extract_slice %y[0, 4] [4, 8] [1, 1] : tensor<4x12xf32> to tensor<4x8xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x12xf32>) outs(%o : tensor<4x12xf32>) {
  ^bb0(%c: f32, %out: f32):
    %s = arith.addf %c, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x12xf32>
  %c = tensor.extract_slice %u[0, 0] [4, 4] [1, 1] : tensor<4x12xf32> to tensor<4x4xf32>
  return %a, %b, %c, %u : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x12xf32>
}
