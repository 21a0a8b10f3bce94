// RUN: tcc-opt %s | tcc-opt | FileCheck %s
// RUN: tcc-opt %s --mlir-print-op-generic | tcc-opt | FileCheck %s

// Round trip of every tcc op, in the custom and in the generic form, grouped by
// op family. Attributes at their default value are elided when printed.

// Constants.
// CHECK-LABEL: func.func @constant
func.func @constant() {
  // Tests a non-splat integer constant.
  // CHECK: tcc.constant dense<[1, 2]> : tensor<2xi64>
  %0 = tcc.constant dense<[1, 2]> : tensor<2xi64>
  // Tests a splat float constant.
  // CHECK: tcc.constant dense<1.500000e+00> : tensor<2x3xf32>
  %1 = tcc.constant dense<1.5> : tensor<2x3xf32>
  // Tests a boolean constant.
  // CHECK: tcc.constant dense<[true, false]> : tensor<2xi1>
  %2 = tcc.constant dense<[true, false]> : tensor<2xi1>
  // Tests a rank-0 constant of an unsigned type.
  // CHECK: tcc.constant dense<255> : tensor<ui8>
  %3 = tcc.constant dense<255> : tensor<ui8>
  return
}

// Elementwise unary ops on floats.
// CHECK-LABEL: func.func @unary_float
//  CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[H:.+]]: tensor<2xbf16>)
func.func @unary_float(%x: tensor<4xf32>, %h: tensor<2xbf16>) {
  // Tests exp.
  // CHECK: tcc.exp %[[X]] : tensor<4xf32>
  %0 = tcc.exp %x : tensor<4xf32>
  // Tests log.
  // CHECK: tcc.log %[[X]] : tensor<4xf32>
  %1 = tcc.log %x : tensor<4xf32>
  // Tests sqrt.
  // CHECK: tcc.sqrt %[[X]] : tensor<4xf32>
  %2 = tcc.sqrt %x : tensor<4xf32>
  // Tests rsqrt.
  // CHECK: tcc.rsqrt %[[X]] : tensor<4xf32>
  %3 = tcc.rsqrt %x : tensor<4xf32>
  // Tests reciprocal.
  // CHECK: tcc.reciprocal %[[X]] : tensor<4xf32>
  %4 = tcc.reciprocal %x : tensor<4xf32>
  // Tests tanh.
  // CHECK: tcc.tanh %[[X]] : tensor<4xf32>
  %5 = tcc.tanh %x : tensor<4xf32>
  // Tests sigmoid.
  // CHECK: tcc.sigmoid %[[X]] : tensor<4xf32>
  %6 = tcc.sigmoid %x : tensor<4xf32>
  // Tests erf.
  // CHECK: tcc.erf %[[X]] : tensor<4xf32>
  %7 = tcc.erf %x : tensor<4xf32>
  // Tests softplus.
  // CHECK: tcc.softplus %[[X]] : tensor<4xf32>
  %8 = tcc.softplus %x : tensor<4xf32>
  // Tests sin.
  // CHECK: tcc.sin %[[X]] : tensor<4xf32>
  %9 = tcc.sin %x : tensor<4xf32>
  // Tests cos.
  // CHECK: tcc.cos %[[X]] : tensor<4xf32>
  %10 = tcc.cos %x : tensor<4xf32>
  // Tests floor.
  // CHECK: tcc.floor %[[X]] : tensor<4xf32>
  %11 = tcc.floor %x : tensor<4xf32>
  // Tests ceil.
  // CHECK: tcc.ceil %[[X]] : tensor<4xf32>
  %12 = tcc.ceil %x : tensor<4xf32>
  // Tests round.
  // CHECK: tcc.round %[[X]] : tensor<4xf32>
  %13 = tcc.round %x : tensor<4xf32>
  // Tests the trigonometric and hyperbolic functions after sin and cos.
  // CHECK: tcc.tan %[[X]] : tensor<4xf32>
  %t0 = tcc.tan %x : tensor<4xf32>
  // CHECK: tcc.asin %[[X]] : tensor<4xf32>
  %t1 = tcc.asin %x : tensor<4xf32>
  // CHECK: tcc.acos %[[X]] : tensor<4xf32>
  %t2 = tcc.acos %x : tensor<4xf32>
  // CHECK: tcc.atan %[[X]] : tensor<4xf32>
  %t3 = tcc.atan %x : tensor<4xf32>
  // CHECK: tcc.sinh %[[X]] : tensor<4xf32>
  %t4 = tcc.sinh %x : tensor<4xf32>
  // CHECK: tcc.cosh %[[X]] : tensor<4xf32>
  %t5 = tcc.cosh %x : tensor<4xf32>
  // CHECK: tcc.asinh %[[X]] : tensor<4xf32>
  %t6 = tcc.asinh %x : tensor<4xf32>
  // CHECK: tcc.acosh %[[X]] : tensor<4xf32>
  %t7 = tcc.acosh %x : tensor<4xf32>
  // CHECK: tcc.atanh %[[X]] : tensor<4xf32>
  %t8 = tcc.atanh %x : tensor<4xf32>
  // Tests that a unary op accepts a non-f32 float type (bf16).
  // CHECK: tcc.exp %[[H]] : tensor<2xbf16>
  %14 = tcc.exp %h : tensor<2xbf16>
  return
}

