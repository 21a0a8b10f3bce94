// RUN: tcc-opt --split-input-file --tcc-build-train-step=loss=mse --canonicalize %s | FileCheck %s
// RUN: not tcc-opt --split-input-file --tcc-build-train-step=loss=none %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE

// MSE: labels shaped like the prediction, the mean of the squared error; the
// step takes the labels and the learning rate as inputs, returns the loss and
// each parameter's SGD update marked for in-place writing.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:.*]]: tensor<4x2xf32> {tcc.input = "x"}, %[[W:.*]]: tensor<2x3xf32> {tcc.param = "w"}, %[[Y:.*]]: tensor<4x3xf32> {tcc.input = "y"}, %[[LR:.*]]: tensor<f32> {tcc.input = "lr"})
// CHECK-SAME: -> (tensor<f32> {tcc.output = "loss"}, tensor<2x3xf32> {tcc.update = "w"}, tensor<f32> {tcc.output = "grad_norm"})
// CHECK: %[[P:.*]] = tcc.matmul %[[X]], %[[W]]
// CHECK: %[[D:.*]] = tcc.sub %[[P]], %[[Y]]
// CHECK: %[[SQ:.*]] = tcc.mul %[[D]], %[[D]]
// CHECK: tcc.reduce_sum %[[SQ]]
// CHECK: %[[LRB:.*]] = tcc.broadcast_in_dim %[[LR]], dims = []
// CHECK: %[[STEP:.*]] = tcc.mul %[[LRB]], %{{.*}}
// CHECK: %[[NEW:.*]] = tcc.sub %[[W]], %[[STEP]]
// CHECK: return %{{.*}}, %[[NEW]], %{{.*}}
// NONE: --loss=none: the model's first output must be the scalar loss, not 'tensor<4x3xf32>'
func.func @forward(%x: tensor<4x2xf32> {tcc.input = "x"}, %w: tensor<2x3xf32> {tcc.param = "w"})
    -> (tensor<4x3xf32> {tcc.output = "pred"}) {
  %p = tcc.matmul %x, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %p : tensor<4x3xf32>
}
