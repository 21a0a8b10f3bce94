// RUN: not tcc-opt --tcc-autodiff %s -o /dev/null 2>&1 | FileCheck %s

// Ops without a gradient rule on the path from the parameters to the loss
// are reported together, by node name, in program order; the one off the
// path (on an input, which needs no gradient) is not. (Every tcc op has a
// rule or is not differentiable; ops of other dialects have none.)
// CHECK: error: autodiff: no gradient rule for 2 op(s) between the parameters and the loss:
// CHECK-NEXT: arith.mulf (node 'square_hidden')
// CHECK-NEXT: arith.negf (node 'neg_out')
// CHECK-NOT: neg_input
func.func @missing(%p: tensor<4xf32> {tcc.param = "p"}, %x: tensor<4xf32> {tcc.input = "x"}) -> tensor<f32> {
  %xd = arith.negf %x : tensor<4xf32> loc("neg_input")
  %s = tcc.add %p, %xd : tensor<4xf32>
  %h = arith.mulf %s, %s : tensor<4xf32> loc("square_hidden")
  %o = arith.negf %h : tensor<4xf32> loc("neg_out")
  %l = tcc.reduce_sum %o {axes = array<i64: 0>, keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