// Elementwise unary ops on floats and integers, and logical not.
// CHECK-LABEL: func.func @unary_num
//  CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi32>, %[[U:.+]]: tensor<4xui8>, %[[B:.+]]: tensor<4xi1>)
func.func @unary_num(%x: tensor<4xf32>, %i: tensor<4xi32>, %u: tensor<4xui8>, %b: tensor<4xi1>) {
  // Tests neg on floats.
  // CHECK: tcc.neg %[[X]] : tensor<4xf32>
  %0 = tcc.neg %x : tensor<4xf32>
  // Tests neg on signless integers.
  // CHECK: tcc.neg %[[I]] : tensor<4xi32>
  %1 = tcc.neg %i : tensor<4xi32>
  // Tests abs on floats.
  // CHECK: tcc.abs %[[X]] : tensor<4xf32>
  %2 = tcc.abs %x : tensor<4xf32>
  // Tests abs on unsigned integers.
  // CHECK: tcc.abs %[[U]] : tensor<4xui8>
  %3 = tcc.abs %u : tensor<4xui8>
  // Tests sign on integers.
  // CHECK: tcc.sign %[[I]] : tensor<4xi32>
  %4 = tcc.sign %i : tensor<4xi32>
  // Tests relu on floats.
  // CHECK: tcc.relu %[[X]] : tensor<4xf32>
  %5 = tcc.relu %x : tensor<4xf32>
  // Tests relu on integers.
  // CHECK: tcc.relu %[[I]] : tensor<4xi32>
  %6 = tcc.relu %i : tensor<4xi32>
  // Tests logical not on booleans.
  // CHECK: tcc.not %[[B]] : tensor<4xi1>
  %7 = tcc.not %b : tensor<4xi1>
  return
}

