// RUN: tcc-opt --split-input-file --verify-diagnostics --tcc-build-train-step=loss=mse %s | FileCheck %s
// RUN: tcc-opt --split-input-file --verify-diagnostics '--tcc-build-train-step=loss=mse freeze=m' %s | FileCheck %s

// Tests that a parameter marked tcc.buffer (one of the model's buffers) is
// not trained: train_step updates only w, and the metadata says why. A
// --freeze pattern that matches the buffer is not an error (it leaves it
// as it is).
// CHECK: module attributes {tcc.metadata = {{{.*}}not_trained.m = "buffer"
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {tcc.output = "loss"}, tensor<2x3xf32> {tcc.update = "w"}, tensor<f32> {tcc.output = "grad_norm"})
func.func @forward(%x: tensor<4x2xf32> {tcc.input = "x"}, %w: tensor<2x3xf32> {tcc.param = "w"},
                   %m: tensor<4x3xf32> {tcc.param = "m", tcc.buffer = "graph signature"})
    -> (tensor<4x3xf32> {tcc.output = "pred"}) {
  %p = tcc.matmul %x, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %y = tcc.add %p, %m : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Tests that a buffer the frontend found by its values only (an infinity
// or NaN) gets a warning that names it and the option that names buffers.
// CHECK: module attributes {tcc.metadata = {{{.*}}not_trained.m = "buffer"
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {tcc.output = "loss"}, tensor<2x3xf32> {tcc.update = "w"}, tensor<f32> {tcc.output = "grad_norm"})
// expected-warning @+1 {{initializer 'm' holds an infinity or NaN, which no trained parameter does: kept as a buffer, not trained}}
func.func @forward(%x: tensor<4x2xf32> {tcc.input = "x"}, %w: tensor<2x3xf32> {tcc.param = "w"},
                   %m: tensor<4x3xf32> {tcc.param = "m", tcc.buffer = "non-finite values"})
    -> (tensor<4x3xf32> {tcc.output = "pred"}) {
  %p = tcc.matmul %x, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %y = tcc.add %p, %m : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
