// RUN: tcc-opt --split-input-file --tcc-build-train-step="loss=mse precision=fp16" %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-build-train-step="loss=mse precision=bf16" %s | FileCheck %s --check-prefix=BF16
// RUN: tcc-opt --split-input-file --tcc-build-train-step="loss=mse precision=tf32" %s | FileCheck %s --check-prefix=TF32
// RUN: not tcc-opt --tcc-build-train-step="loss=mse precision=fp8" %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// Tests fp16's dynamic loss scaling (PyTorch GradScaler): the scale is the
// state grad_scaler.scale, or the input loss_scale_init while that is 0; the
// loss is multiplied by it before the backward pass and the loss output and
// the gradients are divided by it; a non-finite loss or gradient element
// (|x| <= max fails) sets the skip flag, which keeps the old parameter; the
// scale halves on a skip and doubles after 2000 good steps. The optimizer,
// the check and the scale update are marked tcc.keep_fp32; the forward and
// backward are not.
// CHECK-LABEL: func.func @train_step
//  CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<2x3xf32> {tcc.param = "w"}
//  CHECK-SAME: %[[INIT:[a-z0-9]+]]: tensor<f32> {tcc.input = "loss_scale_init"}, %[[STATE:[a-z0-9]+]]: tensor<f32> {tcc.state = "grad_scaler.scale"}, %[[GOOD:[a-z0-9]+]]: tensor<f32> {tcc.state = "grad_scaler.growth_tracker"}
//  CHECK-SAME: {tcc.update = "grad_scaler.scale"}, tensor<f32> {tcc.update = "grad_scaler.growth_tracker"}, tensor<f32> {tcc.output = "loss_scale"}, tensor<f32> {tcc.output = "skipped"})
//       CHECK: %[[FRESH:.*]] = tcc.compare eq, %[[STATE]], %{{.*}} : tensor<f32>
//       CHECK: %[[S:.*]] = tcc.select %[[FRESH]], %[[INIT]], %[[STATE]]
//       CHECK: %[[MEAN:.*]] = tcc.mul %{{.*}}, %{{.*}} : tensor<f32>
//       CHECK: %[[SCALED:.*]] = tcc.mul %[[MEAN]], %[[S]] : tensor<f32>
//   CHECK-NOT: tcc.keep_fp32
//       CHECK: tcc.matmul
//       CHECK: %[[INV:.*]] = tcc.div %{{.*}}, %[[S]] {tcc.keep_fp32}
//       CHECK: %[[LOSS:.*]] = tcc.div %[[SCALED]], %[[S]] {tcc.keep_fp32}
//       CHECK: tcc.abs %[[LOSS]] {tcc.keep_fp32}
//       CHECK: %[[SKIP:.*]] = tcc.compare gt, %{{.*}}, %{{.*}} {tcc.keep_fp32}
//       CHECK: %[[NEWW:.*]] = tcc.sub %[[W]], %{{.*}} {tcc.keep_fp32}
//       CHECK: %[[MASK:.*]] = tcc.broadcast_in_dim %[[SKIP]], dims = [] {tcc.keep_fp32} : tensor<i1> -> tensor<2x3xi1>
//       CHECK: %[[KEPT:.*]] = tcc.select %[[MASK]], %[[W]], %[[NEWW]]
//       CHECK: tcc.add %[[GOOD]], %{{.*}}
//       CHECK: tcc.compare ge
//       CHECK: tcc.select %[[SKIP]]
//       CHECK: return %[[LOSS]], %[[KEPT]], %{{.*}}, %{{.*}}, %{{.*}}, %[[S]], %{{.*}}
// BF16-LABEL: func.func @train_step
//   BF16-NOT: loss_scale
//       BF16: tcc.sub %{{.*}}, %{{.*}} {tcc.keep_fp32} : tensor<2x3xf32>
// tf32 builds what fp32 does (only the library calls differ): no loss
// scaling, nothing marked.
// TF32-LABEL: func.func @train_step
//   TF32-NOT: loss_scale
//   TF32-NOT: tcc.keep_fp32
// BAD: for the --precision option: Cannot find option named 'fp8'!
func.func @forward(%x: tensor<4x2xf32> {tcc.input = "x"}, %w: tensor<2x3xf32> {tcc.param = "w"})
    -> (tensor<4x3xf32> {tcc.output = "pred"}) {
  %p = tcc.matmul %x, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %p : tensor<4x3xf32>
}
