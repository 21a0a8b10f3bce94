// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s --check-prefix=NOTCC

// tcc.resize becomes one linalg.generic that reads compile-time tap tables
// (input index and weight per output coordinate, one 1-D constant per tap
// and resampled dimension) and gathers the taps with tensor.extract.
// Dimensions that map each output index to itself read at that index.
// No tcc op survives anywhere:
// NOTCC-NOT: tcc.

// Tests nearest, asymmetric, floor: one index table per resampled dimension
// (0 0 1 1) and no weights; N and C read at their own index.
// CHECK-DAG:   #[[ROWS:.+]] = affine_map<(d0, d1, d2, d3) -> (d2)>
// CHECK-DAG:   #[[COLS:.+]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @resize_nearest
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x1x2x2xf32>)
//       CHECK:   %[[TR:.+]] = arith.constant dense<[0, 0, 1, 1]> : tensor<4xi64>
//       CHECK:   %[[TC:.+]] = arith.constant dense<[0, 0, 1, 1]> : tensor<4xi64>
//       CHECK:   linalg.generic {indexing_maps = [#[[ROWS]], #[[COLS]], #{{.+}}]
//  CHECK-SAME:     ins(%[[TR]], %[[TC]] : tensor<4xi64>, tensor<4xi64>)
//       CHECK:   ^bb0(%[[R:.+]]: i64, %[[C:.+]]: i64, %{{.+}}: f32):
//       CHECK:     %[[N:.+]] = linalg.index 0 : index
//       CHECK:     %[[CH:.+]] = linalg.index 1 : index
//       CHECK:     %[[RI:.+]] = arith.index_cast %[[R]] : i64 to index
//       CHECK:     %[[CI:.+]] = arith.index_cast %[[C]] : i64 to index
//       CHECK:     %[[V:.+]] = tensor.extract %[[X]][%[[N]], %[[CH]], %[[RI]], %[[CI]]]
//       CHECK:     linalg.yield %[[V]] : f32
func.func @resize_nearest(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %0 = tcc.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, coordinate_mode = 2 : i32, nearest_mode = 2 : i32} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Tests linear, half_pixel, 2x: two taps per dimension with weights
// 0.25 / 0.75, edges clamped (index 0 twice at o = 0), four weighted reads.
// CHECK-LABEL: func.func @resize_linear
//       CHECK:   arith.constant dense<[0, 0, 0, 1]> : tensor<4xi64>
//       CHECK:   arith.constant dense<[2.500000e-01, 7.500000e-01, 2.500000e-01, 7.500000e-01]> : tensor<4xf32>
//       CHECK:   arith.constant dense<[0, 1, 1, 1]> : tensor<4xi64>
//       CHECK:   arith.constant dense<[7.500000e-01, 2.500000e-01, 7.500000e-01, 2.500000e-01]> : tensor<4xf32>
//       CHECK:   linalg.generic
//   CHECK-COUNT-4:     tensor.extract
//       CHECK:     linalg.yield
func.func @resize_linear(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %0 = tcc.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = 1 : i32} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Tests cubic resampling of one dimension: four taps, so four reads (the
// other dimensions are identities).
// CHECK-LABEL: func.func @resize_cubic_1d
//       CHECK:   linalg.generic
//   CHECK-COUNT-4:     tensor.extract
//   CHECK-NOT:     tensor.extract
//       CHECK:     linalg.yield
func.func @resize_cubic_1d(%x: tensor<2x3x4xf32>) -> tensor<2x3x6xf32> {
  %0 = tcc.resize %x {scales = array<f64: 1.0, 1.0, 1.5>, mode = 2 : i32, cubic_coeff_a = -0.5 : f64, exclude_outside = true} : tensor<2x3x4xf32> -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>
}

// -----

// Tests tf_crop_and_resize: a validity table per dimension marks outputs
// outside the roi, which take extrapolation_value.
// CHECK-LABEL: func.func @resize_crop
//       CHECK:   arith.constant dense<[true, true, false]> : tensor<3xi1>
//       CHECK:   linalg.generic
//       CHECK:     %[[EXT:.+]] = arith.constant 1.000000e+01 : f32
//       CHECK:     arith.select %{{.+}}, %{{.+}}, %[[EXT]] : f32
func.func @resize_crop(%x: tensor<1x4xf32>) -> tensor<1x3xf32> {
  %0 = tcc.resize %x {scales = array<f64: 1.0, 0.75>, mode = 1 : i32, coordinate_mode = 4 : i32, extrapolation_value = 10.0 : f64, roi = array<f64: 0.0, 0.2, 1.0, 1.4>} : tensor<1x4xf32> -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// Tests that an integer linear resize interpolates in f32, then clamps to
// the type's range and converts back (ui8: uitofp, fptoui).
// CHECK-LABEL: func.func @resize_linear_ui8
//       CHECK:     arith.uitofp %{{.+}} : i8 to f32
//       CHECK:     arith.maximumf
//       CHECK:     arith.minimumf
//       CHECK:     arith.fptoui %{{.+}} : f32 to i8
func.func @resize_linear_ui8(%x: tensor<1x2xui8>) -> tensor<1x4xui8> {
  %0 = tcc.resize %x {scales = array<f64: 1.0, 2.0>, mode = 1 : i32} : tensor<1x2xui8> -> tensor<1x4xui8>
  return %0 : tensor<1x4xui8>
}

// -----

// Tests that a resize that changes nothing reads every dimension in place.
// CHECK-LABEL: func.func @resize_identity
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//       CHECK:   linalg.generic
//   CHECK-NOT:     arith.constant
//       CHECK:     %[[A:.+]] = linalg.index 0 : index
//       CHECK:     %[[B:.+]] = linalg.index 1 : index
//       CHECK:     tensor.extract %[[X]][%[[A]], %[[B]]]
func.func @resize_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tcc.resize %x {scales = array<f64: 1.0, 1.0>, mode = 2 : i32} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
