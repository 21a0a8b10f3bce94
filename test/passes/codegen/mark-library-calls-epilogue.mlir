// RUN: tcc-opt --split-input-file --tcc-mark-library-calls %s | FileCheck %s

// Epilogues: the elementwise op after a zero-filled matmul joins its library
// call (abi.h: MATMUL's last parameter, bias = 1, residual = 2, relu = 4,
// extra operands bias then residual). The forms are the ones elementwise
// fusion leaves behind dense layers in the example and parity models.

// A Gemm + Relu of inference (examples/mlp.onnxtxt's forward): the generic
// adds the bias and clamps in place, in C's own buffer. The call writes C
// with the epilogue; the fill and the generic are gone.
// CHECK-LABEL: func.func @bias_relu_in_place
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[C:.*]] = memref.alloc() {{.*}} : memref<8x16xf32>
//   CHECK-NOT:   linalg.fill
//       CHECK:   call @tcc_library_call_{{[0-9]+}}(%arg0, %arg1, %[[C]], %arg2) {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 8, 16, 4, 0, 0, 0, 5>}}
//   CHECK-NOT:   linalg.generic
//       CHECK:   return %[[C]]
func.func @bias_relu_in_place(%x: memref<8x4xf32>, %w: memref<4x16xf32>, %b: memref<16xf32>)
    -> memref<8x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%x, %w : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<8x16xf32>, memref<16xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    %1 = arith.maximumf %0, %cst : f32
    linalg.yield %1 : f32
  }
  return %c : memref<8x16xf32>
}

// -----

// A dense layer on [batch, tokens, d] (the parity GPT's QKV projection and
// MLP input): a 2-D product with a transposed weight, read through a
// reshape, plus the bias (first operand) into another buffer Y. The call
// writes Y; C, its fill and the reshape are gone.
// CHECK-LABEL: func.func @bias_through_reshape
//  CHECK-SAME:   (%[[X:.*]]: memref<8x6xf32>, %[[W:.*]]: memref<12x6xf32>, %[[B:.*]]: memref<12xf32>)
//       CHECK:   %[[Y:.*]] = memref.alloc() {{.*}} : memref<2x4x12xf32>
//       CHECK:   call @tcc_library_call_{{[0-9]+}}(%[[X]], %[[W]], %[[Y]], %[[B]]) {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 8, 12, 6, 0, 1, 0, 1>}}
//  CHECK-SAME:   (memref<8x6xf32>, memref<12x6xf32>, memref<2x4x12xf32>, memref<12xf32>) -> ()
//   CHECK-NOT:   memref.alloc
//   CHECK-NOT:   memref.expand_shape
//   CHECK-NOT:   linalg
//       CHECK:   return %[[Y]]
func.func @bias_through_reshape(%x: memref<8x6xf32>, %w: memref<12x6xf32>, %b: memref<12xf32>)
    -> memref<2x4x12xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<8x12xf32>
  %y = memref.alloc() {alignment = 64 : i64} : memref<2x4x12xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<8x12xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %w : memref<8x6xf32>, memref<12x6xf32>) outs(%c : memref<8x12xf32>)
  %v = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 4, 12] : memref<8x12xf32> into memref<2x4x12xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b, %v : memref<12xf32>, memref<2x4x12xf32>) outs(%y : memref<2x4x12xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    linalg.yield %0 : f32
  }
  return %y : memref<2x4x12xf32>
}

// -----

// The attention output projection and the MLP output of a transformer
// block: bias and the residual stream D, added as D + (bias + C).
// Operands {A, B, Y, bias, D}, epilogue 3.
// CHECK-LABEL: func.func @bias_residual
//  CHECK-SAME:   (%[[X:.*]]: memref<8x6xf32>, %[[W:.*]]: memref<6x6xf32>, %[[B:.*]]: memref<6xf32>, %[[D:.*]]: memref<2x4x6xf32>)
//       CHECK:   %[[Y:.*]] = memref.alloc() {{.*}} : memref<2x4x6xf32>
//       CHECK:   call @tcc_library_call_{{[0-9]+}}(%[[X]], %[[W]], %[[Y]], %[[B]], %[[D]]) {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 8, 6, 6, 0, 1, 0, 3>}}
//   CHECK-NOT:   linalg
func.func @bias_residual(%x: memref<8x6xf32>, %w: memref<6x6xf32>, %b: memref<6xf32>, %d: memref<2x4x6xf32>)
    -> memref<2x4x6xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<8x6xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<8x6xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %w : memref<8x6xf32>, memref<6x6xf32>) outs(%c : memref<8x6xf32>)
  %v = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 4, 6] : memref<8x6xf32> into memref<2x4x6xf32>
  %y = memref.alloc() {alignment = 64 : i64} : memref<2x4x6xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%d, %b, %v : memref<2x4x6xf32>, memref<6xf32>, memref<2x4x6xf32>) outs(%y : memref<2x4x6xf32>) {
  ^bb0(%in: f32, %in_1: f32, %in_2: f32, %out: f32):
    %0 = arith.addf %in_1, %in_2 : f32
    %1 = arith.addf %in, %0 : f32
    linalg.yield %1 : f32
  }
  return %y : memref<2x4x6xf32>
}

