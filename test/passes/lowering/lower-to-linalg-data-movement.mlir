// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s --check-prefix=NOTCC

// Data movement becomes tensor ops and the named linalg ops that express it
// exactly; gathers read with tensor.extract, scatters are scf.for loops.
// No tcc op survives anywhere:
// NOTCC-NOT: tcc.

// Tests that an expanding size-1 dimension is collapsed away before
// linalg.broadcast, which only adds dimensions.
// CHECK-LABEL: func.func @broadcast_expand
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x1xf32>)
//       CHECK:   %[[C:.+]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<2x1xf32> into tensor<2xf32>
//       CHECK:   %[[E:.+]] = tensor.empty() : tensor<3x2x4xf32>
//       CHECK:   %[[B:.+]] = linalg.broadcast ins(%[[C]] : tensor<2xf32>) outs(%[[E]] : tensor<3x2x4xf32>) dimensions = [0, 2]
//       CHECK:   return %[[B]]
func.func @broadcast_expand(%x: tensor<2x1xf32>) -> tensor<3x2x4xf32> {
  %0 = tcc.broadcast_in_dim %x, dims = [1, 2] : tensor<2x1xf32> -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

// Tests that a broadcast to the same shape is the identity.
// CHECK-LABEL: func.func @broadcast_identity
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//   CHECK-NOT:   linalg
//       CHECK:   return %[[X]]
func.func @broadcast_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tcc.broadcast_in_dim %x, dims = [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a reshape with a reassociation is one expand_shape.
// CHECK-LABEL: func.func @reshape_split
//       CHECK:   %[[R:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0], [1, 2]] output_shape [2, 2, 3] : tensor<2x6xf32> into tensor<2x2x3xf32>
//       CHECK:   return %[[R]]
func.func @reshape_split(%x: tensor<2x6xf32>) -> tensor<2x2x3xf32> {
  %0 = tcc.reshape %x : tensor<2x6xf32> -> tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// -----

// Tests that a reshape without a single reassociation goes through 1-D.
// CHECK-LABEL: func.func @reshape_through_1d
//       CHECK:   %[[F:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
//       CHECK:   tensor.expand_shape %[[F]] {{\[\[}}0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
func.func @reshape_through_1d(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = tcc.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that a reshape to a scalar collapses all dimensions.
// CHECK-LABEL: func.func @reshape_to_scalar
//       CHECK:   tensor.collapse_shape %{{.+}} [] : tensor<1x1xi64> into tensor<i64>
func.func @reshape_to_scalar(%x: tensor<1x1xi64>) -> tensor<i64> {
  %0 = tcc.reshape %x : tensor<1x1xi64> -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Tests that tcc.transpose becomes linalg.transpose with the same permutation.
// CHECK-LABEL: func.func @transpose
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3x4xf32>)
//       CHECK:   %[[E:.+]] = tensor.empty() : tensor<4x2x3xf32>
//       CHECK:   linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[E]] : tensor<4x2x3xf32>) permutation = [2, 0, 1]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = tcc.transpose %x, perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// Tests that tcc.concat becomes tensor.concat, with empty operands dropped.
// CHECK-LABEL: func.func @concat
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x1xf32>, %[[Y:.+]]: tensor<2x3xf32>, %{{.+}}: tensor<2x0xf32>)
//       CHECK:   tensor.concat dim(1) %[[X]], %[[Y]] : (tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>
func.func @concat(%x: tensor<2x1xf32>, %y: tensor<2x3xf32>, %z: tensor<2x0xf32>) -> tensor<2x4xf32> {
  %0 = tcc.concat %x, %z, %y {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x0xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that a positive-stride slice is one tensor.extract_slice.
// CHECK-LABEL: func.func @slice_positive
//       CHECK:   %[[S:.+]] = tensor.extract_slice %{{.+}}[1, 0] [2, 3] [2, 2] : tensor<4x7xf32> to tensor<2x3xf32>
//       CHECK:   return %[[S]]
func.func @slice_positive(%x: tensor<4x7xf32>) -> tensor<2x3xf32> {
  %0 = tcc.slice %x, start = [1, 0], stride = [2, 2] : tensor<4x7xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that negative strides read the same elements from the other end with
// positive strides, then reverse them with an `n - 1 - d` map.
// CHECK:       #[[REV:.+]] = affine_map<(d0, d1) -> (-d0 + 1, -d1 + 2)>
// CHECK-LABEL: func.func @slice_negative
//       CHECK:   %[[S:.+]] = tensor.extract_slice %{{.+}}[1, 0] [2, 3] [2, 3] : tensor<4x7xf32> to tensor<2x3xf32>
//       CHECK:   linalg.generic {indexing_maps = [#[[REV]], #{{.+}}]
//  CHECK-SAME:     ins(%[[S]] : tensor<2x3xf32>)
func.func @slice_negative(%x: tensor<4x7xf32>) -> tensor<2x3xf32> {
  %0 = tcc.slice %x, start = [3, 6], stride = [-2, -3] : tensor<4x7xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that constant padding is a tensor.pad yielding the value in the
// element type.
// CHECK-LABEL: func.func @pad_constant
//       CHECK:   %[[V:.+]] = arith.constant 7 : i32
//       CHECK:   tensor.pad %{{.+}} low[1, 2] high[0, 1]
//       CHECK:     tensor.yield %[[V]] : i32
func.func @pad_constant(%x: tensor<2x3xi32>) -> tensor<3x6xi32> {
  %0 = tcc.pad %x, low = [1, 2], high = [0, 1] {value = 7.0 : f64} : tensor<2x3xi32> -> tensor<3x6xi32>
  return %0 : tensor<3x6xi32>
}

// -----

// Tests that reflect padding computes each source index periodically
// (period 2 (n - 1)) and reads it with tensor.extract; unpadded dimensions
// read at the output index.
// CHECK-LABEL: func.func @pad_reflect
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//       CHECK:   linalg.generic
//  CHECK-SAME:     outs(%{{.+}} : tensor<2x7xf32>)
//       CHECK:     %[[I0:.+]] = linalg.index 0 : index
//       CHECK:     %[[I1:.+]] = linalg.index 1 : index
//       CHECK:     arith.subi %[[I1]], %c2
//       CHECK:     arith.remsi %{{.+}}, %c4
//       CHECK:     arith.select
//       CHECK:     tensor.extract %[[X]][%[[I0]], %{{.+}}] : tensor<2x3xf32>
func.func @pad_reflect(%x: tensor<2x3xf32>) -> tensor<2x7xf32> {
  %0 = tcc.pad %x, low = [0, 2], high = [0, 2] {mode = 1 : i32} : tensor<2x3xf32> -> tensor<2x7xf32>
  return %0 : tensor<2x7xf32>
}

// -----

// Tests that edge padding clamps the source index.
// CHECK-LABEL: func.func @pad_edge
//       CHECK:     arith.maxsi
//       CHECK:     arith.minsi
//       CHECK:     tensor.extract
func.func @pad_edge(%x: tensor<3xf32>) -> tensor<6xf32> {
  %0 = tcc.pad %x, low = [1], high = [2] {mode = 2 : i32} : tensor<3xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// Tests that wrap padding takes the source index modulo the size.
// CHECK-LABEL: func.func @pad_wrap
//       CHECK:     arith.remsi %{{.+}}, %c3
//       CHECK:     tensor.extract
func.func @pad_wrap(%x: tensor<3xf32>) -> tensor<6xf32> {
  %0 = tcc.pad %x, low = [1], high = [2] {mode = 3 : i32} : tensor<3xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// Tests that gather reads the indices through a projected map, wraps a
// negative index once and clamps it into [0, 3] before tensor.extract.
// CHECK:       #[[IDX:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @gather
//  CHECK-SAME:   (%[[X:.+]]: tensor<3x4xf32>, %[[I:.+]]: tensor<2xi64>)
//       CHECK:   linalg.generic {indexing_maps = [#[[IDX]], #{{.+}}]
//  CHECK-SAME:     ins(%[[I]] : tensor<2xi64>)
//       CHECK:   ^bb0(%[[V:.+]]: i64, %{{.+}}: f32):
//       CHECK:     %[[D0:.+]] = linalg.index 0 : index
//       CHECK:     %[[C:.+]] = arith.index_cast %[[V]] : i64 to index
//       CHECK:     %[[NEG:.+]] = arith.cmpi slt, %[[C]]
//       CHECK:     %[[ADD:.+]] = arith.addi %[[C]], %c4
//       CHECK:     %[[W:.+]] = arith.select %[[NEG]], %[[ADD]], %[[C]]
//       CHECK:     %[[LO:.+]] = arith.maxsi %[[W]]
//       CHECK:     %[[CL:.+]] = arith.minsi %[[LO]], %c3
//       CHECK:     tensor.extract %[[X]][%[[D0]], %[[CL]]] : tensor<3x4xf32>
func.func @gather(%x: tensor<3x4xf32>, %i: tensor<2xi64>) -> tensor<3x2xf32> {
  %0 = tcc.gather %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that gather_elements reads the index at the output position and the
// input at that index along the axis.
// CHECK-LABEL: func.func @gather_elements
//  CHECK-SAME:   (%[[X:.+]]: tensor<3x4xf32>, %[[I:.+]]: tensor<3x2xi32>)
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%[[I]] : tensor<3x2xi32>)
//       CHECK:     %[[D0:.+]] = linalg.index 0 : index
//       CHECK:     arith.index_cast %{{.+}} : i32 to index
//       CHECK:     %[[CL:.+]] = arith.minsi
//       CHECK:     tensor.extract %[[X]][%[[D0]], %[[CL]]] : tensor<3x4xf32>
func.func @gather_elements(%x: tensor<3x4xf32>, %i: tensor<3x2xi32>) -> tensor<3x2xf32> {
  %0 = tcc.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that scatter_elements with reduction add is a loop nest over the
// updates that reads, adds and inserts one element per iteration.
// CHECK-LABEL: func.func @scatter_elements_add
//  CHECK-SAME:   (%[[X:.+]]: tensor<3x3xf32>, %[[I:.+]]: tensor<2x3xi64>, %[[U:.+]]: tensor<2x3xf32>)
//       CHECK:   %[[R:.+]] = scf.for %[[A:.+]] = {{.+}} iter_args(%[[ACC0:.+]] = %[[X]]) -> (tensor<3x3xf32>)
//       CHECK:     scf.for %[[B:.+]] = {{.+}} iter_args(%[[ACC:.+]] = %[[ACC0]]) -> (tensor<3x3xf32>)
//       CHECK:       tensor.extract %[[I]][%[[A]], %[[B]]] : tensor<2x3xi64>
//       CHECK:       %[[ROW:.+]] = arith.minsi
//       CHECK:       %[[UPD:.+]] = tensor.extract %[[U]][%[[A]], %[[B]]] : tensor<2x3xf32>
//       CHECK:       %[[OLD:.+]] = tensor.extract %[[ACC]][%[[ROW]], %[[B]]] : tensor<3x3xf32>
//       CHECK:       %[[SUM:.+]] = arith.addf %[[OLD]], %[[UPD]] : f32
//       CHECK:       tensor.insert %[[SUM]] into %[[ACC]][%[[ROW]], %[[B]]] : tensor<3x3xf32>
//       CHECK:   return %[[R]]
func.func @scatter_elements_add(%x: tensor<3x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %0 = tcc.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = 1 : i32} : tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// Tests that scatter_elements without reduction inserts the update as it is.
// CHECK-LABEL: func.func @scatter_elements_none
//       CHECK:       %[[UPD:.+]] = tensor.extract
//   CHECK-NOT:       arith.addf
//       CHECK:       tensor.insert %[[UPD]]
func.func @scatter_elements_none(%x: tensor<3xf32>, %i: tensor<2xi32>, %u: tensor<2xf32>) -> tensor<3xf32> {
  %0 = tcc.scatter_elements %x, %i, %u {axis = 0 : i64} : tensor<3xf32>, tensor<2xi32>, tensor<2xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that scatter_nd writing rows loops over the index tuples and inserts
// one row slice per tuple.
// CHECK-LABEL: func.func @scatter_nd_rows
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x3xf32>, %[[I:.+]]: tensor<2x1xi64>, %[[U:.+]]: tensor<2x3xf32>)
//       CHECK:   scf.for %[[K:.+]] = {{.+}} iter_args(%[[ACC:.+]] = %[[X]]) -> (tensor<4x3xf32>)
//       CHECK:     tensor.extract %[[I]][%[[K]], %{{.+}}] : tensor<2x1xi64>
//       CHECK:     %[[ROW:.+]] = arith.minsi
//       CHECK:     %[[S:.+]] = tensor.extract_slice %[[U]][%[[K]], 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<3xf32>
//       CHECK:     tensor.insert_slice %[[S]] into %[[ACC]][%[[ROW]], 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<4x3xf32>
func.func @scatter_nd_rows(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = tcc.scatter_nd %x, %i, %u : tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that scatter_nd with a reduction combines the old and new slices in
// a linalg.generic before inserting.
// CHECK-LABEL: func.func @scatter_nd_max
//       CHECK:     %[[NEW:.+]] = tensor.extract_slice
//       CHECK:     %[[OLD:.+]] = tensor.extract_slice
//       CHECK:     linalg.generic
//  CHECK-SAME:       ins(%[[OLD]], %[[NEW]] : tensor<3xf32>, tensor<3xf32>)
//       CHECK:       arith.maximumf
//       CHECK:     tensor.insert_slice
func.func @scatter_nd_max(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = tcc.scatter_nd %x, %i, %u {reduction = 3 : i32} : tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that scatter_nd with full index tuples inserts single elements.
// CHECK-LABEL: func.func @scatter_nd_elements
//       CHECK:     %[[R:.+]] = arith.minsi
//       CHECK:     %[[C:.+]] = arith.minsi
//       CHECK:     %[[U:.+]] = tensor.extract
//       CHECK:     tensor.insert %[[U]] into %{{.+}}[%[[R]], %[[C]]] : tensor<4x3xf32>
func.func @scatter_nd_elements(%x: tensor<4x3xf32>, %i: tensor<2x2xi64>, %u: tensor<2xf32>) -> tensor<4x3xf32> {
  %0 = tcc.scatter_nd %x, %i, %u : tensor<4x3xf32>, tensor<2x2xi64>, tensor<2xf32>
  return %0 : tensor<4x3xf32>
}
