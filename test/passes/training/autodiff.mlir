// RUN: tcc-opt --split-input-file --tcc-autodiff --canonicalize %s | FileCheck %s

// The gradient function returns the loss and one gradient per parameter,
// named after it; the input (not a parameter) gets none. y = tanh(x w + b):
// dL/ds = 1 - tanh^2, dw = x^T ds, db = column sums of ds.
// CHECK-LABEL: func.func @forward_grad
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32> {tcc.input = "x"}, %[[W:.*]]: tensor<3x4xf32> {tcc.param = "w"}, %[[B:.*]]: tensor<4xf32> {tcc.param = "b"})
// CHECK-SAME: -> (tensor<f32> {tcc.output = "loss"}, tensor<3x4xf32> {tcc.output = "w.grad"}, tensor<4xf32> {tcc.output = "b.grad"})
// CHECK: %[[T:.*]] = tcc.tanh
// CHECK: %[[L:.*]] = tcc.reduce_sum %[[T]]
// CHECK: %[[SQ:.*]] = tcc.mul %[[T]], %[[T]]
// CHECK: %[[DS:.*]] = tcc.sub %{{.*}}, %[[SQ]]
// CHECK: %[[DB:.*]] = tcc.reduce_sum %[[DS]] {axes = array<i64: 0>}
// CHECK: %[[DBR:.*]] = tcc.reshape %[[DB]] : tensor<1x4xf32> -> tensor<4xf32>
// CHECK: %[[XT:.*]] = tcc.transpose %[[X]], perm = [1, 0]
// CHECK: %[[DW:.*]] = tcc.matmul %[[XT]], %[[DS]]
// CHECK: return %[[L]], %[[DW]], %[[DBR]]
func.func @forward(%x: tensor<2x3xf32> {tcc.input = "x"}, %w: tensor<3x4xf32> {tcc.param = "w"},
                   %b: tensor<4xf32> {tcc.param = "b"}) -> (tensor<f32> {tcc.output = "loss"}) {
  %m = tcc.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %bb = tcc.broadcast_in_dim %b, dims = [1] : tensor<4xf32> -> tensor<2x4xf32>
  %s = tcc.add %m, %bb : tensor<2x4xf32>
  %t = tcc.tanh %s : tensor<2x4xf32>
  %l = tcc.reduce_sum %t {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A parameter the loss does not depend on gets a zero gradient; a value used
// twice gets the sum of both contributions (d(p*p)/dp = 2p).
// CHECK-LABEL: func.func @unused_grad
// CHECK-DAG: %[[ZERO:.*]] = tcc.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK-DAG: %[[TWICE:.*]] = tcc.add %[[P:.*]], %[[P]] : tensor<3xf32>
// CHECK: return %{{.*}}, %[[TWICE]], %[[ZERO]]
func.func @unused(%p: tensor<3xf32> {tcc.param = "p"}, %q: tensor<3xf32> {tcc.param = "q"}) -> tensor<f32> {
  %sq = tcc.mul %p, %p : tensor<3xf32>
  %l = tcc.reduce_sum %sq {axes = array<i64: 0>, keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

