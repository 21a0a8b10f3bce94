// RUN: tcc-opt '--tcc-build-train-step=loss=mse data-parallel=1' %s | FileCheck %s
// RUN: tcc-opt '--tcc-build-train-step=loss=mse data-parallel=1 bucket-mb=0.00004 grad-clip=1' %s | FileCheck %s --check-prefix=BUCKETS
// RUN: tcc-opt '--tcc-build-train-step=loss=mse data-parallel=1 grad-accum=2' %s | FileCheck %s --check-prefix=ACCUM
// RUN: not tcc-opt '--tcc-build-train-step=loss=mse data-parallel=1 bucket-mb=0' %s 2>&1 | FileCheck %s --check-prefix=ZERO

// A two-layer MLP: the backward completes w2's gradient (16 x 4 floats, 256
// bytes) before w1's (8 x 16, 512 bytes).

// Tests that by default (25 MB buckets) one all-reduce averages both
// gradients, in the order the backward completes them, right after the
// last one; the optimizer reads the averages. The forward, eval_step and
// infer have none.
// CHECK-LABEL: func.func @forward
//   CHECK-NOT: tcc.all_reduce
// CHECK-LABEL: func.func @eval_step
//   CHECK-NOT: tcc.all_reduce
// CHECK-LABEL: func.func @train_step
//       CHECK: tcc.matmul %{{.*}}, %{{.*}} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
//       CHECK: %[[G1:.*]] = tcc.matmul %{{.*}}, %{{.*}} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
//  CHECK-NEXT: %[[R:.*]]:2 = tcc.all_reduce %{{.*}}, %[[G1]] {bucket = 0 : i64} : tensor<16x4xf32>, tensor<8x16xf32> -> tensor<16x4xf32>, tensor<8x16xf32>
//       CHECK: tcc.mul %[[R]]#1, %[[R]]#1
//       CHECK: tcc.add %[[R]]#1,
//       CHECK: tcc.sub %arg1,

// Tests that buckets of 40 bytes hold one gradient each, w2's first, each
// right after its own gradient, so that w2's reduction overlaps w1's
// backward; the clipping norm is that of the averaged gradients.
// BUCKETS-LABEL: func.func @train_step
//       BUCKETS: %[[G2:.*]] = tcc.matmul %{{.*}}, %{{.*}} : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
//  BUCKETS-NEXT: tcc.all_reduce %[[G2]] {bucket = 0 : i64} : tensor<16x4xf32>
//       BUCKETS: %[[G1:.*]] = tcc.matmul %{{.*}}, %{{.*}} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
//  BUCKETS-NEXT: %[[R1:.*]] = tcc.all_reduce %[[G1]] {bucket = 1 : i64} : tensor<8x16xf32>
//       BUCKETS: tcc.mul %[[R1]], %[[R1]]

// Tests that with accumulation the reduction averages (accumulated + own)
// / K, once per optimizer step: accumulate_grad has none.
// ACCUM-LABEL: func.func @train_step
//       ACCUM: %[[SUM:.*]] = tcc.add %{{.*}}, %{{.*}} : tensor<16x4xf32>
//       ACCUM: %[[MEAN:.*]] = tcc.mul %[[SUM]],
//       ACCUM: tcc.all_reduce %[[MEAN]], %{{.*}} {bucket = 0 : i64} : tensor<16x4xf32>, tensor<8x16xf32>
// ACCUM-LABEL: func.func @accumulate_grad
//   ACCUM-NOT: tcc.all_reduce

// ZERO: --bucket-mb must be a finite size > 0, got 0
func.func @forward(%x: tensor<8x8xf32> {tcc.input = "x"}, %w1: tensor<8x16xf32> {tcc.param = "w1"},
                   %w2: tensor<16x4xf32> {tcc.param = "w2"}) -> (tensor<8x4xf32> {tcc.output = "pred"}) {
  %h = tcc.matmul %x, %w1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a = tcc.tanh %h : tensor<8x16xf32>
  %p = tcc.matmul %a, %w2 : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %p : tensor<8x4xf32>
}