// -----

// Relu after the residual add (a residual block with Relu(MatMul + b + x))
// composes: epilogue 7. A batch matmul takes a bias the same way (one
// vector for every batch; here with no residual, epilogue 1).
// CHECK-LABEL: func.func @bias_residual_relu_and_batched
//       CHECK:   call @tcc_library_call_{{[0-9]+}}(%arg0, %arg1, %{{.*}}, %arg2, %arg0) {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 4, 4, 4, 0, 0, 0, 7>}}
//       CHECK:   call @tcc_library_call_{{[0-9]+}}(%arg3, %arg4, %{{.*}}, %arg2) {tcc.library_call = {kind = 1 : i32, params = array<i64: 2, 3, 4, 5, 0, 0, 0, 1>}}
//   CHECK-NOT:   linalg
func.func @bias_residual_relu_and_batched(%x: memref<4x4xf32>, %w: memref<4x4xf32>, %b: memref<4xf32>,
                                          %p: memref<2x3x5xf32>, %q: memref<2x5x4xf32>)
    -> (memref<4x4xf32>, memref<2x3x4xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<4x4xf32>)
  linalg.matmul ins(%x, %w : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  %y = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %b, %x : memref<4x4xf32>, memref<4xf32>, memref<4x4xf32>) outs(%y : memref<4x4xf32>) {
  ^bb0(%in: f32, %in_1: f32, %in_2: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    %1 = arith.addf %0, %in_2 : f32
    %2 = arith.maximumf %1, %cst : f32
    linalg.yield %2 : f32
  }
  %bc = memref.alloc() {alignment = 64 : i64} : memref<2x3x4xf32>
  linalg.fill ins(%cst : f32) outs(%bc : memref<2x3x4xf32>)
  linalg.batch_matmul ins(%p, %q : memref<2x3x5xf32>, memref<2x5x4xf32>) outs(%bc : memref<2x3x4xf32>)
  %by = memref.alloc() {alignment = 64 : i64} : memref<2x3x4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bc, %b : memref<2x3x4xf32>, memref<4xf32>) outs(%by : memref<2x3x4xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    linalg.yield %0 : f32
  }
  return %y, %by : memref<4x4xf32>, memref<2x3x4xf32>
}

// -----

// Must not fuse: the pre-activation C is read again later (a training step:
// Relu's backward recomputes the mask from C + bias), so C must still be
// computed. The call keeps epilogue 0 and the generic stays.
// CHECK-LABEL: func.func @reread_by_backward
//       CHECK:   call @tcc_library_call_{{[0-9]+}}(%arg0, %arg1, %[[C:.*]]) {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 8, 16, 4, 0, 0, 0, 0>}}
//       CHECK:   linalg.generic {{.*}} ins(%[[C]], %arg2 :
//       CHECK:   arith.maximumf
//       CHECK:   linalg.generic {{.*}} ins(%[[C]], %arg2, %arg3 :
func.func @reread_by_backward(%x: memref<8x4xf32>, %w: memref<4x16xf32>, %b: memref<16xf32>, %g: memref<8x16xf32>)
    -> (memref<8x16xf32>, memref<8x16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%x, %w : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  %y = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<8x16xf32>, memref<16xf32>) outs(%y : memref<8x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    %1 = arith.maximumf %0, %cst : f32
    linalg.yield %1 : f32
  }
  %dx = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %b, %g : memref<8x16xf32>, memref<16xf32>, memref<8x16xf32>) outs(%dx : memref<8x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %in_2: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    %1 = arith.cmpf ogt, %0, %cst : f32
    %2 = arith.select %1, %in_2, %cst : f32
    linalg.yield %2 : f32
  }
  return %y, %dx : memref<8x16xf32>, memref<8x16xf32>
}

// -----

// Must not fuse: without a zero fill the matmul accumulates onto C
// (accumulate 1), which no epilogue form covers.
// CHECK-LABEL: func.func @accumulating
//       CHECK:   call @tcc_library_call_{{[0-9]+}}({{.*}}) {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 8, 16, 4, 0, 0, 1, 0>}}
//       CHECK:   linalg.generic
func.func @accumulating(%x: memref<8x4xf32>, %w: memref<4x16xf32>, %b: memref<16xf32>, %acc: memref<8x16xf32>)
    -> memref<8x16xf32> {
  %c = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
  memref.copy %acc, %c : memref<8x16xf32> to memref<8x16xf32>
  linalg.matmul ins(%x, %w : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<8x16xf32>, memref<16xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    linalg.yield %0 : f32
  }
  return %c : memref<8x16xf32>
}

// -----

