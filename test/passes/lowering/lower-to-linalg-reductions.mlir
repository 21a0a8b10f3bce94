// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s --check-prefix=NOTCC

// Reductions become linalg.reduce, arg-reductions a two-output
// linalg.generic, cumsum an scf.for over the scanned axis.
// No tcc op survives anywhere:
// NOTCC-NOT: tcc.

// Tests that reduce_sum is linalg.reduce from a zero fill, and keepdims an
// expand_shape of the result.
// CHECK-LABEL: func.func @reduce_sum_keepdims
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3x4xf32>)
//       CHECK:   %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<3xf32>)
//       CHECK:   %[[R:.+]] = linalg.reduce ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<3xf32>) dimensions = [0, 2]
//       CHECK:     arith.addf
//       CHECK:   %[[K:.+]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1, 2]] output_shape [1, 3, 1]
//       CHECK:   return %[[K]]
func.func @reduce_sum_keepdims(%x: tensor<2x3x4xf32>) -> tensor<1x3x1xf32> {
  %0 = tcc.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = true} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  return %0 : tensor<1x3x1xf32>
}

// -----

// Tests that a float mean divides the sum by the element count.
// CHECK-LABEL: func.func @reduce_mean_f32
//       CHECK:   linalg.reduce
//       CHECK:   linalg.generic
//       CHECK:     %[[N:.+]] = arith.constant 4.000000e+00 : f32
//       CHECK:     arith.divf %{{.+}}, %[[N]] : f32
func.func @reduce_mean_f32(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = tcc.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : tensor<3x4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that an unsigned integer mean divides with arith.divui (i8).
// CHECK-LABEL: func.func @reduce_mean_ui8
//  CHECK-SAME:   (%{{.+}}: tensor<2x3xi8>) -> tensor<2xi8>
//       CHECK:   linalg.reduce
//       CHECK:     arith.addi
//       CHECK:   linalg.generic
//       CHECK:     %[[N:.+]] = arith.constant 3 : i8
//       CHECK:     arith.divui %{{.+}}, %[[N]] : i8
func.func @reduce_mean_ui8(%x: tensor<2x3xui8>) -> tensor<2xui8> {
  %0 = tcc.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : tensor<2x3xui8> -> tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

// Tests that a signed integer mean truncates toward zero (arith.divsi).
// CHECK-LABEL: func.func @reduce_mean_i32
//       CHECK:     arith.divsi
func.func @reduce_mean_i32(%x: tensor<2x3xi32>) -> tensor<2xi32> {
  %0 = tcc.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : tensor<2x3xi32> -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// Tests that reduce_max starts from -inf and propagates NaN (maximumf).
// CHECK-LABEL: func.func @reduce_max_f32
//       CHECK:   %[[NINF:.+]] = arith.constant 0xFF800000 : f32
//       CHECK:   linalg.fill ins(%[[NINF]] : f32)
//       CHECK:   linalg.reduce
//       CHECK:     arith.maximumf
func.func @reduce_max_f32(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = tcc.reduce_max %x {axes = array<i64: 1>, keepdims = false} : tensor<3x4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that an unsigned reduce_min starts from UINT_MAX and compares unsigned.
// CHECK-LABEL: func.func @reduce_min_ui8
//       CHECK:   %[[MAX:.+]] = arith.constant -1 : i8
//       CHECK:   linalg.fill ins(%[[MAX]] : i8)
//       CHECK:   linalg.reduce
//       CHECK:     arith.minui
func.func @reduce_min_ui8(%x: tensor<3x4xui8>) -> tensor<3xui8> {
  %0 = tcc.reduce_min %x {axes = array<i64: 1>, keepdims = false} : tensor<3x4xui8> -> tensor<3xui8>
  return %0 : tensor<3xui8>
}

// -----

// Tests that a signed reduce_max starts from INT_MIN.
// CHECK-LABEL: func.func @reduce_max_i32
//       CHECK:   arith.constant -2147483648 : i32
//       CHECK:   linalg.reduce
//       CHECK:     arith.maxsi
func.func @reduce_max_i32(%x: tensor<3x4xi32>) -> tensor<3xi32> {
  %0 = tcc.reduce_max %x {axes = array<i64: 1>, keepdims = false} : tensor<3x4xi32> -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Tests that reduce_prod starts from 1 and multiplies.
// CHECK-LABEL: func.func @reduce_prod
//       CHECK:   arith.constant 1.000000e+00 : f32
//       CHECK:   linalg.reduce
//       CHECK:     arith.mulf
func.func @reduce_prod(%x: tensor<3x4xf32>) -> tensor<4xf32> {
  %0 = tcc.reduce_prod %x {axes = array<i64: 0>, keepdims = false} : tensor<3x4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a reduction over no axes is the identity.
// CHECK-LABEL: func.func @reduce_no_axes
//  CHECK-SAME:   (%[[X:.+]]: tensor<3x4xf32>)
//   CHECK-NOT:   linalg
//       CHECK:   return %[[X]]
func.func @reduce_no_axes(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = tcc.reduce_sum %x {axes = array<i64>, keepdims = false} : tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Tests that argmax is one generic reducing the axis into (value, index),
// with NaN winning (cmpf uno) and, for select_last_index, the later index
// winning ties (sentinel -1, cmpi sgt).
// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @argmax_last
//       CHECK:   %[[NINF:.+]] = arith.constant 0xFF800000 : f32
//       CHECK:   %[[VALS:.+]] = linalg.fill ins(%[[NINF]] : f32)
//       CHECK:   %[[SENT:.+]] = arith.constant -1 : i64
//       CHECK:   %[[IDXS:.+]] = linalg.fill ins(%[[SENT]] : i64)
//       CHECK:   %[[R:.+]]:2 = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
//  CHECK-SAME:     outs(%[[VALS]], %[[IDXS]] : tensor<3xf32>, tensor<3xi64>)
//       CHECK:     %[[I:.+]] = linalg.index 1 : index
//       CHECK:     arith.index_cast %[[I]] : index to i64
//       CHECK:     arith.cmpi sgt
//       CHECK:     arith.cmpf uno
//       CHECK:     arith.cmpf ogt
//       CHECK:     arith.cmpf oeq
//       CHECK:   tensor.expand_shape %[[R]]#1 {{\[\[}}0, 1]] output_shape [3, 1]
func.func @argmax_last(%x: tensor<3x5xf32>) -> tensor<3x1xi64> {
  %0 = tcc.argmax %x {axis = 1 : i64, keepdims = true, select_last_index = true} : tensor<3x5xf32> -> tensor<3x1xi64>
  return %0 : tensor<3x1xi64>
}

// -----

// Tests that argmin of ui8 starts from UINT_MAX with the sentinel INT64_MAX
// (first index wins ties) and compares unsigned.
// CHECK-LABEL: func.func @argmin_ui8
//       CHECK:   arith.constant -1 : i8
//       CHECK:   arith.constant 9223372036854775807 : i64
//       CHECK:   linalg.generic
//       CHECK:     arith.cmpi slt
//       CHECK:     arith.cmpi ult
func.func @argmin_ui8(%x: tensor<4x3xui8>) -> tensor<3xi64> {
  %0 = tcc.argmin %x {axis = 0 : i64, keepdims = false} : tensor<4x3xui8> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// Tests that an exclusive, reverse cumsum walks the axis backwards, inserts
// the running sum before adding the slice, and accumulates in place.
// CHECK-LABEL: func.func @cumsum_exclusive_reverse
//  CHECK-SAME:   (%[[X:.+]]: tensor<3x4xf32>)
//       CHECK:   %[[ACC0:.+]] = linalg.fill {{.+}} -> tensor<1x4xf32>
//       CHECK:   %[[OUT0:.+]] = tensor.empty() : tensor<3x4xf32>
//       CHECK:   %[[R:.+]]:2 = scf.for %[[J:.+]] = %{{.+}} to %c3 step %{{.+}} iter_args(%[[ACC:.+]] = %[[ACC0]], %[[OUT:.+]] = %[[OUT0]])
//       CHECK:     %[[POS:.+]] = arith.subi %c2, %[[J]] : index
//       CHECK:     %[[S:.+]] = tensor.extract_slice %[[X]][%[[POS]], 0] [1, 4] [1, 1]
//       CHECK:     %[[W:.+]] = tensor.insert_slice %[[ACC]] into %[[OUT]][%[[POS]], 0] [1, 4] [1, 1]
//       CHECK:     %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[S]] : tensor<1x4xf32>) outs(%[[ACC]] : tensor<1x4xf32>)
//       CHECK:     scf.yield %[[SUM]], %[[W]]
//       CHECK:   return %[[R]]#1
func.func @cumsum_exclusive_reverse(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = tcc.cumsum %x {axis = 0 : i64, exclusive = true, reverse = true} : tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Tests that an inclusive cumsum inserts the sum after the addition.
// CHECK-LABEL: func.func @cumsum_inclusive
//       CHECK:     %[[SUM:.+]] = linalg.generic
//       CHECK:       arith.addi
//       CHECK:     %[[W:.+]] = tensor.insert_slice %[[SUM]]
//       CHECK:     scf.yield %[[SUM]], %[[W]]
func.func @cumsum_inclusive(%x: tensor<5xi64>) -> tensor<5xi64> {
  %0 = tcc.cumsum %x {axis = 0 : i64} : tensor<5xi64>
  return %0 : tensor<5xi64>
}
