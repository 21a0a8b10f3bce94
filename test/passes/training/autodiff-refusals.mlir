// RUN: not tcc-opt --split-input-file --tcc-autodiff %s -o /dev/null 2>&1 | FileCheck %s

// Gradient rules refuse what they do not implement, naming the op.

// CHECK: error: 'tcc.pad' op gradient of reflect / edge / negative padding is not implemented yet
func.func @pad_reflect(%x: tensor<2x3xf32> {tcc.param = "x"}) -> tensor<f32> {
  %y = tcc.pad %x, low = [0, 1], high = [0, 1] {mode = 1 : i32} : tensor<2x3xf32> -> tensor<2x5xf32>
  %l = tcc.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK: error: 'tcc.nll_loss' op gradient with respect to class weights is not implemented
func.func @nll_loss_weights(%x: tensor<2x3xf32> {tcc.param = "x"}, %w: tensor<3xf32> {tcc.param = "w"}) -> tensor<f32> {
  %t = tcc.constant dense<[0, 2]> : tensor<2xi64>
  %l = tcc.nll_loss %x, %t, %w {reduction = 1 : i32} : (tensor<2x3xf32>, tensor<2xi64>, tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
