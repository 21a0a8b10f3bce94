// RUN: tcc-opt --split-input-file --pass-pipeline='builtin.module(func.func(tcc-rematerialize{arena-budget=1048576}))' %s | FileCheck %s

// The cost interface (KernelCostOpInterface, attached to tcc's ops) as
// tcc-rematerialize reads it: iterations x cost per point, with the weights
// the linalg models use (passes/graph/KernelCost.h). Each function holds
// one op, so the step's arithmetic that the pass records (step_flops) is
// that op's; the budget is above every peak, so nothing is recomputed.

// A transcendental function: 16 per element, 8x16 x 16.
// CHECK-LABEL: func.func @exp
//  CHECK-SAME: step_flops = 2.048000e+03
func.func @exp(%x: tensor<8x16xf32> {tcc.input = "x"}, %p: tensor<1xf32> {tcc.param = "p"})
    -> (tensor<8x16xf32> {tcc.output = "y"}, tensor<1xf32> {tcc.update = "p"}) {
  %y = tcc.exp %x : tensor<8x16xf32>
  return %y, %p : tensor<8x16xf32>, tensor<1xf32>
}

// -----

// A division: 8 per element, 8x16 x 8.
// CHECK-LABEL: func.func @div
//  CHECK-SAME: step_flops = 1.024000e+03
func.func @div(%x: tensor<8x16xf32> {tcc.input = "x"}, %p: tensor<1xf32> {tcc.param = "p"})
    -> (tensor<8x16xf32> {tcc.output = "y"}, tensor<1xf32> {tcc.update = "p"}) {
  %y = tcc.div %x, %x : tensor<8x16xf32>
  return %y, %p : tensor<8x16xf32>, tensor<1xf32>
}

// -----

// A matmul: a multiply-add (2) per result element and reduced element,
// 4x16 x 32 x 2.
// CHECK-LABEL: func.func @matmul
//  CHECK-SAME: step_flops = 4.096000e+03
func.func @matmul(%a: tensor<4x32xf32> {tcc.input = "a"}, %b: tensor<32x16xf32> {tcc.input = "b"},
                  %p: tensor<1xf32> {tcc.param = "p"})
    -> (tensor<4x16xf32> {tcc.output = "y"}, tensor<1xf32> {tcc.update = "p"}) {
  %y = tcc.matmul %a, %b : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
  return %y, %p : tensor<4x16xf32>, tensor<1xf32>
}

// -----

// A convolution: a multiply-add per result element and filter element of
// one output channel, 1x4x8x8 x 3x3x3 x 2.
// CHECK-LABEL: func.func @conv
//  CHECK-SAME: step_flops = 1.382400e+04
func.func @conv(%x: tensor<1x3x8x8xf32> {tcc.input = "x"}, %w: tensor<4x3x3x3xf32> {tcc.param = "w"})
    -> (tensor<1x4x8x8xf32> {tcc.output = "y"}, tensor<4x3x3x3xf32> {tcc.update = "w"}) {
  %y = tcc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %y, %w : tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>
}

// -----

// A convolution's filter gradient: a multiply-add per filter element,
// batch row and output position, 6x2x2x3 x 1x3x3 x 2.
// CHECK-LABEL: func.func @conv_backward_filter
//  CHECK-SAME: step_flops = 1.296000e+03
func.func @conv_backward_filter(%x: tensor<1x4x8x8xf32> {tcc.input = "x"}, %g: tensor<1x6x3x3xf32> {tcc.input = "g"},
                                %p: tensor<1xf32> {tcc.param = "p"})
    -> (tensor<6x2x2x3xf32> {tcc.output = "y"}, tensor<1xf32> {tcc.update = "p"}) {
  %y = tcc.conv_backward_filter %x, %g {dilations = array<i64: 1, 1>, group = 2 : i64, kernel = array<i64: 2, 3>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 1, 0>, strides = array<i64: 3, 2>} : (tensor<1x4x8x8xf32>, tensor<1x6x3x3xf32>) -> tensor<6x2x2x3xf32>
  return %y, %p : tensor<6x2x2x3xf32>, tensor<1xf32>
}

// -----

// Softmax: a max, a subtraction, an exp, a sum and a scaling per input
// element (16 + 4), 8x16 x 20.
// CHECK-LABEL: func.func @softmax
//  CHECK-SAME: step_flops = 2.560000e+03
func.func @softmax(%x: tensor<8x16xf32> {tcc.input = "x"}, %p: tensor<1xf32> {tcc.param = "p"})
    -> (tensor<8x16xf32> {tcc.output = "y"}, tensor<1xf32> {tcc.update = "p"}) {
  %y = tcc.softmax %x {axis = 1 : i64} : tensor<8x16xf32>
  return %y, %p : tensor<8x16xf32>, tensor<1xf32>
}

// -----

// Layer norm: 10 simple ops per input element, 8x16 x 10.
// CHECK-LABEL: func.func @layer_norm
//  CHECK-SAME: step_flops = 1.280000e+03
func.func @layer_norm(%x: tensor<8x16xf32> {tcc.input = "x"}, %g: tensor<16xf32> {tcc.param = "g"})
    -> (tensor<8x16xf32> {tcc.output = "y"}, tensor<16xf32> {tcc.update = "g"}) {
  %y, %mean, %rstd = tcc.layer_norm %x, %g, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<8x16xf32>, tensor<8x1xf32>, tensor<8x1xf32>
  return %y, %g : tensor<8x16xf32>, tensor<16xf32>
}

// -----

// A reshape is a view: no arithmetic.
// CHECK-LABEL: func.func @reshape
//  CHECK-SAME: step_flops = 0.000000e+00
func.func @reshape(%x: tensor<8x16xf32> {tcc.input = "x"}, %p: tensor<1xf32> {tcc.param = "p"})
    -> (tensor<128xf32> {tcc.output = "y"}, tensor<1xf32> {tcc.update = "p"}) {
  %y = tcc.reshape %x : tensor<8x16xf32> -> tensor<128xf32>
  return %y, %p : tensor<128xf32>, tensor<1xf32>
}

// -----

// An op without a family of its own (a reduction) takes the default: one
// simple op per element of the larger of its result and its first operand,
// 8x16 x 1.
// CHECK-LABEL: func.func @reduce_sum
//  CHECK-SAME: step_flops = 1.280000e+02
func.func @reduce_sum(%x: tensor<8x16xf32> {tcc.input = "x"}, %p: tensor<1xf32> {tcc.param = "p"})
    -> (tensor<8x1xf32> {tcc.output = "y"}, tensor<1xf32> {tcc.update = "p"}) {
  %y = tcc.reduce_sum %x {axes = array<i64: 1>} : tensor<8x16xf32> -> tensor<8x1xf32>
  return %y, %p : tensor<8x1xf32>, tensor<1xf32>
}
