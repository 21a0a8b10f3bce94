// RUN: tcc-opt --split-input-file --pass-pipeline='builtin.module(func.func(tcc-rematerialize{arena-budget=16384}))' %s | FileCheck %s
// RUN: tcc-opt --split-input-file --pass-pipeline='builtin.module(func.func(tcc-rematerialize{mode=max}))' %s | FileCheck %s --check-prefix=MAX
// RUN: tcc-opt --split-input-file --pass-pipeline='builtin.module(func.func(tcc-rematerialize))' %s | FileCheck %s --check-prefix=OFF
// RUN: tcc-opt --split-input-file --pass-pipeline='builtin.module(func.func(tcc-rematerialize{arena-budget=20480}))' %s | FileCheck %s --check-prefix=GROUP
// RUN: not tcc-opt --pass-pipeline='builtin.module(func.func(tcc-rematerialize{mode=some}))' %s 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: for the --mode option: Cannot find option named 'some'!

// Tests that a value kept across the peak (%h, 4 KiB, read only at the end)
// is recomputed right before its last reader, from the input, which brings
// the live bytes at the peak (x, h, a, b, c: 20 KiB) down to the budget of
// 16 KiB; and that the function records what it recomputed.
// CHECK-LABEL: func.func @across_the_peak
//  CHECK-SAME: tcc.remat = {peak_after = 16384 : i64, peak_before = 20480 : i64, recompute_flops = 1.638400e+04 : f64, recomputed = [{bytes = 4096 : i64, flops = 1.638400e+04 : f64, name = "h", op = "tcc.exp"}]
//   CHECK-NOT:   tcc.exp
//       CHECK:   tcc.tanh
//       CHECK:   %[[C:.+]] = tcc.add
//       CHECK:   %[[H:.+]] = tcc.exp %arg0
//       CHECK:   tcc.mul %[[C]], %[[H]]
// Without a budget nothing changes.
// OFF-LABEL: func.func @across_the_peak
//  OFF-NOT: tcc.remat
//      OFF:   tcc.exp
// OFF-NEXT:   tcc.tanh
func.func @across_the_peak(%x: tensor<1024xf32> {tcc.input = "x"}, %p: tensor<4xf32> {tcc.param = "p"})
    -> (tensor<1024xf32> {tcc.output = "y"}, tensor<4xf32> {tcc.update = "p"}) {
  %h = tcc.exp %x : tensor<1024xf32> loc("h")
  %a = tcc.tanh %x : tensor<1024xf32>
  %b = tcc.mul %a, %a : tensor<1024xf32>
  %c = tcc.add %b, %a : tensor<1024xf32>
  %y = tcc.mul %c, %h : tensor<1024xf32>
  %q = tcc.neg %p : tensor<4xf32>
  return %y, %q : tensor<1024xf32>, tensor<4xf32>
}

// -----

// Tests that a chain kept across the peak is recomputed as a chain with
// mode=max: the negation of the recomputed exponential, both after the peak.
// MAX-LABEL: func.func @chain
//       MAX:   tcc.tanh
//       MAX:   %[[C:.+]] = tcc.add
//       MAX:   %[[E:.+]] = tcc.exp %arg0
//       MAX:   %[[N:.+]] = tcc.neg %[[E]]
//       MAX:   tcc.mul %[[C]], %[[N]]
func.func @chain(%x: tensor<1024xf32> {tcc.input = "x"}, %p: tensor<4xf32> {tcc.param = "p"})
    -> (tensor<1024xf32> {tcc.output = "y"}, tensor<4xf32> {tcc.update = "p"}) {
  %e = tcc.exp %x : tensor<1024xf32>
  %n = tcc.neg %e : tensor<1024xf32>
  %a = tcc.tanh %x : tensor<1024xf32>
  %b = tcc.mul %a, %a : tensor<1024xf32>
  %c = tcc.add %b, %a : tensor<1024xf32>
  %y = tcc.mul %c, %n : tensor<1024xf32>
  %q = tcc.neg %p : tensor<4xf32>
  return %y, %q : tensor<1024xf32>, tensor<4xf32>
}

// -----

// Tests that a function that updates no parameter (inference) is left as
// it is, even with mode=max.
// MAX-LABEL: func.func @inference
//   MAX-NOT:   tcc.remat
//       MAX:   tcc.exp
//  MAX-NEXT:   tcc.tanh
func.func @inference(%x: tensor<1024xf32> {tcc.input = "x"}) -> (tensor<1024xf32> {tcc.output = "y"}) {
  %h = tcc.exp %x : tensor<1024xf32>
  %a = tcc.tanh %x : tensor<1024xf32>
  %b = tcc.mul %a, %a : tensor<1024xf32>
  %c = tcc.add %b, %a : tensor<1024xf32>
  %y = tcc.mul %c, %h : tensor<1024xf32>
  return %y : tensor<1024xf32>
}

