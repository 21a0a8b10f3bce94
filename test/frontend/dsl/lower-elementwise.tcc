# RUN: tcc %s --batch=2 --emit=mlir-raw | FileCheck %s
# RUN: tcc %s --batch=2 --emit=mlir-raw --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
# Tests the lowering of arithmetic with numpy broadcasting (explicit
# broadcast_in_dim), numbers as splat constants of the result's shape,
# comparisons, where, unary builtins and slicing; and that every op is
# located at its DSL line and column.

model m(x: f32[B, 3], v: f32[3]) {
  let a = x * 2.0 + v
  let m = where(x > 0, x, -inf)
  let s = x[:, 1:3]
  let r = x[1]
  output a = a
  output m = sigmoid(m)
  output s = s
  output r = r
}

# CHECK-LABEL: func.func @forward(
#  CHECK-SAME: {tcc.input = "x"}
#  CHECK-SAME: {tcc.input = "v"}
#  CHECK-SAME: {tcc.output = "a"}
#       CHECK: %[[TWO:.+]] = tcc.constant dense<2.000000e+00> : tensor<2x3xf32>
#       CHECK: %[[MUL:.+]] = tcc.mul %arg0, %[[TWO]] : tensor<2x3xf32>
#       CHECK: %[[V:.+]] = tcc.broadcast_in_dim %arg1, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
#       CHECK: tcc.add %[[MUL]], %[[V]] : tensor<2x3xf32>
#       CHECK: %[[GT:.+]] = tcc.compare gt, %arg0, %{{.+}} : tensor<2x3xf32>
#       CHECK: %[[NEGINF:.+]] = tcc.constant dense<0xFF800000> : tensor<2x3xf32>
#       CHECK: %[[SEL:.+]] = tcc.select %[[GT]], %arg0, %[[NEGINF]]
#       CHECK: tcc.slice %arg0, start = [0, 1], stride = [1, 1] : tensor<2x3xf32> -> tensor<2x2xf32>
#       CHECK: %[[ROW:.+]] = tcc.slice %arg0, start = [1, 0], stride = [1, 1] : tensor<2x3xf32> -> tensor<1x3xf32>
#       CHECK: tcc.reshape %[[ROW]] : tensor<1x3xf32> -> tensor<3xf32>
#       CHECK: tcc.sigmoid %[[SEL]]

# The add is at the '+' of line 9, the slice at its '['.
# LOC-DAG: loc("{{.*}}lower-elementwise.tcc":9:19)
# LOC-DAG: loc("{{.*}}lower-elementwise.tcc":11:12)
