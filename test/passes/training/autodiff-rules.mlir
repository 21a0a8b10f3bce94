// RUN: tcc-opt --split-input-file --tcc-autodiff %s | FileCheck %s

// The shape of some gradient rules (their values are checked against finite
// differences in test/integration/gradients.mlir).

// conv_transpose: dX is the convolution by the same filter with the same
// stride; dW is conv's filter gradient (one conv_backward_filter) with g as
// the input and x as the result's gradient.
// CHECK-LABEL: func.func @conv_transpose_grad
//  CHECK-SAME: (%[[X:.*]]: tensor<1x2x3xf32> {{.*}}, %[[W:.*]]: tensor<2x4x3xf32>
//       CHECK: %[[DX:.*]] = tcc.conv %[[G:.*]], %[[W]] {dilations = array<i64: 1>, pad_high = array<i64: 0>, pad_low = array<i64: 0>, strides = array<i64: 2>} : (tensor<1x4x7xf32>, tensor<2x4x3xf32>) -> tensor<1x2x3xf32>
//       CHECK: %[[DW:.*]] = tcc.conv_backward_filter %[[G]], %[[X]] {dilations = array<i64: 1>, kernel = array<i64: 3>, pad_high = array<i64: 0>, pad_low = array<i64: 0>, strides = array<i64: 2>} : (tensor<1x4x7xf32>, tensor<1x2x3xf32>) -> tensor<2x4x3xf32>
//   CHECK-NOT: tcc.transpose
//       CHECK: return %{{.*}}, %[[DX]], %[[DW]]
func.func @conv_transpose(%x: tensor<1x2x3xf32> {tcc.param = "x"}, %w: tensor<2x4x3xf32> {tcc.param = "w"}) -> tensor<f32> {
  %y = tcc.conv_transpose %x, %w {strides = array<i64: 2>, dilations = array<i64: 1>, pad_low = array<i64: 0>, pad_high = array<i64: 0>, output_padding = array<i64: 0>, group = 1 : i64} : (tensor<1x2x3xf32>, tensor<2x4x3xf32>) -> tensor<1x4x7xf32>
  %l = tcc.reduce_sum %y {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<1x4x7xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// scatter_nd (overwrite): the input's gradient is g with zeros scattered
// over the written elements; the updates' gradient gathers g at the index
// tuples' row-major offsets (i0 * 3 + i1) in g flattened.
// CHECK-LABEL: func.func @scatter_nd_grad
//       CHECK: %[[I:.*]] = tcc.constant dense<{{\[}}[1, 2], [3, 0]]> : tensor<2x2xi64>
//       CHECK: %[[Z:.*]] = tcc.constant dense<0.000000e+00> : tensor<2xf32>
//       CHECK: %[[DX:.*]] = tcc.scatter_nd %[[G:.*]], %[[I]], %[[Z]] : tensor<4x3xf32>, tensor<2x2xi64>, tensor<2xf32>
//       CHECK: %[[ROW:.*]] = tcc.mul %{{.*}}, %{{.*}} : tensor<2xi64>
//       CHECK: %[[OFF:.*]] = tcc.add %{{.*}}, %[[ROW]] : tensor<2xi64>
//       CHECK: %[[FLAT:.*]] = tcc.reshape %[[G]] : tensor<4x3xf32> -> tensor<12xf32>
//       CHECK: %[[DU:.*]] = tcc.gather %[[FLAT]], %[[OFF]] {axis = 0 : i64} : (tensor<12xf32>, tensor<2xi64>) -> tensor<2xf32>
//       CHECK: return %{{.*}}, %[[DX]], %[[DU]]
func.func @scatter_nd(%x: tensor<4x3xf32> {tcc.param = "x"}, %u: tensor<2xf32> {tcc.param = "u"}) -> tensor<f32> {
  %i = tcc.constant dense<[[1, 2], [3, 0]]> : tensor<2x2xi64>
  %y = tcc.scatter_nd %x, %i, %u : tensor<4x3xf32>, tensor<2x2xi64>, tensor<2xf32>
  %l = tcc.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// resize: the adjoint of each resampled dimension is a matmul by its
// constant [out, in] interpolation matrix (here linear, half_pixel, 3 -> 6:
// weights 3/4 and 1/4, edge rows clamped); the dimensions the resize keeps
// get none.
// CHECK-LABEL: func.func @resize_grad
//       CHECK: %[[M:.*]] = tcc.constant dense<{{\[}}[1.000000e+00, 0.000000e+00, 0.000000e+00], [7.500000e-01, 2.500000e-01, 0.000000e+00], [2.500000e-01, 7.500000e-01, 0.000000e+00], [0.000000e+00, 7.500000e-01, 2.500000e-01], [0.000000e+00, 2.500000e-01, 7.500000e-01], [0.000000e+00, 0.000000e+00, 1.000000e+00]]> : tensor<6x3xf32>
//       CHECK: %[[T:.*]] = tcc.transpose %{{.*}}, perm = [0, 1, 3, 2] : tensor<1x2x6x4xf32> -> tensor<1x2x4x6xf32>
//       CHECK: %[[R:.*]] = tcc.reshape %[[T]] : tensor<1x2x4x6xf32> -> tensor<8x6xf32>
//       CHECK: %[[P:.*]] = tcc.matmul %[[R]], %[[M]] : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32>
//       CHECK: %[[B:.*]] = tcc.reshape %[[P]] : tensor<8x3xf32> -> tensor<1x2x4x3xf32>
//       CHECK: %[[DX:.*]] = tcc.transpose %[[B]], perm = [0, 1, 3, 2] : tensor<1x2x4x3xf32> -> tensor<1x2x3x4xf32>
//   CHECK-NOT: tcc.matmul
//       CHECK: return %{{.*}}, %[[DX]]
func.func @resize(%x: tensor<1x2x3x4xf32> {tcc.param = "x"}) -> tensor<f32> {
  %y = tcc.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 1.0>, mode = 1 : i32} : tensor<1x2x3x4xf32> -> tensor<1x2x6x4xf32>
  %l = tcc.reduce_sum %y {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<1x2x6x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Depthwise conv: dX is one grouped conv_transpose, dW one grouped
// conv_backward_filter of x and g, in the same 3 groups.
// CHECK-LABEL: func.func @conv_depthwise_grad
//       CHECK: tcc.conv_transpose {{.*}}group = 3 : i64{{.*}} -> tensor<2x3x5xf32>
//       CHECK: tcc.conv_backward_filter %arg0, %{{.*}}group = 3 : i64, kernel = array<i64: 3>{{.*}} : (tensor<2x3x5xf32>, tensor<2x3x3xf32>) -> tensor<3x1x3xf32>
func.func @conv_depthwise(%x: tensor<2x3x5xf32> {tcc.param = "x"}, %w: tensor<3x1x3xf32> {tcc.param = "w"}) -> tensor<f32> {
  %y = tcc.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_low = array<i64: 0>, pad_high = array<i64: 0>, group = 3 : i64} : (tensor<2x3x5xf32>, tensor<3x1x3xf32>) -> tensor<2x3x3xf32>
  %l = tcc.reduce_sum %y {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<2x3x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// max_pool: per kernel offset a strided slice of the padded input, a strict
// comparison with the best so far (the first maximum wins), then one
// scatter-add of g at the winners into [N, C, plane + 1] (the extra element
// takes padding) cut back to the input.
// CHECK-LABEL: func.func @max_pool_grad
//       CHECK: tcc.pad
//       CHECK: tcc.slice %{{.*}}, start = [0, 0, 0], stride = [1, 1, 2]
//       CHECK: tcc.compare gt
//       CHECK: tcc.scatter_elements {{.*}}axis = 2 : i64, reduction = 1 : i32{{.*}} : tensor<1x2x6xf32>, tensor<1x2x3xi64>, tensor<1x2x3xf32>
//       CHECK: tcc.slice {{.*}} : tensor<1x2x6xf32> -> tensor<1x2x5xf32>
func.func @max_pool(%x: tensor<1x2x5xf32> {tcc.param = "x"}) -> tensor<f32> {
  %y = tcc.max_pool %x {kernel = array<i64: 3>, strides = array<i64: 2>, dilations = array<i64: 1>, pad_low = array<i64: 1>, pad_high = array<i64: 1>} : tensor<1x2x5xf32> -> tensor<1x2x3xf32>
  %l = tcc.reduce_sum %y {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<1x2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// batch_norm_training: the per-channel sums of the backward (dbias = sum(g),
// dscale = sum(g xhat), and the means inside dx) accumulate in f64 for an
// f32 input, as PyTorch's CPU kernels, and come back as f32.
// CHECK-LABEL: func.func @batch_norm_training_grad
//       CHECK: %[[W:.*]] = tcc.cast %{{.*}} : tensor<4x3x2x2xf32> to tensor<4x3x2x2xf64>
//       CHECK: %[[S:.*]] = tcc.reduce_sum %[[W]] {axes = array<i64: 0, 2, 3>} : tensor<4x3x2x2xf64> -> tensor<1x3x1x1xf64>
//       CHECK: tcc.cast %[[S]] : tensor<1x3x1x1xf64> to tensor<1x3x1x1xf32>
//   CHECK-NOT: tcc.reduce_sum {{.*}} : tensor<4x3x2x2xf32> -> tensor<1x3x1x1xf32>
//       CHECK: return
func.func @batch_norm_training(%x: tensor<4x3x2x2xf32> {tcc.param = "x"}, %s: tensor<3xf32> {tcc.param = "s"}, %b: tensor<3xf32> {tcc.param = "b"}) -> tensor<f32> {
  %y, %m, %v = tcc.batch_norm_training %x, %s, %b {epsilon = 1.0e-05 : f64} : tensor<4x3x2x2xf32>, tensor<3xf32>
  %q = tcc.mul %y, %y : tensor<4x3x2x2xf32>
  %l = tcc.reduce_sum %q {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<4x3x2x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
