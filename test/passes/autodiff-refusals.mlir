// RUN: not tcc-opt --split-input-file --tcc-autodiff %s -o /dev/null 2>&1 | FileCheck %s

// Gradient rules refuse what they do not implement, naming the op.

// CHECK: error: 'tcc.conv_transpose' op gradient of a grouped transposed convolution is not implemented yet
func.func @conv_transpose_grouped(%x: tensor<1x4x3xf32> {tcc.param = "x"}, %w: tensor<4x1x2xf32> {tcc.param = "w"}) -> tensor<f32> {
  %y = tcc.conv_transpose %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_low = array<i64: 0>, pad_high = array<i64: 0>, output_padding = array<i64: 0>, group = 2 : i64} : (tensor<1x4x3xf32>, tensor<4x1x2xf32>) -> tensor<1x2x4xf32>
  %l = tcc.reduce_sum %y {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<1x2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK: error: 'tcc.scatter_nd' op gradient of a scatter with mul / max / min reduction is not implemented yet
func.func @scatter_nd_mul(%x: tensor<4x3xf32> {tcc.param = "x"}, %u: tensor<2x3xf32> {tcc.param = "u"}) -> tensor<f32> {
  %i = tcc.constant dense<[[1], [3]]> : tensor<2x1xi64>
  %y = tcc.scatter_nd %x, %i, %u {reduction = 2 : i32} : tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>
  %l = tcc.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
