// RUN: not tcc-opt --tcc-autodiff %s -o /dev/null 2>&1 | FileCheck %s

// Ops without a gradient rule on the path from the parameters to the loss
// are reported together, by node name, in program order; the one off the
// path (a dropout of an input, which needs no gradient) is not.
// CHECK: error: autodiff: no gradient rule for 2 op(s) between the parameters and the loss:
// CHECK-NEXT: tcc.dropout (node 'drop_hidden')
// CHECK-NEXT: tcc.dropout (node 'drop_out')
// CHECK-NOT: drop_input
func.func @missing(%p: tensor<4xf32> {tcc.param = "p"}, %x: tensor<4xf32> {tcc.input = "x"}) -> tensor<f32> {
  %xd, %xm = tcc.dropout %x {ratio = 1.0e-01 : f64, stream = 0 : i64} : tensor<4xf32> loc("drop_input")
  %s = tcc.add %p, %xd : tensor<4xf32>
  %h, %hm = tcc.dropout %s {ratio = 1.0e-01 : f64, stream = 1 : i64} : tensor<4xf32> loc("drop_hidden")
  %o, %om = tcc.dropout %h {ratio = 1.0e-01 : f64, stream = 2 : i64} : tensor<4xf32> loc("drop_out")
  %l = tcc.reduce_sum %o {axes = array<i64: 0>, keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