// -----

// Tests that a value read of a parameter is not recomputed after the
// parameter's in-place update (which would read the new value), and that a
// dropout (its mask) is never recomputed: nothing moves, even with mode=max.
// MAX-LABEL: func.func @pinned
//       MAX:   tcc.exp %arg0
//       MAX:   tcc.dropout
//       MAX:   tcc.tanh
func.func @pinned(%p: tensor<1024xf32> {tcc.param = "p"}, %x: tensor<1024xf32> {tcc.input = "x"})
    -> (tensor<1024xf32> {tcc.output = "y"}, tensor<1024xf32> {tcc.update = "p"}) {
  %h = tcc.exp %p : tensor<1024xf32>
  %d:2 = tcc.dropout %x {ratio = 0.5 : f64, stream = 0 : i64} : tensor<1024xf32>
  %a = tcc.tanh %x : tensor<1024xf32>
  %b = tcc.mul %a, %a : tensor<1024xf32>
  %c = tcc.add %b, %a : tensor<1024xf32>
  %new = tcc.sub %p, %c : tensor<1024xf32>
  %y0 = tcc.mul %c, %h : tensor<1024xf32>
  %y = tcc.mul %y0, %d#0 : tensor<1024xf32>
  return %y, %new : tensor<1024xf32>, tensor<1024xf32>
}

// -----

