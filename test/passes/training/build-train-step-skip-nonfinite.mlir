// RUN: tcc-opt '--tcc-build-train-step=loss=mse skip-nonfinite=1' %s | FileCheck %s
// RUN: tcc-opt '--tcc-build-train-step=loss=mse skip-nonfinite=1 data-parallel=1' %s | FileCheck %s --check-prefix=DP
// RUN: tcc-opt '--tcc-build-train-step=loss=mse' %s | FileCheck %s --check-prefix=OFF

// Tests the non-finite guard: train_step takes the 0-d input
// skip_nonfinite (default 0 in the metadata); |loss| + gradient norm above
// FLT_MAX (or NaN: the comparison is false) with the input > 0 sets the
// skip flag; each parameter's new value selects the old one under it; the
// output skipped is 1 or 0.
// CHECK: tcc.metadata = {default.skip_nonfinite = "0"
// CHECK-LABEL: func.func @train_step
//  CHECK-SAME: %[[W1:[^:]*]]: tensor<8x16xf32> {tcc.param = "w1"}
//  CHECK-SAME: %[[ON:[^:]*]]: tensor<f32> {tcc.input = "skip_nonfinite"}
//  CHECK-SAME: {tcc.output = "skipped"}
//       CHECK: %[[NORM:.*]] = tcc.sqrt
//       CHECK: %[[ABS:.*]] = tcc.abs
//       CHECK: %[[SUM:.*]] = tcc.add %[[ABS]], %[[NORM]]
//       CHECK: %[[MAX:.*]] = tcc.constant dense<3.40282347E+38>
//       CHECK: %[[FINITE:.*]] = tcc.compare le, %[[SUM]], %[[MAX]]
//       CHECK: %[[ASKED:.*]] = tcc.select %[[FINITE]], %{{.*}}, %[[ON]]
//       CHECK: %[[SKIP:.*]] = tcc.compare gt, %[[ASKED]]
//       CHECK: %[[NEW:.*]] = tcc.sub %[[W1]],
//       CHECK: %[[MASK:.*]] = tcc.broadcast_in_dim %[[SKIP]], dims = [] : tensor<i1> -> tensor<8x16xi1>
//       CHECK: tcc.select %[[MASK]], %[[W1]], %[[NEW]]

// Tests that under data parallelism only the averaged gradient norm decides
// (the loss is each rank's own).
// DP-LABEL: func.func @train_step
//   DP-NOT: tcc.abs
//       DP: %[[NORM:.*]] = tcc.sqrt
//       DP: tcc.compare le, %[[NORM]],

// Tests that without the option nothing of it is there.
// OFF-NOT: skip_nonfinite
// OFF-NOT: skipped

func.func @forward(%x: tensor<8x8xf32> {tcc.input = "x"}, %w1: tensor<8x16xf32> {tcc.param = "w1"},
                   %w2: tensor<16x4xf32> {tcc.param = "w2"}) -> (tensor<8x4xf32> {tcc.output = "pred"}) {
  %h = tcc.matmul %x, %w1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a = tcc.tanh %h : tensor<8x16xf32>
  %p = tcc.matmul %a, %w2 : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %p : tensor<8x4xf32>
}
