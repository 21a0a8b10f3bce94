# RUN: tcc %s --batch=2 --emit=mlir-raw | FileCheck %s
# Tests the lowering of functions with parameters named by their call's
# scope (in a loop), state read by batch_norm (tcc.running_stats names the
# state arguments), conv with bias, pooling, layer norm, dropout streams and
# a shared (tied) parameter.

fn bn(x, c) {
  param weight: [c] = ones
  param bias: [c] = zeros
  state running_mean: [c] = zeros
  state running_var: [c] = ones
  return batch_norm(x, weight, bias, running_mean, running_var, momentum = 0.1)
}

fn conv3(x, c) {
  param weight: [c, c, 3, 3] = kaiming_uniform()
  param bias: [c] = zeros
  return conv(x, weight, bias, padding = 1)
}

model m(x: f32[B, 2, 4, 4]) {
  let h = x
  repeat 2 {
    h = relu(bn(conv3(h, 2) as c, 2) as norm)
  }
  for i in 0..2 {
    h = dropout(h, p = 0.25)
  }
  let p = max_pool(h, 2)
  let f = flatten(p)
  param g: [8] = ones
  output y = layer_norm(f, g)
}

# CHECK-LABEL: func.func @forward(
#  CHECK-SAME: %arg1: tensor<2x2x3x3xf32> {tcc.param = "c.weight"}
#  CHECK-SAME: {tcc.param = "norm.running_mean"}, %arg6: tensor<2xf32> {tcc.param = "norm.running_var"}
#  CHECK-SAME: {tcc.param = "g"}
#       CHECK: %[[CONV:.+]] = tcc.conv %arg0, %arg1 {{.*}}pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>
#       CHECK: %[[BIAS:.+]] = tcc.broadcast_in_dim %arg2, dims = [1] : tensor<2xf32> -> tensor<2x2x4x4xf32>
#       CHECK: %[[ADD:.+]] = tcc.add %[[CONV]], %[[BIAS]]
#       CHECK: tcc.batch_norm_training %[[ADD]], %arg3, %arg4 {epsilon = {{.*}}, tcc.momentum = 0.89999997615814208 : f64, tcc.running_stats = array<i64: 5, 6>}
# The second repetition shares the parameters of the first.
#       CHECK: tcc.conv %{{.+}}, %arg1
#       CHECK: tcc.batch_norm_training {{.*}}, %arg3, %arg4
#       CHECK: tcc.dropout {{.*}} {ratio = 2.500000e-01 : f64, stream = 0 : i64}
#       CHECK: tcc.dropout {{.*}} {ratio = 2.500000e-01 : f64, stream = 1 : i64}
#       CHECK: tcc.max_pool {{.*}} : tensor<2x2x4x4xf32> -> tensor<2x2x2x2xf32>
#       CHECK: tcc.reshape {{.*}} : tensor<2x2x2x2xf32> -> tensor<2x8xf32>
#       CHECK: tcc.layer_norm {{.*}}, %arg7 {axis = 1 : i64
