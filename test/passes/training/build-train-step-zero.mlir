// RUN: tcc-opt '--tcc-build-train-step=loss=mse data-parallel=1 zero=1 optimizer=sgd momentum=0.9' %s | FileCheck %s
// RUN: tcc-opt '--tcc-build-train-step=loss=mse data-parallel=1 zero=1 optimizer=adamw grad-accum=2' %s | FileCheck %s --check-prefix=ADAM
// RUN: not tcc-opt '--tcc-build-train-step=loss=mse zero=1' %s 2>&1 | FileCheck %s --check-prefix=NODP
// RUN: tcc-opt '--tcc-build-train-step=loss=mse data-parallel=1 zero=1 optimizer=adamw grad-clip=1' %s | FileCheck %s --check-prefix=CLIP
// RUN: not tcc-opt '--tcc-build-train-step=loss=mse data-parallel=1 zero=1 skip-nonfinite=1' %s 2>&1 | FileCheck %s --check-prefix=SKIP
// RUN: not tcc-opt '--tcc-build-train-step=loss=mse data-parallel=1 zero=1 precision=fp16' %s 2>&1 | FileCheck %s --check-prefix=FP16
// RUN: not tcc-opt '--tcc-build-train-step=loss=mse data-parallel=1 zero=2' %s 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: tcc-opt '--tcc-build-train-step=loss=mse data-parallel=1 zero=1 optimizer=sgd momentum=0.9 precision=bf16' %s | FileCheck %s --check-prefix=BF16

// The MLP of build-train-step-data-parallel.mlir: w1 (8 x 16 = 128
// elements) and w2 (16 x 4 = 64), 192 flat elements: 64 chunks of 16
// (ceil(192 / 64) = 3, rounded up to 16), 1024 in all.

// Tests that with --zero=1 train_step reduces nothing and updates no
// parameter: the gradients, flattened in parameter order and zero-padded,
// become the state tensor zero.grads; grad_norm is the runtime's
// placeholder. The metadata records the layout, the flat order and the
// optimizer state's suffixes. @zero_update is SGD with momentum on one
// 16-element chunk: its state an input and an output, the chunk's squared
// gradient summed.
// CHECK: tcc.metadata = {{{.*}}zero = "64,16", zero.params = "w1;w2", zero.state = ".momentum_buffer"}
// CHECK-LABEL: func.func @train_step
//  CHECK-SAME: {tcc.state = "zero.grads"}
//  CHECK-SAME: -> (tensor<f32> {tcc.output = "loss"}, tensor<1024xf32> {tcc.update = "zero.grads"}, tensor<f32> {tcc.output = "grad_norm"})
//   CHECK-NOT: tcc.all_reduce
//       CHECK: %[[G1:.*]] = tcc.reshape %{{.*}} : tensor<8x16xf32> -> tensor<128xf32>
//       CHECK: %[[G2:.*]] = tcc.reshape %{{.*}} : tensor<16x4xf32> -> tensor<64xf32>
//       CHECK: %[[PAD:.*]] = tcc.constant dense<0.000000e+00> : tensor<832xf32>
//       CHECK: %[[FLAT:.*]] = tcc.concat %[[G1]], %[[G2]], %[[PAD]] {axis = 0 : i64}
//   CHECK-NOT: tcc.sub %arg1
//       CHECK: return %{{.*}}, %[[FLAT]], %{{.*}} :
// CHECK-LABEL: func.func @zero_update
//  CHECK-SAME: %[[P:[^:]*]]: tensor<16xf32> {tcc.input = "zero.param"}
//  CHECK-SAME: %[[G:[^:]*]]: tensor<16xf32> {tcc.input = "zero.grad"}
//  CHECK-SAME: {tcc.input = "lr"}
//  CHECK-SAME: %[[BUF:[^:]*]]: tensor<16xf32> {tcc.input = "zero.momentum_buffer"}
//  CHECK-SAME: -> (tensor<16xf32> {tcc.output = "zero.momentum_buffer"}, tensor<16xf32> {tcc.output = "zero.param"}, tensor<f32> {tcc.output = "zero.grad_sq"})
//       CHECK: tcc.mul %{{.*}}, %[[BUF]] : tensor<16xf32>
//       CHECK: tcc.sub %[[P]], %{{.*}} : tensor<16xf32>
//       CHECK: %[[SQ:.*]] = tcc.mul %[[G]], %[[G]] : tensor<16xf32>
//       CHECK: tcc.reduce_sum %[[SQ]]

// Tests AdamW with accumulation: train_step flattens (accumulated + own)
// / K, and @zero_update takes both moments and the step for the bias
// corrections; accumulate_grad is the one without ZeRO.
// ADAM: zero.state = ".exp_avg;.exp_avg_sq"
// ADAM-LABEL: func.func @train_step
//       ADAM: %[[SUM:.*]] = tcc.add %{{.*}}, %{{.*}} : tensor<16x4xf32>
//       ADAM: %[[MEAN:.*]] = tcc.mul %[[SUM]],
//       ADAM: tcc.reshape %[[MEAN]] : tensor<16x4xf32> -> tensor<64xf32>
// ADAM-LABEL: func.func @zero_update
//  ADAM-SAME: {tcc.input = "step"}
//  ADAM-SAME: {tcc.input = "zero.exp_avg"}
//  ADAM-SAME: {tcc.input = "zero.exp_avg_sq"}
//      ADAM: tcc.pow
//      ADAM: tcc.sqrt
// ADAM-LABEL: func.func @accumulate_grad
//  ADAM-NOT: zero

// NODP: --zero=1 is not supported without --data-parallel
// With --grad-clip both entries take the clip as an input; the runtime
// clips the reduced chunks before zero_update (runtime/dist/zero.cpp).
// CLIP-LABEL: func.func @train_step
//  CLIP-SAME: tcc.input = "grad_clip"
// CLIP-LABEL: func.func @zero_update
//  CLIP-SAME: tcc.input = "grad_clip"
// SKIP: --zero=1 is not supported with --skip-nonfinite
// FP16: --zero=1 is not supported with --precision=fp16
// Under bf16 the flat gradient and the sharded update compute in f32
// (tcc-precision leaves ops marked tcc.keep_fp32 alone).
//      BF16: tcc.concat {{.*}} {axis = 0 : i64, tcc.keep_fp32} : {{.*}} -> tensor<1024xf32>
// BF16-LABEL: func.func @zero_update
//  BF16-NEXT: tcc.broadcast_in_dim {{.*}} {tcc.keep_fp32}
// STAGE: --zero must be 0 or 1
func.func @forward(%x: tensor<8x8xf32> {tcc.input = "x"}, %w1: tensor<8x16xf32> {tcc.param = "w1"},
                   %w2: tensor<16x4xf32> {tcc.param = "w2"}) -> (tensor<8x4xf32> {tcc.output = "pred"}) {
  %h = tcc.matmul %x, %w1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a = tcc.tanh %h : tensor<8x16xf32>
  %p = tcc.matmul %a, %w2 : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %p : tensor<8x4xf32>
}