// Elementwise unary ops with attributes.
// CHECK-LABEL: func.func @unary_param
//  CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi64>)
func.func @unary_param(%x: tensor<4xf32>, %i: tensor<4xi64>) {
  // Tests exact gelu, whose default `approximate = false` is elided.
  // CHECK: tcc.gelu %[[X]] : tensor<4xf32>
  %0 = tcc.gelu %x : tensor<4xf32>
  // Tests gelu with the tanh approximation.
  // CHECK: tcc.gelu %[[X]] {approximate = true} : tensor<4xf32>
  %1 = tcc.gelu %x {approximate = true} : tensor<4xf32>
  // Tests leaky_relu with its alpha.
  // CHECK: tcc.leaky_relu %[[X]] {alpha = 1.000000e-01 : f64} : tensor<4xf32>
  %2 = tcc.leaky_relu %x {alpha = 1.000000e-01 : f64} : tensor<4xf32>
  // Tests elu with its alpha.
  // CHECK: tcc.elu %[[X]] {alpha = 1.000000e+00 : f64} : tensor<4xf32>
  %3 = tcc.elu %x {alpha = 1.000000e+00 : f64} : tensor<4xf32>
  // Tests clamp with both bounds.
  // CHECK: tcc.clamp %[[X]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4xf32>
  %4 = tcc.clamp %x {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4xf32>
  // Tests clamp of integers with only a lower bound.
  // CHECK: tcc.clamp %[[I]] {min = -1.000000e+00 : f64} : tensor<4xi64>
  %5 = tcc.clamp %i {min = -1.000000e+00 : f64} : tensor<4xi64>
  return
}

// Element type conversion.
// CHECK-LABEL: func.func @cast
//  CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi64>, %[[U:.+]]: tensor<4xui8>)
func.func @cast(%x: tensor<4xf32>, %i: tensor<4xi64>, %u: tensor<4xui8>) {
  // Tests float to integer.
  // CHECK: tcc.cast %[[X]] : tensor<4xf32> to tensor<4xi64>
  %0 = tcc.cast %x : tensor<4xf32> to tensor<4xi64>
  // Tests integer to float.
  // CHECK: tcc.cast %[[I]] : tensor<4xi64> to tensor<4xf32>
  %1 = tcc.cast %i : tensor<4xi64> to tensor<4xf32>
  // Tests float to bool.
  // CHECK: tcc.cast %[[X]] : tensor<4xf32> to tensor<4xi1>
  %2 = tcc.cast %x : tensor<4xf32> to tensor<4xi1>
  // Tests unsigned integer to half.
  // CHECK: tcc.cast %[[U]] : tensor<4xui8> to tensor<4xf16>
  %3 = tcc.cast %u : tensor<4xui8> to tensor<4xf16>
  return
}

// Elementwise binary arithmetic.
// CHECK-LABEL: func.func @binary
//  CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[Y:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi32>, %[[U:.+]]: tensor<4xui32>)
func.func @binary(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi32>, %u: tensor<4xui32>) {
  // Tests add.
  // CHECK: tcc.add %[[X]], %[[Y]] : tensor<4xf32>
  %0 = tcc.add %x, %y : tensor<4xf32>
  // Tests sub.
  // CHECK: tcc.sub %[[X]], %[[Y]] : tensor<4xf32>
  %1 = tcc.sub %x, %y : tensor<4xf32>
  // Tests mul.
  // CHECK: tcc.mul %[[X]], %[[Y]] : tensor<4xf32>
  %2 = tcc.mul %x, %y : tensor<4xf32>
  // Tests div.
  // CHECK: tcc.div %[[X]], %[[Y]] : tensor<4xf32>
  %3 = tcc.div %x, %y : tensor<4xf32>
  // Tests pow.
  // CHECK: tcc.pow %[[X]], %[[Y]] : tensor<4xf32>
  %4 = tcc.pow %x, %y : tensor<4xf32>
  // Tests max.
  // CHECK: tcc.max %[[X]], %[[Y]] : tensor<4xf32>
  %5 = tcc.max %x, %y : tensor<4xf32>
  // Tests min.
  // CHECK: tcc.min %[[X]], %[[Y]] : tensor<4xf32>
  %6 = tcc.min %x, %y : tensor<4xf32>
  // Tests a binary op on signless integers.
  // CHECK: tcc.add %[[I]], %[[I]] : tensor<4xi32>
  %7 = tcc.add %i, %i : tensor<4xi32>
  // Tests a binary op on unsigned integers.
  // CHECK: tcc.div %[[U]], %[[U]] : tensor<4xui32>
  %8 = tcc.div %u, %u : tensor<4xui32>
  return
}

// Elementwise logical ops.
// CHECK-LABEL: func.func @logical
//  CHECK-SAME: (%[[A:.+]]: tensor<4xi1>, %[[B:.+]]: tensor<4xi1>)
func.func @logical(%a: tensor<4xi1>, %b: tensor<4xi1>) {
  // Tests and.
  // CHECK: tcc.and %[[A]], %[[B]] : tensor<4xi1>
  %0 = tcc.and %a, %b : tensor<4xi1>
  // Tests or.
  // CHECK: tcc.or %[[A]], %[[B]] : tensor<4xi1>
  %1 = tcc.or %a, %b : tensor<4xi1>
  // Tests xor.
  // CHECK: tcc.xor %[[A]], %[[B]] : tensor<4xi1>
  %2 = tcc.xor %a, %b : tensor<4xi1>
  return
}

// Comparison and selection.
// CHECK-LABEL: func.func @compare_select
//  CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[Y:.+]]: tensor<4xf32>, %[[U:.+]]: tensor<4xui16>, %[[C:.+]]: tensor<4xi1>)
func.func @compare_select(%x: tensor<4xf32>, %y: tensor<4xf32>, %u: tensor<4xui16>, %c: tensor<4xi1>) {
  // Tests the eq predicate.
  // CHECK: tcc.compare eq, %[[X]], %[[Y]] : tensor<4xf32>
  %0 = tcc.compare eq, %x, %y : tensor<4xf32>
  // Tests the ne predicate.
  // CHECK: tcc.compare ne, %[[X]], %[[Y]] : tensor<4xf32>
  %1 = tcc.compare ne, %x, %y : tensor<4xf32>
  // Tests the lt predicate.
  // CHECK: tcc.compare lt, %[[X]], %[[Y]] : tensor<4xf32>
  %2 = tcc.compare lt, %x, %y : tensor<4xf32>
  // Tests the le predicate.
  // CHECK: tcc.compare le, %[[X]], %[[Y]] : tensor<4xf32>
  %3 = tcc.compare le, %x, %y : tensor<4xf32>
  // Tests the gt predicate.
  // CHECK: tcc.compare gt, %[[X]], %[[Y]] : tensor<4xf32>
  %4 = tcc.compare gt, %x, %y : tensor<4xf32>
  // Tests the ge predicate on unsigned integers.
  // CHECK: tcc.compare ge, %[[U]], %[[U]] : tensor<4xui16>
  %5 = tcc.compare ge, %u, %u : tensor<4xui16>
  // Tests select.
  // CHECK: tcc.select %[[C]], %[[X]], %[[Y]] : tensor<4xi1>, tensor<4xf32>
  %6 = tcc.select %c, %x, %y : tensor<4xi1>, tensor<4xf32>
  return
}

// Data movement: broadcast, reshape, transpose, concat, slice, pad.
// CHECK-LABEL: func.func @data_movement
//  CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[V:.+]]: tensor<3xf32>, %[[W:.+]]: tensor<2x1xf32>, %[[S:.+]]: tensor<8xi64>)
func.func @data_movement(%x: tensor<2x3xf32>, %v: tensor<3xf32>, %w: tensor<2x1xf32>, %s: tensor<8xi64>) {
  // Tests broadcast_in_dim to a higher rank.
  // CHECK: tcc.broadcast_in_dim %[[V]], dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  %0 = tcc.broadcast_in_dim %v, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  // Tests broadcast_in_dim that repeats a size-1 dimension.
  // CHECK: tcc.broadcast_in_dim %[[W]], dims = [0, 1] : tensor<2x1xf32> -> tensor<2x3xf32>
  %1 = tcc.broadcast_in_dim %w, dims = [0, 1] : tensor<2x1xf32> -> tensor<2x3xf32>
  // Tests reshape.
  // CHECK: tcc.reshape %[[X]] : tensor<2x3xf32> -> tensor<3x2xf32>
  %2 = tcc.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
  // Tests transpose.
  // CHECK: tcc.transpose %[[X]], perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %3 = tcc.transpose %x, perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  // Tests concat of two operands.
  // CHECK: tcc.concat %[[X]], %[[W]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %4 = tcc.concat %x, %w {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  // Tests slice with a positive stride.
  // CHECK: tcc.slice %[[S]], start = [1], stride = [2] : tensor<8xi64> -> tensor<3xi64>
  %5 = tcc.slice %s, start = [1], stride = [2] : tensor<8xi64> -> tensor<3xi64>
  // Tests slice with a negative stride.
  // CHECK: tcc.slice %[[S]], start = [7], stride = [-3] : tensor<8xi64> -> tensor<3xi64>
  %6 = tcc.slice %s, start = [7], stride = [-3] : tensor<8xi64> -> tensor<3xi64>
  // Tests constant-mode pad, whose default mode and value are elided.
  // CHECK: tcc.pad %[[X]], low = [1, 0], high = [0, 2] : tensor<2x3xf32> -> tensor<3x5xf32>
  %7 = tcc.pad %x, low = [1, 0], high = [0, 2] : tensor<2x3xf32> -> tensor<3x5xf32>
  // Tests reflect-mode pad.
  // CHECK: tcc.pad %[[X]], low = [0, 2], high = [0, 2] {mode = 1 : i32} : tensor<2x3xf32> -> tensor<2x7xf32>
  %8 = tcc.pad %x, low = [0, 2], high = [0, 2] {mode = 1 : i32} : tensor<2x3xf32> -> tensor<2x7xf32>
  // Tests constant-mode pad with a non-zero value.
  // CHECK: tcc.pad %[[X]], low = [1, 1], high = [1, 1] {value = -1.000000e+00 : f64} : tensor<2x3xf32> -> tensor<4x5xf32>
  %9 = tcc.pad %x, low = [1, 1], high = [1, 1] {value = -1.000000e+00 : f64} : tensor<2x3xf32> -> tensor<4x5xf32>
  return
}

// Gathers and scatters.
// CHECK-LABEL: func.func @gather_scatter
//  CHECK-SAME: (%[[T:.+]]: tensor<10x4xf32>, %[[IDS:.+]]: tensor<2x3xi64>, %[[X:.+]]: tensor<2x3xf32>, %[[I:.+]]: tensor<2x1xi32>, %[[V:.+]]: tensor<3x3xf32>, %[[VI:.+]]: tensor<2x3xi64>, %[[VU:.+]]: tensor<2x3xf32>, %[[NI:.+]]: tensor<2x1xi64>, %[[NU:.+]]: tensor<2x4xf32>)
func.func @gather_scatter(%t: tensor<10x4xf32>, %ids: tensor<2x3xi64>, %x: tensor<2x3xf32>, %i: tensor<2x1xi32>, %v: tensor<3x3xf32>, %vi: tensor<2x3xi64>, %vu: tensor<2x3xf32>, %ni: tensor<2x1xi64>, %nu: tensor<2x4xf32>) {
  // Tests gather with rank-2 indices (an embedding lookup).
  // CHECK: tcc.gather %[[T]], %[[IDS]] {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %0 = tcc.gather %t, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  // Tests gather_elements with i32 indices.
  // CHECK: tcc.gather_elements %[[X]], %[[I]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xi32>) -> tensor<2x1xf32>
  %1 = tcc.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xi32>) -> tensor<2x1xf32>
  // Tests scatter_elements with updates smaller than the input, whose default reduction (none) is elided.
  // CHECK: tcc.scatter_elements %[[V]], %[[VI]], %[[VU]] {axis = 0 : i64} : tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>
  %2 = tcc.scatter_elements %v, %vi, %vu {axis = 0 : i64} : tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>
  // Tests scatter_elements with the add reduction.
  // CHECK: tcc.scatter_elements %[[V]], %[[VI]], %[[VU]] {axis = 1 : i64, reduction = 1 : i32} : tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>
  %3 = tcc.scatter_elements %v, %vi, %vu {axis = 1 : i64, reduction = 1 : i32} : tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>
  // Tests scatter_nd.
  // CHECK: tcc.scatter_nd %[[T]], %[[NI]], %[[NU]] : tensor<10x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>
  %4 = tcc.scatter_nd %t, %ni, %nu : tensor<10x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>
  // Tests scatter_nd with the max reduction.
  // CHECK: tcc.scatter_nd %[[T]], %[[NI]], %[[NU]] {reduction = 3 : i32} : tensor<10x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>
  %5 = tcc.scatter_nd %t, %ni, %nu {reduction = 3 : i32} : tensor<10x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>
  return
}

