// RUN: not tcc-opt --tcc-autodiff %s -o /dev/null 2>&1 | FileCheck %s

// Ops without a gradient rule on the path from the parameters to the loss
// are reported together, by node name; the one off the path (the cumsum of
// an input) is not.
// CHECK: error: autodiff: no gradient rule for 2 op(s) between the parameters and the loss:
// CHECK-NEXT: tcc.cumsum (node 'running_total')
// CHECK-NEXT: tcc.reduce_max (node 'peak')
func.func @missing(%p: tensor<4xf32> {tcc.param = "p"}, %x: tensor<4xf32> {tcc.input = "x"}) -> tensor<f32> {
  %c = tcc.cumsum %x {axis = 0 : i64} : tensor<4xf32> loc("input_total")
  %s = tcc.add %p, %c : tensor<4xf32>
  %r = tcc.cumsum %s {axis = 0 : i64} : tensor<4xf32> loc("running_total")
  %m = tcc.reduce_max %r {axes = array<i64: 0>, keepdims = false} : tensor<4xf32> -> tensor<f32> loc("peak")
  return %m : tensor<f32>
}