// Must not fuse: a vector along the rows (d0 -> M elements), not along N.
// CHECK-LABEL: func.func @bias_along_rows
//       CHECK:   params = array<i64: 1, 8, 8, 4, 0, 0, 0, 0>
//       CHECK:   linalg.generic
func.func @bias_along_rows(%x: memref<8x4xf32>, %w: memref<4x8xf32>, %b: memref<8xf32>) -> memref<8x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<8x8xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<8x8xf32>)
  linalg.matmul ins(%x, %w : memref<8x4xf32>, memref<4x8xf32>) outs(%c : memref<8x8xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<8x8xf32>, memref<8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    linalg.yield %0 : f32
  }
  return %c : memref<8x8xf32>
}

// -----

// Must not fuse: bodies with other ops. The GPT's inference MLP fuses the
// bias with GELU (erf form); the layer norm's backward multiplies the
// matmul's result by gamma.
// CHECK-LABEL: func.func @gelu_and_mul
//       CHECK:   params = array<i64: 1, 8, 16, 4, 0, 0, 0, 0>
//       CHECK:   math.erf
//       CHECK:   params = array<i64: 1, 8, 16, 4, 0, 0, 0, 0>
//       CHECK:   arith.mulf
func.func @gelu_and_mul(%x: memref<8x4xf32>, %w: memref<4x16xf32>, %b: memref<16xf32>)
    -> (memref<8x16xf32>, memref<8x16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %one = arith.constant 1.000000e+00 : f32
  %sqrt2 = arith.constant 1.41421354 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%x, %w : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  %y = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b, %c : memref<16xf32>, memref<8x16xf32>) outs(%y : memref<8x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    %1 = arith.divf %0, %sqrt2 : f32
    %2 = math.erf %1 : f32
    %3 = arith.addf %2, %one : f32
    %4 = arith.mulf %0, %3 : f32
    %5 = arith.mulf %4, %half : f32
    linalg.yield %5 : f32
  }
  %c2 = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
  linalg.fill ins(%cst : f32) outs(%c2 : memref<8x16xf32>)
  linalg.matmul ins(%x, %w : memref<8x4xf32>, memref<4x16xf32>) outs(%c2 : memref<8x16xf32>)
  %y2 = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c2, %b : memref<8x16xf32>, memref<16xf32>) outs(%y2 : memref<8x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in, %in_1 : f32
    linalg.yield %0 : f32
  }
  return %y, %y2 : memref<8x16xf32>, memref<8x16xf32>
}

// -----

// Must not fuse: the bias generic is not the next op to touch C (a
// reduction reads C first), and, in the second product, the left operand
// is overwritten between the matmul and the generic (the call, which takes
// the generic's place, would read the new values).
// CHECK-LABEL: func.func @not_next
//       CHECK:   params = array<i64: 1, 8, 16, 4, 0, 0, 0, 0>
//       CHECK:   linalg.reduce
//       CHECK:   linalg.generic
//       CHECK:   params = array<i64: 1, 8, 16, 4, 0, 0, 0, 0>
//       CHECK:   linalg.fill
//       CHECK:   linalg.generic
func.func @not_next(%x: memref<8x4xf32>, %w: memref<4x16xf32>, %b: memref<16xf32>, %s: memref<16xf32>)
    -> (memref<8x16xf32>, memref<8x16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%x, %w : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>)
  linalg.reduce ins(%c : memref<8x16xf32>) outs(%s : memref<16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<8x16xf32>, memref<16xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    linalg.yield %0 : f32
  }
  %a = memref.alloc() {alignment = 64 : i64} : memref<8x4xf32>
  memref.copy %x, %a : memref<8x4xf32> to memref<8x4xf32>
  %c2 = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
  linalg.fill ins(%cst : f32) outs(%c2 : memref<8x16xf32>)
  linalg.matmul ins(%a, %w : memref<8x4xf32>, memref<4x16xf32>) outs(%c2 : memref<8x16xf32>)
  linalg.fill ins(%cst : f32) outs(%a : memref<8x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c2, %b : memref<8x16xf32>, memref<16xf32>) outs(%c2 : memref<8x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    linalg.yield %0 : f32
  }
  return %c, %c2 : memref<8x16xf32>, memref<8x16xf32>
}

// -----

// Must not fuse: the output Y is the buffer the matmul's left operand is a
// view of (bufferization reuses it for a model's last dense layer); the
// call would overwrite A while reading it.
// CHECK-LABEL: func.func @output_is_input
//       CHECK:   params = array<i64: 1, 8, 8, 8, 0, 0, 0, 0>
//       CHECK:   linalg.generic
func.func @output_is_input(%s: memref<2x4x8xf32>, %w: memref<8x8xf32>, %b: memref<8xf32>) -> memref<2x4x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<8x8xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<8x8xf32>)
  %a = memref.collapse_shape %s [[0, 1], [2]] : memref<2x4x8xf32> into memref<8x8xf32>
  linalg.matmul ins(%a, %w : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  %v = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 4, 8] : memref<8x8xf32> into memref<2x4x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v, %b : memref<2x4x8xf32>, memref<8xf32>) outs(%s : memref<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    linalg.yield %0 : f32
  }
  return %s : memref<2x4x8xf32>
}