// Cumulative sum.
// CHECK-LABEL: func.func @cumsum
//  CHECK-SAME: (%[[X:.+]]: tensor<4x5xf32>, %[[I:.+]]: tensor<6xi64>)
func.func @cumsum(%x: tensor<4x5xf32>, %i: tensor<6xi64>) {
  // Tests cumsum with the default flags elided.
  // CHECK: tcc.cumsum %[[X]] {axis = 1 : i64} : tensor<4x5xf32>
  %0 = tcc.cumsum %x {axis = 1 : i64} : tensor<4x5xf32>
  // Tests an exclusive, reversed cumsum of integers.
  // CHECK: tcc.cumsum %[[I]] {axis = 0 : i64, exclusive = true, reverse = true} : tensor<6xi64>
  %1 = tcc.cumsum %i {axis = 0 : i64, exclusive = true, reverse = true} : tensor<6xi64>
  return
}

// Reductions and arg-reductions.
// CHECK-LABEL: func.func @reductions
//  CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[I:.+]]: tensor<2x3xi32>)
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<2x3xi32>) {
  // Tests reduce_sum with the default keepdims (true) elided.
  // CHECK: tcc.reduce_sum %[[X]] {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %0 = tcc.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  // Tests reduce_mean over two axes without keepdims.
  // CHECK: tcc.reduce_mean %[[X]] {axes = array<i64: 0, 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<3xf32>
  %1 = tcc.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<3xf32>
  // Tests reduce_max.
  // CHECK: tcc.reduce_max %[[X]] {axes = array<i64: 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2x3xf32>
  %2 = tcc.reduce_max %x {axes = array<i64: 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2x3xf32>
  // Tests reduce_min of integers over all axes.
  // CHECK: tcc.reduce_min %[[I]] {axes = array<i64: 0, 1>} : tensor<2x3xi32> -> tensor<1x1xi32>
  %3 = tcc.reduce_min %i {axes = array<i64: 0, 1>} : tensor<2x3xi32> -> tensor<1x1xi32>
  // Tests reduce_prod over no axes.
  // CHECK: tcc.reduce_prod %[[X]] {axes = array<i64>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %4 = tcc.reduce_prod %x {axes = array<i64>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  // Tests argmax with the default keepdims.
  // CHECK: tcc.argmax %[[X]] {axis = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x1x4xi64>
  %5 = tcc.argmax %x {axis = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x1x4xi64>
  // Tests argmin with select_last_index and without keepdims.
  // CHECK: tcc.argmin %[[I]] {axis = 1 : i64, keepdims = false, select_last_index = true} : tensor<2x3xi32> -> tensor<2xi64>
  %6 = tcc.argmin %i {axis = 1 : i64, keepdims = false, select_last_index = true} : tensor<2x3xi32> -> tensor<2xi64>
  return
}

// Matrix products.
// CHECK-LABEL: func.func @matmul
//  CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<3x4xf32>, %[[BA:.+]]: tensor<5x2x3xi32>, %[[BB:.+]]: tensor<5x3x4xi32>)
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %ba: tensor<5x2x3xi32>, %bb: tensor<5x3x4xi32>) {
  // Tests a 2-D matmul.
  // CHECK: tcc.matmul %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %0 = tcc.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  // Tests a batched integer matmul.
  // CHECK: tcc.matmul %[[BA]], %[[BB]] : (tensor<5x2x3xi32>, tensor<5x3x4xi32>) -> tensor<5x2x4xi32>
  %1 = tcc.matmul %ba, %bb : (tensor<5x2x3xi32>, tensor<5x3x4xi32>) -> tensor<5x2x4xi32>
  return
}

// Convolutions.
// CHECK-LABEL: func.func @convolution
//  CHECK-SAME: (%[[X:.+]]: tensor<1x4x8x8xf32>, %[[W:.+]]: tensor<6x4x3x3xf32>, %[[WG:.+]]: tensor<6x2x3x3xf32>, %[[Y:.+]]: tensor<1x2x3xf32>, %[[WT:.+]]: tensor<2x4x3xf32>)
func.func @convolution(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %wg: tensor<6x2x3x3xf32>, %y: tensor<1x2x3xf32>, %wt: tensor<2x4x3xf32>) {
  // Tests a padded 2-D conv, whose default group (1) is elided.
  // CHECK: tcc.conv %[[X]], %[[W]] {dilations = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  %0 = tcc.conv %x, %w {dilations = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  // Tests a grouped, dilated and strided conv.
  // CHECK: tcc.conv %[[X]], %[[WG]] {dilations = array<i64: 2, 1>, group = 2 : i64, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 2>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x3xf32>
  %1 = tcc.conv %x, %wg {dilations = array<i64: 2, 1>, group = 2 : i64, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 2>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x3xf32>
  // Tests a strided 1-D conv_transpose.
  // CHECK: tcc.conv_transpose %[[Y]], %[[WT]] {dilations = array<i64: 1>, output_padding = array<i64: 0>, pad_high = array<i64: 0>, pad_low = array<i64: 0>, strides = array<i64: 2>} : (tensor<1x2x3xf32>, tensor<2x4x3xf32>) -> tensor<1x4x7xf32>
  %2 = tcc.conv_transpose %y, %wt {dilations = array<i64: 1>, output_padding = array<i64: 0>, pad_high = array<i64: 0>, pad_low = array<i64: 0>, strides = array<i64: 2>} : (tensor<1x2x3xf32>, tensor<2x4x3xf32>) -> tensor<1x4x7xf32>
  // Tests a grouped conv_transpose with padding and output padding.
  // CHECK: tcc.conv_transpose %[[Y]], %[[WT]] {dilations = array<i64: 1>, group = 2 : i64, output_padding = array<i64: 1>, pad_high = array<i64: 1>, pad_low = array<i64: 1>, strides = array<i64: 2>} : (tensor<1x2x3xf32>, tensor<2x4x3xf32>) -> tensor<1x8x6xf32>
  %3 = tcc.conv_transpose %y, %wt {dilations = array<i64: 1>, group = 2 : i64, output_padding = array<i64: 1>, pad_high = array<i64: 1>, pad_low = array<i64: 1>, strides = array<i64: 2>} : (tensor<1x2x3xf32>, tensor<2x4x3xf32>) -> tensor<1x8x6xf32>
  // Tests a grouped, strided filter gradient whose windows leave input rows unread.
  // CHECK: tcc.conv_backward_filter %[[X]], %{{.+}} {dilations = array<i64: 1, 1>, group = 2 : i64, kernel = array<i64: 2, 3>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 1, 0>, strides = array<i64: 3, 2>} : (tensor<1x4x8x8xf32>, tensor<1x6x3x3xf32>) -> tensor<6x2x2x3xf32>
  %g = tcc.constant dense<1.0> : tensor<1x6x3x3xf32>
  %4 = tcc.conv_backward_filter %x, %g {dilations = array<i64: 1, 1>, group = 2 : i64, kernel = array<i64: 2, 3>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 1, 0>, strides = array<i64: 3, 2>} : (tensor<1x4x8x8xf32>, tensor<1x6x3x3xf32>) -> tensor<6x2x2x3xf32>
  return
}

// Pooling.
// CHECK-LABEL: func.func @pooling
//  CHECK-SAME: (%[[X:.+]]: tensor<1x3x5x5xf32>)
func.func @pooling(%x: tensor<1x3x5x5xf32>) {
  // Tests max_pool, whose default ceil_mode (false) is elided.
  // CHECK: tcc.max_pool %[[X]] {dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : tensor<1x3x5x5xf32> -> tensor<1x3x2x2xf32>
  %0 = tcc.max_pool %x {dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : tensor<1x3x5x5xf32> -> tensor<1x3x2x2xf32>
  // Tests max_pool with ceil_mode.
  // CHECK: tcc.max_pool %[[X]] {ceil_mode = true, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : tensor<1x3x5x5xf32> -> tensor<1x3x3x3xf32>
  %1 = tcc.max_pool %x {ceil_mode = true, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : tensor<1x3x5x5xf32> -> tensor<1x3x3x3xf32>
  // Tests a padded avg_pool that counts the padding.
  // CHECK: tcc.avg_pool %[[X]] {count_include_pad = true, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 1, 1>} : tensor<1x3x5x5xf32> -> tensor<1x3x5x5xf32>
  %2 = tcc.avg_pool %x {count_include_pad = true, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 1, 1>} : tensor<1x3x5x5xf32> -> tensor<1x3x5x5xf32>
  return
}

// Normalization.
// CHECK-LABEL: func.func @normalization
//  CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[C:.+]]: tensor<3xf32>, %[[G:.+]]: tensor<4xf32>)
func.func @normalization(%x: tensor<2x3x4xf32>, %c: tensor<3xf32>, %g: tensor<4xf32>) {
  // Tests batch_norm_inference.
  // CHECK: tcc.batch_norm_inference %[[X]], %[[C]], %[[C]], %[[C]], %[[C]] {epsilon = 1.000000e-05 : f64} : tensor<2x3x4xf32>, tensor<3xf32>
  %0 = tcc.batch_norm_inference %x, %c, %c, %c, %c {epsilon = 1.000000e-05 : f64} : tensor<2x3x4xf32>, tensor<3xf32>
  // Tests batch_norm_training, whose three result types are inferred.
  // CHECK: tcc.batch_norm_training %[[X]], %[[C]], %[[C]] {epsilon = 1.000000e-05 : f64} : tensor<2x3x4xf32>, tensor<3xf32>
  %1:3 = tcc.batch_norm_training %x, %c, %c {epsilon = 1.000000e-05 : f64} : tensor<2x3x4xf32>, tensor<3xf32>
  // Tests layer_norm with a bias.
  // CHECK: tcc.layer_norm %[[X]], %[[G]], %[[G]] {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>
  %2:3 = tcc.layer_norm %x, %g, %g {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>
  // Tests layer_norm without a bias.
  // CHECK: tcc.layer_norm %[[X]], %[[G]] {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x3x4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>
  %3:3 = tcc.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x3x4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>
  return
}

// Softmax.
// CHECK-LABEL: func.func @softmax
//  CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
func.func @softmax(%x: tensor<2x3xf32>) {
  // Tests softmax.
  // CHECK: tcc.softmax %[[X]] {axis = 1 : i64} : tensor<2x3xf32>
  %0 = tcc.softmax %x {axis = 1 : i64} : tensor<2x3xf32>
  // Tests log_softmax.
  // CHECK: tcc.log_softmax %[[X]] {axis = 0 : i64} : tensor<2x3xf32>
  %1 = tcc.log_softmax %x {axis = 0 : i64} : tensor<2x3xf32>
  return
}

// Dropout.
// CHECK-LABEL: func.func @dropout
//  CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
func.func @dropout(%x: tensor<4xf32>) {
  // Tests dropout, whose result and mask types are inferred.
  // CHECK: tcc.dropout %[[X]] {ratio = 1.000000e-01 : f64, stream = 3 : i64} : tensor<4xf32>
  %0:2 = tcc.dropout %x {ratio = 1.000000e-01 : f64, stream = 3 : i64} : tensor<4xf32>
  return
}

// Random numbers.
// CHECK-LABEL: func.func @random
//  CHECK-SAME: (%[[RNG:.+]]: tensor<2xi64>)
func.func @random(%rng: tensor<2xi64>) {
  // Tests tcc.random without and with the step's generator state.
  // CHECK: tcc.random {a = -1.000000e+00 : f64, b = 1.000000e+00 : f64, distribution = 0 : i32, stream = 2 : i64} : tensor<2x3xf32>
  %0 = tcc.random {a = -1.0 : f64, b = 1.0 : f64, distribution = 0 : i32, stream = 2 : i64} : tensor<2x3xf32>
  // CHECK: tcc.random rng(%[[RNG]] : tensor<2xi64>) {a = 0.000000e+00 : f64, b = 5.000000e-01 : f64, distribution = 1 : i32, stream = 4 : i64} : tensor<5xf64>
  %1 = tcc.random rng(%rng : tensor<2xi64>) {a = 0.0 : f64, b = 0.5 : f64, distribution = 1 : i32, stream = 4 : i64} : tensor<5xf64>
  return
}

// Resize.
// CHECK-LABEL: func.func @resize
//  CHECK-SAME: (%[[X:.+]]: tensor<1x1x2x2xf32>)
func.func @resize(%x: tensor<1x1x2x2xf32>) {
  // Tests nearest resize with every default elided.
  // CHECK: tcc.resize %[[X]] {scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  %0 = tcc.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  // Tests linear resize with align_corners.
  // CHECK: tcc.resize %[[X]] {coordinate_mode = 1 : i32, mode = 1 : i32, scales = array<f64: 1.000000e+00, 1.000000e+00, 1.500000e+00, 1.500000e+00>} : tensor<1x1x2x2xf32> -> tensor<1x1x3x3xf32>
  %1 = tcc.resize %x {coordinate_mode = 1 : i32, mode = 1 : i32, scales = array<f64: 1.0, 1.0, 1.5, 1.5>} : tensor<1x1x2x2xf32> -> tensor<1x1x3x3xf32>
  // Tests cubic resize with every optional attribute set.
  // CHECK: tcc.resize %[[X]] {coordinate_mode = 4 : i32, cubic_coeff_a = -5.000000e-01 : f64, exclude_outside = true, extrapolation_value = 1.000000e+00 : f64, mode = 2 : i32, nearest_mode = 3 : i32, roi = array<f64: 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00>, scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  %2 = tcc.resize %x {coordinate_mode = 4 : i32, cubic_coeff_a = -5.000000e-01 : f64, exclude_outside = true, extrapolation_value = 1.000000e+00 : f64, mode = 2 : i32, nearest_mode = 3 : i32, roi = array<f64: 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  return
}

// Negative log-likelihood loss.
// CHECK-LABEL: func.func @nll_loss
//  CHECK-SAME: (%[[LP:.+]]: tensor<4x10xf32>, %[[T:.+]]: tensor<4xi64>, %[[LP2:.+]]: tensor<4x10x5xf32>, %[[T2:.+]]: tensor<4x5xi32>, %[[W:.+]]: tensor<10xf32>)
func.func @nll_loss(%lp: tensor<4x10xf32>, %t: tensor<4xi64>, %lp2: tensor<4x10x5xf32>, %t2: tensor<4x5xi32>, %w: tensor<10xf32>) {
  // Tests nll_loss with the default mean reduction elided.
  // CHECK: tcc.nll_loss %[[LP]], %[[T]] : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %0 = tcc.nll_loss %lp, %t : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  // Tests unreduced nll_loss with weights and an ignored index over a spatial dimension.
  // CHECK: tcc.nll_loss %[[LP2]], %[[T2]], %[[W]] {ignore_index = -100 : i64, reduction = 0 : i32} : (tensor<4x10x5xf32>, tensor<4x5xi32>, tensor<10xf32>) -> tensor<4x5xf32>
  %1 = tcc.nll_loss %lp2, %t2, %w {ignore_index = -100 : i64, reduction = 0 : i32} : (tensor<4x10x5xf32>, tensor<4x5xi32>, tensor<10xf32>) -> tensor<4x5xf32>
  // Tests nll_loss with the sum reduction.
  // CHECK: tcc.nll_loss %[[LP]], %[[T]] {reduction = 1 : i32} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %2 = tcc.nll_loss %lp, %t {reduction = 1 : i32} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// Collectives.
// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3xbf16>, %[[M:.*]]: memref<4x3xf32>)
func.func @all_reduce(%a: tensor<4x3xf32>, %b: tensor<3xbf16>, %m: memref<4x3xf32>) {
  // Tests a bucket of two tensors of different element types and shapes.
  // CHECK: tcc.all_reduce %[[A]], %[[B]] {bucket = 0 : i64} : tensor<4x3xf32>, tensor<3xbf16> -> tensor<4x3xf32>, tensor<3xbf16>
  %0:2 = tcc.all_reduce %a, %b {bucket = 0 : i64} : tensor<4x3xf32>, tensor<3xbf16> -> tensor<4x3xf32>, tensor<3xbf16>
  // Tests the in-place form on buffers, without results.
  // CHECK: tcc.all_reduce %[[M]] {bucket = 1 : i64} : memref<4x3xf32>
  tcc.all_reduce %m {bucket = 1 : i64} : memref<4x3xf32>
  return
}