// Tests that a matmul kept across the peak (%h = x @ w, 16 KiB, read only
// at the end; w's update needs the result) is recomputed with mode=max like
// any other op: the same
// operands right before its reader (the library call it becomes sums in the
// same order; compiler/LLVMCodegen.cpp fixes the order of the reductions a
// clone fuses into).
// MAX-LABEL: func.func @matmul
//  MAX-SAME:   recomputed = [{bytes = 16384 : i64, flops = 5.242880e+05 : f64, {{.*}} op = "tcc.matmul"}]
//   MAX-NOT:   tcc.matmul
//       MAX:   tcc.tanh
//       MAX:   %[[C:.+]] = tcc.add
//       MAX:   %[[H:.+]] = tcc.matmul %arg0, %arg1
//       MAX:   tcc.mul %[[C]], %[[H]]
func.func @matmul(%x: tensor<64x64xf32> {tcc.input = "x"}, %w: tensor<64x64xf32> {tcc.param = "w"})
    -> (tensor<64x64xf32> {tcc.output = "y"}, tensor<64x64xf32> {tcc.update = "w"}) {
  %h = tcc.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = tcc.tanh %x : tensor<64x64xf32>
  %b = tcc.mul %a, %a : tensor<64x64xf32>
  %c = tcc.add %b, %a : tensor<64x64xf32>
  %y = tcc.mul %c, %h : tensor<64x64xf32>
  %q = tcc.sub %w, %y : tensor<64x64xf32>
  return %y, %q : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// Tests that two values recomputed from one matmul (%e and %t, both kept
// across the peak) recompute it once with mode=max: the second chain reads
// the first one's clone, which sits after the peak and before its reader.
// (The pass gets there by recomputing %e and %t from the kept %m as a
// group, then %m itself.)
// MAX-LABEL: func.func @shared_operand
//   MAX-NOT:   = tcc.matmul
//       MAX:   %[[C:.+]] = tcc.add
//       MAX:   %[[M:.+]] = tcc.matmul %arg0, %arg1
//       MAX:   %[[E:.+]] = tcc.exp %[[M]]
//       MAX:   %[[Y0:.+]] = tcc.mul %[[C]], %[[E]]
//   MAX-NOT:   = tcc.matmul
//       MAX:   %[[T:.+]] = tcc.tanh %[[M]]
//       MAX:   tcc.mul %[[Y0]], %[[T]]
func.func @shared_operand(%x: tensor<64x64xf32> {tcc.input = "x"}, %w: tensor<64x64xf32> {tcc.param = "w"})
    -> (tensor<64x64xf32> {tcc.output = "y"}, tensor<64x64xf32> {tcc.update = "w"}) {
  %m = tcc.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = tcc.exp %m : tensor<64x64xf32>
  %t = tcc.tanh %m : tensor<64x64xf32>
  %a = tcc.neg %x : tensor<64x64xf32>
  %b = tcc.mul %a, %a : tensor<64x64xf32>
  %c = tcc.add %b, %a : tensor<64x64xf32>
  %y0 = tcc.mul %c, %e : tensor<64x64xf32>
  %y = tcc.mul %y0, %t : tensor<64x64xf32>
  %q = tcc.sub %w, %y : tensor<64x64xf32>
  return %y, %q : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// Tests that, before recomputing anything, a parameter's update moves up to
// right after what it reads (here the gradient %g, from the inputs): the
// gradient no longer lives across the peak (tanh .. mul), nothing is
// recomputed, and the update still follows every other read of %w.
// MAX-LABEL: func.func @update_early
//  MAX-SAME:   recomputed = []
//       MAX:   %[[G:.+]] = tcc.mul %arg0, %arg1
//       MAX:   %[[L:.+]] = tcc.broadcast_in_dim %arg2
//       MAX:   %[[D:.+]] = tcc.mul %[[L]], %[[G]]
//       MAX:   %[[NEW:.+]] = tcc.sub %arg1, %[[D]]
//       MAX:   tcc.tanh %arg0
//       MAX:   return %{{.+}}, %[[NEW]]
func.func @update_early(%x: tensor<4096xf32> {tcc.input = "x"}, %w: tensor<4096xf32> {tcc.param = "w"},
                        %lr: tensor<f32> {tcc.input = "lr"})
    -> (tensor<4096xf32> {tcc.output = "y"}, tensor<4096xf32> {tcc.update = "w"}) {
  %g = tcc.mul %x, %w : tensor<4096xf32>
  %a = tcc.tanh %x : tensor<4096xf32>
  %b = tcc.mul %a, %a : tensor<4096xf32>
  %c = tcc.add %b, %a : tensor<4096xf32>
  %y = tcc.mul %c, %a : tensor<4096xf32>
  %l = tcc.broadcast_in_dim %lr, dims = [] : tensor<f32> -> tensor<4096xf32>
  %d = tcc.mul %l, %g : tensor<4096xf32>
  %new = tcc.sub %w, %d : tensor<4096xf32>
  return %y, %new : tensor<4096xf32>, tensor<4096xf32>
}

// -----

// Tests that an update moves early, ahead of the exp chain, yet waits for
// every other read of the old value (%w read by %r, which moves up with
// it), and that a broadcast of a scalar shared by two updates (as CSE
// leaves it) is copied into each, so that the first update does not wait
// for the second's place; the peak falls by one 16 KiB buffer.
// MAX-LABEL: func.func @update_waits
//  MAX-SAME:   peak_after = 81924 : i64, peak_before = 98308 : i64
//       MAX:   tcc.mul %arg0, %arg1
//       MAX:   tcc.broadcast_in_dim %arg3
//       MAX:   tcc.sub %arg1
//       MAX:   tcc.exp
//       MAX:   tcc.broadcast_in_dim %arg3
//       MAX:   tcc.sub %arg2
//       MAX:   return
func.func @update_waits(%x: tensor<4096xf32> {tcc.input = "x"}, %w: tensor<4096xf32> {tcc.param = "w"},
                        %v: tensor<4096xf32> {tcc.param = "v"}, %lr: tensor<f32> {tcc.input = "lr"})
    -> (tensor<4096xf32> {tcc.output = "y"}, tensor<4096xf32> {tcc.update = "w"}, tensor<4096xf32> {tcc.update = "v"}) {
  %gw = tcc.tanh %x : tensor<4096xf32>
  %r = tcc.mul %x, %w : tensor<4096xf32>
  %e = tcc.exp %r : tensor<4096xf32>
  %gv = tcc.mul %e, %v : tensor<4096xf32>
  %y = tcc.add %e, %gv : tensor<4096xf32>
  %l = tcc.broadcast_in_dim %lr, dims = [] : tensor<f32> -> tensor<4096xf32>
  %dw = tcc.mul %l, %gw : tensor<4096xf32>
  %nw = tcc.sub %w, %dw : tensor<4096xf32>
  %dv = tcc.mul %l, %gv : tensor<4096xf32>
  %nv = tcc.sub %v, %dv : tensor<4096xf32>
  return %y, %nw, %nv : tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>
}

// -----

// Tests that two values read late from one value that nothing else keeps
// (%a and %b from %m, two exponentials deep) are recomputed together from
// %m kept across the peak: alone, each would make %m live and free
// nothing, and the whole chain back to the input costs two exponentials.
// The peak (x, a, b, t, s at the add: 24 KiB) falls to 20 KiB.
// GROUP-LABEL: func.func @group
//  GROUP-SAME:   peak_after = 20480 : i64, peak_before = 24576 : i64
//       GROUP:   tcc.exp %arg0
//  GROUP-NEXT:   %[[M:.+]] = tcc.exp
//       GROUP:   %[[C:.+]] = tcc.add
//   GROUP-NOT:   tcc.exp
//       GROUP:   %[[A:.+]] = tcc.neg %[[M]]
//       GROUP:   %[[Y0:.+]] = tcc.mul %[[C]], %[[A]]
//       GROUP:   %[[B:.+]] = tcc.mul %[[M]], %[[M]]
//       GROUP:   tcc.mul %[[Y0]], %[[B]]
func.func @group(%x: tensor<1024xf32> {tcc.input = "x"}, %p: tensor<4xf32> {tcc.param = "p"})
    -> (tensor<1024xf32> {tcc.output = "y"}, tensor<4xf32> {tcc.update = "p"}) {
  %e = tcc.exp %x : tensor<1024xf32>
  %m = tcc.exp %e : tensor<1024xf32>
  %a = tcc.neg %m : tensor<1024xf32>
  %b = tcc.mul %m, %m : tensor<1024xf32>
  %t = tcc.tanh %x : tensor<1024xf32>
  %s = tcc.mul %t, %t : tensor<1024xf32>
  %c = tcc.add %s, %t : tensor<1024xf32>
  %y0 = tcc.mul %c, %a : tensor<1024xf32>
  %y = tcc.mul %y0, %b : tensor<1024xf32>
  %q = tcc.neg %p : tensor<4xf32>
  return %y, %q : tensor<1024xf32>, tensor<4xf32>
}

// -----

// Tests that a clone made for a late reader is moved up, not copied, when a
// value recomputed later for an earlier reader needs it: %n (cheap) is
// recomputed first, right before its late reader %y1; %a = exp(%n), read
// earlier, then reads that clone, moved up before it (the attention
// softmax that its backward and the recomputed attention output both
// read, in the GPT), and %w last; the budget is met with one negation
// after the peak, not two. (Under mode=max the copies reach a lower peak
// here, and the pass keeps those: CHECK-NOT below is for this budget.)
// GROUP-LABEL: func.func @hoist
//  GROUP-SAME:   peak_after = 20480 : i64, peak_before = 28672 : i64
//       GROUP:   %[[C:.+]] = tcc.add
//       GROUP:   %[[N:.+]] = tcc.neg %arg0
//       GROUP:   %[[A:.+]] = tcc.exp %[[N]]
//       GROUP:   %[[Y0:.+]] = tcc.mul %[[C]], %[[A]]
//   GROUP-NOT:   tcc.neg %arg0
//       GROUP:   tcc.mul %[[Y0]], %[[N]]
func.func @hoist(%x: tensor<1024xf32> {tcc.input = "x"}, %p: tensor<4xf32> {tcc.param = "p"})
    -> (tensor<1024xf32> {tcc.output = "y"}, tensor<4xf32> {tcc.update = "p"}) {
  %n = tcc.neg %x : tensor<1024xf32>
  %a = tcc.exp %n : tensor<1024xf32>
  %w1 = tcc.sin %x : tensor<1024xf32>
  %w = tcc.sin %w1 : tensor<1024xf32>
  %t = tcc.tanh %x : tensor<1024xf32>
  %s = tcc.mul %t, %t : tensor<1024xf32>
  %c = tcc.add %s, %t : tensor<1024xf32>
  %y0 = tcc.mul %c, %a : tensor<1024xf32>
  %y1 = tcc.mul %y0, %n : tensor<1024xf32>
  %y = tcc.mul %y1, %w : tensor<1024xf32>
  %q = tcc.neg %p : tensor<4xf32>
  return %y, %q : tensor<1024xf32>, tensor<4xf32>
}

// -----

// Tests that an op with several results is recomputed whole: the layer
// norm's normalized output, kept across the peak for its late reader, is
// recomputed there (its mean and inverse deviation, small, are read from
// the original).
// MAX-LABEL: func.func @layer_norm
//       MAX:   tcc.layer_norm
//       MAX:   %[[C:.+]] = tcc.add
//       MAX:   %[[R:.+]], %{{.+}}, %{{.+}} = tcc.layer_norm %arg0
//       MAX:   tcc.mul %[[C]], %[[R]]
func.func @layer_norm(%x: tensor<4x256xf32> {tcc.input = "x"}, %w: tensor<256xf32> {tcc.param = "w"},
                      %bias: tensor<256xf32> {tcc.param = "b"})
    -> (tensor<4x256xf32> {tcc.output = "y"}, tensor<4x1xf32> {tcc.output = "mean"}, tensor<256xf32> {tcc.update = "w"}) {
  %r, %mean, %inv = tcc.layer_norm %x, %w, %bias {axis = 1 : i64, epsilon = 1.0E-5 : f64} : tensor<4x256xf32>, tensor<256xf32>, tensor<256xf32> -> tensor<4x256xf32>, tensor<4x1xf32>, tensor<4x1xf32>
  %t = tcc.tanh %x : tensor<4x256xf32>
  %s = tcc.mul %t, %t : tensor<4x256xf32>
  %c = tcc.add %s, %t : tensor<4x256xf32>
  %y = tcc.mul %c, %r : tensor<4x256xf32>
  %q = tcc.neg %w : tensor<256xf32>
  return %y, %mean, %q : tensor<4x256xf32>, tensor<4x1xf32>, tensor<256xf32>
}
