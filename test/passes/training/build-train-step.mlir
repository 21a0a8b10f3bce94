// RUN: tcc-opt --split-input-file --tcc-build-train-step=loss=mse --canonicalize %s | FileCheck %s
// RUN: not tcc-opt --split-input-file --tcc-build-train-step=loss=none %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: tcc-opt --split-input-file '--tcc-build-train-step=loss=mse momentum=0.9' %s | FileCheck %s --check-prefix=MOMENTUM
// RUN: tcc-opt --split-input-file '--tcc-build-train-step=loss=mse optimizer=adamw grad-clip=1' %s | FileCheck %s --check-prefix=ADAMW

// MSE: labels shaped like the prediction, the mean of the squared error; the
// step takes the labels, the learning rate and the weight decay (a runtime
// value, 0 by default for SGD) as inputs, returns the loss and each
// parameter's SGD update marked for in-place writing.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:.*]]: tensor<4x2xf32> {tcc.input = "x"}, %[[W:.*]]: tensor<2x3xf32> {tcc.param = "w"}, %[[Y:.*]]: tensor<4x3xf32> {tcc.input = "y"}, %[[LR:.*]]: tensor<f32> {tcc.input = "lr"}, %{{.*}}: tensor<f32> {tcc.input = "weight_decay"})
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
//
// Every optimizer hyperparameter is a runtime input beside lr, its
// compile-time value the metadata default: SGD's momentum (with a buffer),
// broadcast into the buffer's update.
// MOMENTUM: module attributes {tcc.metadata = {default.momentum = "0.90000000000000002", default.weight_decay = "0",
// MOMENTUM-LABEL: func.func @train_step
// MOMENTUM-SAME: %{{.*}}: tensor<f32> {tcc.input = "weight_decay"}, %[[MU:.*]]: tensor<f32> {tcc.input = "momentum"}, %[[BUF:.*]]: tensor<2x3xf32> {tcc.state = "w.momentum_buffer"}
// MOMENTUM: %[[MUB:.*]] = tcc.broadcast_in_dim %[[MU]], dims = [] : tensor<f32> -> tensor<2x3xf32>
// MOMENTUM: tcc.mul %[[MUB]], %[[BUF]]
// AdamW with clipping: beta1, beta2, eps, the 1 - beta coefficients (which
// the runtime writes) and the clipping norm.
// ADAMW: module attributes {tcc.metadata = {default.beta1 = "0.90000000000000002", default.beta2 = "0.999", default.eps = "1e-08", default.grad_clip = "1", default.weight_decay = "0.01",
// ADAMW-LABEL: func.func @train_step
// ADAMW-SAME: {tcc.input = "weight_decay"}, %[[B1:.*]]: tensor<f32> {tcc.input = "beta1"}, %{{.*}}: tensor<f32> {tcc.input = "beta2"}, %[[EPS:.*]]: tensor<f32> {tcc.input = "eps"}, %{{.*}}: tensor<f32> {tcc.input = "one_minus_beta1"}, %{{.*}}: tensor<f32> {tcc.input = "one_minus_beta2"}, %[[CLIP:.*]]: tensor<f32> {tcc.input = "grad_clip"}
// ADAMW: tcc.div %[[CLIP]],
// ADAMW: tcc.pow %[[B1]],
// ADAMW: tcc.broadcast_in_dim %[[EPS]]
func.func @forward(%x: tensor<4x2xf32> {tcc.input = "x"}, %w: tensor<2x3xf32> {tcc.param = "w"})
    -> (tensor<4x3xf32> {tcc.output = "pred"}) {
  %p = tcc.matmul %x, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %p : tensor<4x3xf32>
}

// -----

// A batch norm in training mode whose running statistics are parameters:
// they are not trained (no gradient, no optimizer update) but updated as
// PyTorch does, r = 0.9 r + 0.1 batch, with the unbiased variance (n = 2 * 3
// = 6 values per channel: factor 6/5); the inference entry normalizes with
// them.
// CHECK-LABEL: func.func @forward
// CHECK: tcc.batch_norm_inference %{{.*}}, %{{.*}}, %{{.*}}, %arg3, %arg4
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tensor<2xf32> {tcc.update = "scale"}, tensor<2xf32> {tcc.update = "bias"}, tensor<2xf32> {tcc.update = "running_mean"}, tensor<2xf32> {tcc.update = "running_var"}
// CHECK-DAG: %[[UNBIASED:.*]] = tcc.constant dense<1.200000e+00> : tensor<2xf32>
// CHECK-DAG: %[[KEEP:.*]] = tcc.constant dense<0.899999976> : tensor<2xf32>
// CHECK: %{{.*}}, %[[M:.*]], %[[V:.*]] = tcc.batch_norm_training
// CHECK-DAG: tcc.mul %[[V]], %[[UNBIASED]] : tensor<2xf32>
// CHECK-DAG: tcc.mul %arg4, %[[KEEP]] : tensor<2xf32>
// CHECK-DAG: tcc.mul %arg3, %[[KEEP]] : tensor<2xf32>
func.func @forward(%x: tensor<2x2x3xf32> {tcc.input = "x"}, %s: tensor<2xf32> {tcc.param = "scale"},
                   %b: tensor<2xf32> {tcc.param = "bias"}, %rm: tensor<2xf32> {tcc.param = "running_mean"},
                   %rv: tensor<2xf32> {tcc.param = "running_var"}) -> (tensor<2x2x3xf32> {tcc.output = "y"}) {
  %y, %m, %v = tcc.batch_norm_training %x, %s, %b {epsilon = 1.0e-05 : f64, tcc.running_stats = array<i64: 3, 4>, tcc.momentum = 9.0e-01 : f64} : tensor<2x2x3xf32>, tensor<2xf32>
  return %y : tensor<2x2x3xf32>
}
