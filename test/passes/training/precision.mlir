// RUN: tcc-opt --split-input-file --tcc-precision=precision=bf16 %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-precision=precision=fp16 --canonicalize %s | FileCheck %s --check-prefix=FOLD
// RUN: not tcc-opt --split-input-file --tcc-precision=precision=fp8 %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// Tests that a dense layer computes in 16 bits: its input and weight are cast
// down once each, the bias add and the relu follow the product's 16-bit
// type, and the result goes back to f32 at the return (signatures stay f32).
// CHECK-LABEL: func.func @dense
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x2xf32>, %[[B:.*]]: tensor<4x2xf32>) -> tensor<4x2xf32>
//   CHECK-DAG: %[[XB:.*]] = tcc.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xbf16>
//   CHECK-DAG: %[[WB:.*]] = tcc.cast %[[W]] : tensor<8x2xf32> to tensor<8x2xbf16>
//   CHECK-DAG: %[[BB:.*]] = tcc.cast %[[B]] : tensor<4x2xf32> to tensor<4x2xbf16>
//       CHECK: %[[P:.*]] = tcc.matmul %[[XB]], %[[WB]] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
//       CHECK: %[[S:.*]] = tcc.add %[[P]], %[[BB]] : tensor<4x2xbf16>
//       CHECK: %[[R:.*]] = tcc.relu %[[S]] : tensor<4x2xbf16>
//       CHECK: %[[OUT:.*]] = tcc.cast %[[R]] : tensor<4x2xbf16> to tensor<4x2xf32>
//       CHECK: return %[[OUT]] : tensor<4x2xf32>
func.func @dense(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>, %b: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %p = tcc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %s = tcc.add %p, %b : tensor<4x2xf32>
  %r = tcc.relu %s : tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// Tests that softmax between two products keeps the product's 16-bit type
// (widened: the lowering computes it in f32 inside and rounds once), so its
// probabilities are stored in 16 bits, while log-softmax (fp32, it feeds
// the loss) reads the product cast up once.
// CHECK-LABEL: func.func @attention
//       CHECK: %[[S:.*]] = tcc.matmul {{.*}} -> tensor<4x4xbf16>
//       CHECK: %[[S32:.*]] = tcc.cast %[[S]] : tensor<4x4xbf16> to tensor<4x4xf32>
//       CHECK: %[[P:.*]] = tcc.softmax %[[S]] {axis = 1 : i64} : tensor<4x4xbf16>
//       CHECK: tcc.matmul %[[P]], {{.*}} -> tensor<4x8xbf16>
//       CHECK: tcc.log_softmax %[[S32]] {axis = 1 : i64} : tensor<4x4xf32>
//   CHECK-NOT: tcc.cast %[[P]]
func.func @attention(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>) {
  %s = tcc.matmul %q, %k : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %p = tcc.softmax %s {axis = 1 : i64} : tensor<4x4xf32>
  %o = tcc.matmul %p, %v : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = tcc.log_softmax %s {axis = 1 : i64} : tensor<4x4xf32>
  return %o, %n : tensor<4x8xf32>, tensor<4x4xf32>
}

// -----

// Tests that a sum of a 16-bit value accumulates in f32 (reductions are in
// the fp32 class) and that ops on f32 values alone stay f32.
// CHECK-LABEL: func.func @sum
//       CHECK: %[[P:.*]] = tcc.matmul {{.*}} -> tensor<4x2xbf16>
//       CHECK: %[[P32:.*]] = tcc.cast %[[P]] : tensor<4x2xbf16> to tensor<4x2xf32>
//       CHECK: %[[R:.*]] = tcc.reduce_sum %[[P32]] {{.*}} -> tensor<2xf32>
//       CHECK: tcc.mul %[[R]], %[[R]] : tensor<2xf32>
//       CHECK: tcc.exp %{{.*}} : tensor<4x8xf32>
func.func @sum(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> (tensor<2xf32>, tensor<4x8xf32>) {
  %p = tcc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %r = tcc.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : tensor<4x2xf32> -> tensor<2xf32>
  %q = tcc.mul %r, %r : tensor<2xf32>
  %e = tcc.exp %x : tensor<4x8xf32>
  return %q, %e : tensor<2xf32>, tensor<4x8xf32>
}

// -----

// Tests that an op marked tcc.keep_fp32 (the optimizer) reads a 16-bit
// gradient cast up, computes in f32, and loses the mark.
// CHECK-LABEL: func.func @update
//       CHECK: %[[G:.*]] = tcc.matmul {{.*}} -> tensor<8x2xbf16>
//       CHECK: %[[G32:.*]] = tcc.cast %[[G]] : tensor<8x2xbf16> to tensor<8x2xf32>
//       CHECK: tcc.sub %{{.*}}, %[[G32]] : tensor<8x2xf32>
//   CHECK-NOT: tcc.keep_fp32
func.func @update(%x: tensor<4x8xf32>, %d: tensor<4x2xf32>, %w: tensor<8x2xf32>) -> tensor<8x2xf32> {
  %xt = tcc.transpose %x, perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %g = tcc.matmul %xt, %d : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %n = tcc.sub %w, %g {tcc.keep_fp32} : tensor<8x2xf32>
  return %n : tensor<8x2xf32>
}

// -----

// Tests that a value moved (transposed, reshaped, broadcast) only to be cast
// is cast before it moves: the backward's `x.T @ dy` reads the transpose of
// the one rounding of x that the forward's `x @ w` reads (no second cast,
// no strided one), a broadcast is cast before it grows, and the optimizer
// reads the transposed f32 cast of the 16-bit gradient.
// CHECK-LABEL: func.func @moves
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x2xf32>, %[[D:.*]]: tensor<4x2xf32>, %[[M:.*]]: tensor<4x1xf32>
//   CHECK-DAG: %[[XB:.*]] = tcc.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xbf16>
//   CHECK-DAG: %[[MB:.*]] = tcc.cast %[[M]] : tensor<4x1xf32> to tensor<4x1xbf16>
//       CHECK: %[[Y:.*]] = tcc.matmul %[[XB]], %{{.*}} -> tensor<4x2xbf16>
//       CHECK: %[[XT:.*]] = tcc.transpose %[[XB]], perm = [1, 0] : tensor<4x8xbf16> -> tensor<8x4xbf16>
//       CHECK: %[[G:.*]] = tcc.matmul %[[XT]], %{{.*}} -> tensor<8x2xbf16>
//       CHECK: %[[G32:.*]] = tcc.cast %[[G]] : tensor<8x2xbf16> to tensor<8x2xf32>
//       CHECK: %[[GT:.*]] = tcc.transpose %[[G32]], perm = [1, 0] : tensor<8x2xf32> -> tensor<2x8xf32>
//       CHECK: tcc.sub %{{.*}}, %[[GT]] : tensor<2x8xf32>
//       CHECK: tcc.broadcast_in_dim %[[MB]], dims = [0, 1] : tensor<4x1xbf16> -> tensor<4x2xbf16>
//   CHECK-NOT: tcc.cast %{{.*}} : tensor<8x4xf32> to tensor<8x4xbf16>
func.func @moves(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>, %d: tensor<4x2xf32>, %m: tensor<4x1xf32>, %v: tensor<2x8xf32>)
    -> (tensor<4x2xf32>, tensor<2x8xf32>, tensor<4x2xf32>) {
  %y = tcc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %xt = tcc.transpose %x, perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %g = tcc.matmul %xt, %d : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %gt = tcc.transpose %g, perm = [1, 0] : tensor<8x2xf32> -> tensor<2x8xf32>
  %n = tcc.sub %v, %gt {tcc.keep_fp32} : tensor<2x8xf32>
  %mb = tcc.broadcast_in_dim %m, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x2xf32>
  %s = tcc.sub %y, %mb : tensor<4x2xf32>
  return %y, %n, %s : tensor<4x2xf32>, tensor<2x8xf32>, tensor<4x2xf32>
}

// -----

// Tests that f64 values and integer ops are left alone.
// CHECK-LABEL: func.func @wide
//       CHECK: tcc.matmul {{.*}} -> tensor<2x2xf64>
//       CHECK: tcc.add {{.*}} : tensor<2xi64>
//   CHECK-NOT: tcc.cast
func.func @wide(%x: tensor<2x2xf64>, %i: tensor<2xi64>) -> (tensor<2x2xf64>, tensor<2xi64>) {
  %p = tcc.matmul %x, %x : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %j = tcc.add %i, %i : tensor<2xi64>
  return %p, %j : tensor<2x2xf64>, tensor<2xi64>
}

// -----

// Tests that under fp16 the cast of a constant folds into an f16 constant
// and a 16-bit -> f32 -> 16-bit round trip disappears.
// CHECK-LABEL: func.func @folds
// FOLD-LABEL: func.func @folds
//   FOLD-DAG: %[[C:.*]] = tcc.constant dense<5.000000e-01> : tensor<4x2xf16>
//       FOLD: %[[P:.*]] = tcc.matmul {{.*}} -> tensor<4x2xf16>
//       FOLD: tcc.mul %[[P]], %[[C]] : tensor<4x2xf16>
//   FOLD-NOT: tcc.cast %{{.*}} : tensor<4x2xf32> to tensor<4x2xf16>
func.func @folds(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %c = tcc.constant dense<0.5> : tensor<4x2xf32>
  %p = tcc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %m = tcc.mul %p, %c : tensor<4x2xf32>
  return %m : tensor<4x2xf32>
}

// BAD: for the --precision option: Cannot find option named 'fp8'!

// -----

// Tests that in train_step the forward reads each parameter's 16-bit copy, a
// state argument (through a transpose: `x @ w.T` moves the copy, not the
// f32 weight), that no cast of a parameter is left, and that the update
// writes the new parameter's rounding into the copy; @init_state takes the
// parameters and state in train_step's order and makes the copy from the
// parameter.
// CHECK-LABEL: func.func @train_step
//  CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x8xf32> {tcc.input = "x"}, %[[W:[a-z0-9]+]]: tensor<2x8xf32> {tcc.param = "w"}, %[[M:[a-z0-9]+]]: tensor<2x8xf32> {tcc.state = "w.m"}, %[[C:[a-z0-9]+]]: tensor<2x8xbf16> {tcc.state = "w.bf16"})
//  CHECK-SAME: tensor<2x8xbf16> {tcc.update = "w.bf16"})
//   CHECK-NOT: tcc.cast %[[W]]
//       CHECK: %[[T:.*]] = tcc.transpose %[[C]], perm = [1, 0] : tensor<2x8xbf16> -> tensor<8x2xbf16>
//       CHECK: tcc.matmul %{{.*}}, %[[T]]
//   CHECK-NOT: tcc.cast %[[W]]
//       CHECK: %[[NEW:.*]] = tcc.sub %[[W]]
//  CHECK-NEXT: %[[NEWC:.*]] = tcc.cast %[[NEW]] : tensor<2x8xf32> to tensor<2x8xbf16>
//       CHECK: return {{.*}}, %[[NEW]], {{.*}}, %[[NEWC]] : {{.*}}, tensor<2x8xbf16>
// CHECK-LABEL: func.func @init_state
//  CHECK-SAME: (%[[P:[a-z0-9]+]]: tensor<2x8xf32> {tcc.param = "w"}, %{{.*}}: tensor<2x8xf32> {tcc.state = "w.m"}, %{{.*}}: tensor<2x8xbf16> {tcc.state = "w.bf16"})
//  CHECK-SAME: -> (tensor<2x8xbf16> {tcc.update = "w.bf16"})
//       CHECK: %[[R:.*]] = tcc.cast %[[P]] : tensor<2x8xf32> to tensor<2x8xbf16>
//       CHECK: return %[[R]]
func.func @train_step(%x: tensor<4x8xf32> {tcc.input = "x"}, %w: tensor<2x8xf32> {tcc.param = "w"},
                      %m: tensor<2x8xf32> {tcc.state = "w.m"})
    -> (tensor<f32> {tcc.output = "loss"}, tensor<2x8xf32> {tcc.update = "w"},
        tensor<2x8xf32> {tcc.update = "w.m"}) {
  %wt = tcc.transpose %w, perm = [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
  %y = tcc.matmul %x, %wt : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %l = tcc.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : tensor<4x2xf32> -> tensor<f32>
  %new = tcc.sub %w, %m {tcc.keep_fp32} : tensor<2x8xf32>
  return %l, %new, %m : tensor<f32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// A slice of a parameter (a filter trimmed to the taps that meet its
// input) gets a copy of its own, of the slice's shape, named after the
// window: the forward reads it instead of slicing and casting the f32
// filter, the update writes the slice of the new parameter's rounding,
// and @init_state makes it the same way. Two slices of one window read one
// copy.
// CHECK-LABEL: func.func @train_step
//  CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<8x4x3x3xf32> {tcc.param = "w"}
//  CHECK-SAME: %[[C:[a-z0-9]+]]: tensor<8x4x1x1xbf16> {tcc.state = "w[:,:,1:2,1:2].bf16"})
//  CHECK-SAME: tensor<8x4x1x1xbf16> {tcc.update = "w[:,:,1:2,1:2].bf16"})
//   CHECK-NOT: tcc.slice %[[W]]
//       CHECK: tcc.conv %{{.*}}, %[[C]]
//       CHECK: tcc.conv %{{.*}}, %[[C]]
//       CHECK: %[[NEW:.*]] = tcc.sub %[[W]]
//  CHECK-NEXT: %[[S:.*]] = tcc.slice %[[NEW]], start = [0, 0, 1, 1], stride = [1, 1, 1, 1] : tensor<8x4x3x3xf32> -> tensor<8x4x1x1xf32>
//  CHECK-NEXT: %[[NEWC:.*]] = tcc.cast %[[S]] : tensor<8x4x1x1xf32> to tensor<8x4x1x1xbf16>
//       CHECK: return {{.*}}, %[[NEWC]] :
// CHECK-LABEL: func.func @init_state
//  CHECK-SAME: -> (tensor<8x4x1x1xbf16> {tcc.update = "w[:,:,1:2,1:2].bf16"})
//       CHECK: %[[S:.*]] = tcc.slice %{{.*}}, start = [0, 0, 1, 1], stride = [1, 1, 1, 1]
//       CHECK: tcc.cast %[[S]] : tensor<8x4x1x1xf32> to tensor<8x4x1x1xbf16>
func.func @train_step(%x: tensor<2x4x1x1xf32> {tcc.input = "x"}, %w: tensor<8x4x3x3xf32> {tcc.param = "w"},
                      %m: tensor<8x4x3x3xf32> {tcc.state = "w.m"})
    -> (tensor<f32> {tcc.output = "loss"}, tensor<8x4x3x3xf32> {tcc.update = "w"}) {
  %s = tcc.slice %w, start = [0, 0, 1, 1], stride = [1, 1, 1, 1] : tensor<8x4x3x3xf32> -> tensor<8x4x1x1xf32>
  %y1 = tcc.conv %x, %s {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, group = 1 : i64} : (tensor<2x4x1x1xf32>, tensor<8x4x1x1xf32>) -> tensor<2x8x1x1xf32>
  %s2 = tcc.slice %w, start = [0, 0, 1, 1], stride = [1, 1, 1, 1] : tensor<8x4x3x3xf32> -> tensor<8x4x1x1xf32>
  %y2 = tcc.conv %x, %s2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, group = 1 : i64} : (tensor<2x4x1x1xf32>, tensor<8x4x1x1xf32>) -> tensor<2x8x1x1xf32>
  %y = tcc.add %y1, %y2 : tensor<2x8x1x1xf32>
  %l = tcc.reduce_sum %y {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<2x8x1x1xf32> -> tensor<f32>
  %new = tcc.sub %w, %m {tcc.keep_fp32} : tensor<8x4x3x3xf32>
  return %l, %new : tensor<f32>, tensor<8x4x3x3xf32>
}
