// RUN: not tcc-opt --tcc-autodiff %s -o /dev/null 2>&1 | FileCheck %s

// Ops without a gradient rule on the path from the parameters to the loss
// are reported together, by node name; the one off the path (the product of
// an input, which needs no gradient) is not.
// CHECK: error: autodiff: no gradient rule for 2 op(s) between the parameters and the loss:
// CHECK-NEXT: tcc.reduce_prod (node 'partial_products')
// CHECK-NEXT: tcc.reduce_prod (node 'product')
func.func @missing(%p: tensor<4xf32> {tcc.param = "p"}, %x: tensor<4xf32> {tcc.input = "x"}) -> tensor<f32> {
  %x0 = tcc.reduce_prod %x {axes = array<i64: 0>, keepdims = true} : tensor<4xf32> -> tensor<1xf32> loc("input_product")
  %c = tcc.broadcast_in_dim %x0, dims = [0] : tensor<1xf32> -> tensor<4xf32>
  %s = tcc.add %p, %c : tensor<4xf32>
  %r = tcc.reduce_prod %s {axes = array<i64: 0>, keepdims = true} : tensor<4xf32> -> tensor<1xf32> loc("partial_products")
  %m = tcc.reduce_prod %r {axes = array<i64: 0>, keepdims = false} : tensor<1xf32> -> tensor<f32> loc("product")
  return %m : tensor<f32>
}
