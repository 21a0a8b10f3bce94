// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s --check-prefix=NOTCC
// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg=sixteen-bit-matmuls=true %s | FileCheck %s --check-prefix=SIXTEEN
// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg=sixteen-bit-convs=true %s | FileCheck %s --check-prefix=CONV16
// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg="sixteen-bit-matmuls=true sixteen-bit-convs=true few-point-gemms=true" %s | FileCheck %s --check-prefix=GEMM

// Matmul, convolution and pooling become named linalg ops where one computes
// exactly the tcc op, and linalg.generic otherwise; padding is an explicit
// tensor.pad. No tcc op survives anywhere (convolution gradients carry a
// tcc.conv_backward attribute):
// NOTCC-NOT: {{^ *(%.* = )?}}tcc.

// Tests that a 2-D matmul is linalg.matmul into a zero-filled result.
// CHECK-LABEL: func.func @matmul_2d
//  CHECK-SAME:   (%[[A:.+]]: tensor<3x4xf32>, %[[B:.+]]: tensor<4x5xf32>)
//       CHECK:   %[[Z:.+]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[INIT:.+]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.+}} : tensor<3x5xf32>)
//       CHECK:   %[[R:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<3x4xf32>, tensor<4x5xf32>) outs(%[[INIT]] : tensor<3x5xf32>)
//       CHECK:   return %[[R]]
func.func @matmul_2d(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = tcc.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Tests that a 3-D matmul is linalg.batch_matmul, here on i32.
// CHECK-LABEL: func.func @matmul_3d_i32
//       CHECK:   linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<2x3x4xi32>, tensor<2x4x5xi32>) outs(%{{.+}} : tensor<2x3x5xi32>)
func.func @matmul_3d_i32(%a: tensor<2x3x4xi32>, %b: tensor<2x4x5xi32>) -> tensor<2x3x5xi32> {
  %0 = tcc.matmul %a, %b : (tensor<2x3x4xi32>, tensor<2x4x5xi32>) -> tensor<2x3x5xi32>
  return %0 : tensor<2x3x5xi32>
}

// -----

// Tests that several batch dimensions are collapsed into one for
// linalg.batch_matmul and expanded again.
// CHECK-LABEL: func.func @matmul_batched
//       CHECK:   %[[A:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2], [3]] : tensor<2x5x3x4xf32> into tensor<10x3x4xf32>
//       CHECK:   %[[B:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2], [3]] : tensor<2x5x4x6xf32> into tensor<10x4x6xf32>
//       CHECK:   %[[R:.+]] = linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<10x3x4xf32>, tensor<10x4x6xf32>)
//       CHECK:   tensor.expand_shape %[[R]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 5, 3, 6]
func.func @matmul_batched(%a: tensor<2x5x3x4xf32>, %b: tensor<2x5x4x6xf32>) -> tensor<2x5x3x6xf32> {
  %0 = tcc.matmul %a, %b : (tensor<2x5x3x4xf32>, tensor<2x5x4x6xf32>) -> tensor<2x5x3x6xf32>
  return %0 : tensor<2x5x3x6xf32>
}

// -----

// Tests that a padded, strided 2-D convolution is a zero tensor.pad and
// linalg.conv_2d_nchw_fchw with the strides and dilations.
// CHECK-LABEL: func.func @conv2d
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x2x5x5xf32>, %[[W:.+]]: tensor<3x2x3x3xf32>)
//       CHECK:   %[[Z:.+]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CHECK:     tensor.yield %[[Z]] : f32
//       CHECK:   } : tensor<1x2x5x5xf32> to tensor<1x2x7x7xf32>
//       CHECK:   linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>}
//  CHECK-SAME:     ins(%[[P]], %[[W]] : tensor<1x2x7x7xf32>, tensor<3x2x3x3xf32>)
func.func @conv2d(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x5xf32> {
  %0 = tcc.conv %x, %w {strides = array<i64: 2, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x5xf32>
  return %0 : tensor<1x3x3x5xf32>
}

// -----

// Tests that 1-D and 3-D ungrouped convolutions use their named ops.
// CHECK-LABEL: func.func @conv1d_conv3d
//       CHECK:   linalg.conv_1d_ncw_fcw {dilations = dense<3> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
//       CHECK:   linalg.conv_3d_ncdhw_fcdhw
func.func @conv1d_conv3d(%x: tensor<2x2x7xf32>, %w: tensor<3x2x2xf32>, %y: tensor<1x2x3x4x3xf32>, %v: tensor<2x2x2x2x2xf32>) -> (tensor<2x3x4xf32>, tensor<1x2x2x2x2xf32>) {
  %0 = tcc.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 3>, pad_low = array<i64: 0>, pad_high = array<i64: 0>, group = 1 : i64} : (tensor<2x2x7xf32>, tensor<3x2x2xf32>) -> tensor<2x3x4xf32>
  %1 = tcc.conv %y, %v {strides = array<i64: 1, 2, 1>, dilations = array<i64: 1, 1, 1>, pad_low = array<i64: 0, 0, 0>, pad_high = array<i64: 0, 0, 0>, group = 1 : i64} : (tensor<1x2x3x4x3xf32>, tensor<2x2x2x2x2xf32>) -> tensor<1x2x2x2x2xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<1x2x2x2x2xf32>
}

// -----

// Tests that a grouped 2-D convolution splits the channels into
// [N, G, C/G, ...] and the filters into [G, M/G, C/G, ...] for
// linalg.conv_2d_ngchw_gfchw, then merges the groups again.
// CHECK-LABEL: func.func @conv2d_grouped
//       CHECK:   %[[P:.+]] = tensor.pad
//       CHECK:   %[[XG:.+]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [2, 2, 2, 7, 7]
//       CHECK:   %[[WG:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2], [3], [4]] output_shape [2, 3, 2, 2, 3]
//       CHECK:   %[[Y:.+]] = linalg.conv_2d_ngchw_gfchw {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
//  CHECK-SAME:     ins(%[[XG]], %[[WG]] : tensor<2x2x2x7x7xf32>, tensor<2x3x2x2x3xf32>)
//       CHECK:   tensor.collapse_shape %[[Y]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<2x2x3x3x3xf32> into tensor<2x6x3x3xf32>
func.func @conv2d_grouped(%x: tensor<2x4x6x5xf32>, %w: tensor<6x2x2x3xf32>) -> tensor<2x6x3x3xf32> {
  %0 = tcc.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 2, 1>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 0, 2>, group = 2 : i64} : (tensor<2x4x6x5xf32>, tensor<6x2x2x3xf32>) -> tensor<2x6x3x3xf32>
  return %0 : tensor<2x6x3x3xf32>
}

// -----

// Tests that a depthwise convolution (group = C = M) drops the filter's unit
// dimension for linalg.depthwise_conv_2d_nchw_chw.
// CHECK-LABEL: func.func @conv2d_depthwise
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x3x4x4xf32>, %[[W:.+]]: tensor<3x1x2x2xf32>)
//       CHECK:   %[[WD:.+]] = tensor.collapse_shape %[[W]] {{\[\[}}0], [1, 2], [3]] : tensor<3x1x2x2xf32> into tensor<3x2x2xf32>
//       CHECK:   linalg.depthwise_conv_2d_nchw_chw
//  CHECK-SAME:     ins(%[[X]], %[[WD]] : tensor<1x3x4x4xf32>, tensor<3x2x2xf32>)
func.func @conv2d_depthwise(%x: tensor<1x3x4x4xf32>, %w: tensor<3x1x2x2xf32>) -> tensor<1x3x3x3xf32> {
  %0 = tcc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, group = 3 : i64} : (tensor<1x3x4x4xf32>, tensor<3x1x2x2xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}

// -----

// Tests that a grouped 1-D convolution with stride and dilation is one
// generic over (n, g, m, o, c, k) reading the input at o * 2 + k * 2.
// CHECK-DAG:   #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3 * 2 + d5 * 2)>
// CHECK-DAG:   #[[FILTER:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>
// CHECK-DAG:   #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @conv1d_grouped
//       CHECK:   tensor.pad %{{.+}} low[0, 0, 2] high[0, 0, 1]
//       CHECK:   linalg.generic {indexing_maps = [#[[IN]], #[[FILTER]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
//  CHECK-SAME:     ins(%{{.+}}, %{{.+}} : tensor<1x2x2x12xf32>, tensor<2x2x2x3xf32>)
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
//       CHECK:   tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2], [3]] : tensor<1x2x2x4xf32> into tensor<1x4x4xf32>
func.func @conv1d_grouped(%x: tensor<1x4x9xf32>, %w: tensor<4x2x3xf32>) -> tensor<1x4x4xf32> {
  %0 = tcc.conv %x, %w {strides = array<i64: 2>, dilations = array<i64: 2>, pad_low = array<i64: 2>, pad_high = array<i64: 1>, group = 2 : i64} : (tensor<1x4x9xf32>, tensor<4x2x3xf32>) -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}

// -----

// Tests that a grouped conv_transpose zero-dilates the input by the stride
// into a zero buffer that is the window the output reads (x at
// dilation * (K - 1) - pad_low = 1, every 2nd position), and convolves it
// with stride 1 in the same 2 groups by the filter flipped (read at 2 - k)
// and transposed within each group ([G, C/G, M/G, K] read as [G, M/G, C/G,
// K]); a 1-D one carries no library-call marker.
// CHECK-DAG:   #[[FLIP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, -d3 + 2)>
// CHECK-LABEL: func.func @conv_transpose_1d
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x4x5xf32>, %[[W:.+]]: tensor<4x3x3xf32>)
//       CHECK:   %[[Z:.+]] = linalg.fill {{.+}} -> tensor<1x4x13xf32>
//       CHECK:   %[[D:.+]] = tensor.insert_slice %[[X]] into %[[Z]][0, 0, 1] [1, 4, 5] [1, 1, 2]
//   CHECK-NOT:   tensor.extract_slice
//       CHECK:   %[[WG:.+]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 2, 3, 3]
//       CHECK:   %[[F:.+]] = linalg.generic {indexing_maps = [#[[FLIP]], #{{.+}}]
//  CHECK-SAME:     ins(%[[WG]] : tensor<2x2x3x3xf32>) outs(%{{.+}} : tensor<2x3x2x3xf32>)
//       CHECK:   %[[Y:.+]] = linalg.generic
//  CHECK-NOT:      tcc.conv_backward
//  CHECK-SAME:     ins(%{{.+}}, %{{.+}} : tensor<1x2x2x13xf32>, tensor<2x3x2x3xf32>)
//       CHECK:   tensor.collapse_shape %[[Y]] {{\[\[}}0], [1, 2], [3]] : tensor<1x2x3x11xf32> into tensor<1x6x11xf32>
func.func @conv_transpose_1d(%x: tensor<1x4x5xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x6x11xf32> {
  %0 = tcc.conv_transpose %x, %w {strides = array<i64: 2>, dilations = array<i64: 1>, pad_low = array<i64: 1>, pad_high = array<i64: 0>, output_padding = array<i64: 1>, group = 2 : i64} : (tensor<1x4x5xf32>, tensor<4x3x3xf32>) -> tensor<1x6x11xf32>
  return %0 : tensor<1x6x11xf32>
}

// -----

// Tests that a ceil_mode max pool pads with -inf up to the last window's
// reach (2 rows, 1 column, past pad_high) for linalg.pooling_nchw_max.
// CHECK-LABEL: func.func @max_pool_ceil
//       CHECK:   %[[NINF:.+]] = arith.constant 0xFF800000 : f32
//       CHECK:   %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 0] high[0, 0, 2, 1]
//       CHECK:     tensor.yield %[[NINF]] : f32
//       CHECK:   %[[INIT:.+]] = linalg.fill ins(%[[NINF]] : f32)
//       CHECK:   %[[WIN:.+]] = tensor.empty() : tensor<3x2xf32>
//       CHECK:   linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
//  CHECK-SAME:     ins(%[[P]], %[[WIN]] : tensor<1x2x9x8xf32>, tensor<3x2xf32>) outs(%[[INIT]] : tensor<1x2x4x4xf32>)
func.func @max_pool_ceil(%x: tensor<1x2x6x7xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tcc.max_pool %x {kernel = array<i64: 3, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 1, 0>, ceil_mode = true} : tensor<1x2x6x7xf32> -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// Tests that a ui8 max pool is a generic with arith.maxui (the named ops
// compare signed), starting from 0.
// CHECK-LABEL: func.func @max_pool_ui8
//       CHECK:   %[[Z:.+]] = arith.constant 0 : i8
//       CHECK:   linalg.fill ins(%[[Z]] : i8)
//       CHECK:   linalg.generic
//  CHECK-SAME:     iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
//       CHECK:     arith.maxui
func.func @max_pool_ui8(%x: tensor<1x1x4x4xui8>) -> tensor<1x1x2x2xui8> {
  %0 = tcc.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x1x4x4xui8> -> tensor<1x1x2x2xui8>
  return %0 : tensor<1x1x2x2xui8>
}

// -----

// Tests that a 1-D dilated max pool is linalg.pooling_ncw_max.
// CHECK-LABEL: func.func @max_pool_1d
//       CHECK:   linalg.pooling_ncw_max {dilations = dense<2> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>}
func.func @max_pool_1d(%x: tensor<2x1x9xf32>) -> tensor<2x1x3xf32> {
  %0 = tcc.max_pool %x {kernel = array<i64: 3>, strides = array<i64: 2>, dilations = array<i64: 2>, pad_low = array<i64: 0>, pad_high = array<i64: 0>} : tensor<2x1x9xf32> -> tensor<2x1x3xf32>
  return %0 : tensor<2x1x3xf32>
}

// -----

// Tests that a ceil_mode average pool with count_include_pad sums with
// linalg.pooling_nchw_sum, then divides by per-dimension divisor tables that
// count the padding but not the last window's part past pad_high (2).
// CHECK-DAG:   #[[ROWS:.+]] = affine_map<(d0, d1, d2, d3) -> (d2)>
// CHECK-DAG:   #[[COLS:.+]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @avg_pool_ceil
//       CHECK:   %[[SUM:.+]] = linalg.pooling_nchw_sum
//       CHECK:   %[[T0:.+]] = arith.constant dense<[3.000000e+00, 3.000000e+00, 3.000000e+00, 2.000000e+00]> : tensor<4xf32>
//       CHECK:   %[[T1:.+]] = arith.constant dense<[3.000000e+00, 3.000000e+00, 3.000000e+00, 2.000000e+00]> : tensor<4xf32>
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[ROWS]], #[[COLS]], #{{.+}}]
//  CHECK-SAME:     ins(%[[SUM]], %[[T0]], %[[T1]] : tensor<1x1x4x4xf32>, tensor<4xf32>, tensor<4xf32>)
//       CHECK:   ^bb0(%[[S:.+]]: f32, %[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
//       CHECK:     %[[D:.+]] = arith.mulf %[[A]], %[[B]] : f32
//       CHECK:     arith.divf %[[S]], %[[D]] : f32
func.func @avg_pool_ceil(%x: tensor<1x1x6x6xf32>) -> tensor<1x1x4x4xf32> {
  %0 = tcc.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, ceil_mode = true, count_include_pad = true} : tensor<1x1x6x6xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Tests that an unpadded average pool divides by one constant.
// CHECK-LABEL: func.func @avg_pool_plain
//       CHECK:   linalg.pooling_nchw_sum
//       CHECK:   linalg.generic
//       CHECK:     %[[N:.+]] = arith.constant 4.000000e+00 : f32
//       CHECK:     arith.divf %{{.+}}, %[[N]] : f32
func.func @avg_pool_plain(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = tcc.avg_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Tests that a 3-D average pool is a generic pool with a window operand that
// gives linalg the window loops' bounds.
// CHECK-DAG:   #[[WIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7)>
// CHECK-LABEL: func.func @avg_pool_3d
//       CHECK:   %[[W:.+]] = tensor.empty() : tensor<2x2x2xf32>
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[WIN]], #{{.+}}]
//  CHECK-SAME:     ins(%{{.+}}, %[[W]] : tensor<1x1x3x3x4xf32>, tensor<2x2x2xf32>)
//       CHECK:     arith.addf
func.func @avg_pool_3d(%x: tensor<1x1x3x3x4xf32>) -> tensor<1x1x2x1x2xf32> {
  %0 = tcc.avg_pool %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 1, 2, 2>, dilations = array<i64: 1, 1, 1>, pad_low = array<i64: 0, 0, 0>, pad_high = array<i64: 0, 0, 0>} : tensor<1x1x3x3x4xf32> -> tensor<1x1x2x1x2xf32>
  return %0 : tensor<1x1x2x1x2xf32>
}

// -----

// Tests that a one-group conv_transpose with stride 1 becomes the named
// convolution of its input padded by dilation * (K - 1) - pad_low = 1 on
// each side, by the filter transposed to [out, in, K...] and flipped (read
// at 2 - k), marked as the data gradient of the convolution from
// [2, 6, 5, 5] to [2, 4, 5, 5] by [4, 6, 3, 3] with pads 1 (a
// CONV2D_BACKWARD_DATA call).
// CHECK-DAG:   #[[FLIP:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2 + 2, -d3 + 2)>
// CHECK-LABEL: func.func @conv_transpose_stride1
//       CHECK:   %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CHECK:   %[[F:.+]] = linalg.generic {indexing_maps = [#[[FLIP]], #{{.+}}]
//  CHECK-SAME:     ins(%{{.+}} : tensor<4x6x3x3xf32>) outs(%{{.+}} : tensor<6x4x3x3xf32>)
//       CHECK:   linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
//  CHECK-SAME:     tcc.conv_backward = {groups = 1 : i64, kind = 5 : i32, params = array<i64: 2, 6, 5, 5, 4, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1>}}
//  CHECK-SAME:     ins(%[[P]], %[[F]] : tensor<2x4x7x7xf32>, tensor<6x4x3x3xf32>)
func.func @conv_transpose_stride1(%x: tensor<2x4x5x5xf32>, %w: tensor<4x6x3x3xf32>) -> tensor<2x6x5x5xf32> {
  %0 = tcc.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, group = 1 : i64} : (tensor<2x4x5x5xf32>, tensor<4x6x3x3xf32>) -> tensor<2x6x5x5xf32>
  return %0 : tensor<2x6x5x5xf32>
}

// -----

// Tests that a bf16 matmul (the precision policy's) is the f32 matmul of
// its operands widened exactly, rounded once: f32 accumulation.
// CHECK-LABEL: func.func @matmul_bf16
//       CHECK:   arith.extf %{{.*}} : bf16 to f32
//       CHECK:   arith.extf %{{.*}} : bf16 to f32
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x4xf32>, tensor<4x5xf32>) outs(%{{.*}} : tensor<3x5xf32>)
//       CHECK:   arith.truncf %{{.*}} : f32 to bf16
// With sixteen-bit-matmuls (the CUDA pipeline), the matmul reads the bf16
// operands as they are into f32 sums (linalg converts each to the output's
// f32), then one rounding: no widened copies.
// SIXTEEN-LABEL: func.func @matmul_bf16
//   SIXTEEN-NOT:   arith.extf
//       SIXTEEN:   %[[Z:.+]] = linalg.fill {{.*}} -> tensor<3x5xf32>
//       SIXTEEN:   %[[M:.+]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x4xbf16>, tensor<4x5xbf16>) outs(%[[Z]] : tensor<3x5xf32>)
//       SIXTEEN:   linalg.generic {{.*}} ins(%[[M]] : tensor<3x5xf32>) outs(%{{.*}} : tensor<3x5xbf16>)
//       SIXTEEN:     arith.truncf %{{.*}} : f32 to bf16
func.func @matmul_bf16(%a: tensor<3x4xbf16>, %b: tensor<4x5xbf16>) -> tensor<3x5xbf16> {
  %0 = tcc.matmul %a, %b : (tensor<3x4xbf16>, tensor<4x5xbf16>) -> tensor<3x5xbf16>
  return %0 : tensor<3x5xbf16>
}

// -----

// Tests that a batched f16 matmul (batch dimensions collapsed into one)
// widens its operands by default, and with sixteen-bit-matmuls reads them
// as f16 into an f32 batch_matmul, expanded and rounded once.
// CHECK-LABEL: func.func @batch_matmul_f16
//       CHECK:   arith.extf %{{.*}} : f16 to f32
//       CHECK:   linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<6x3x4xf32>, tensor<6x4x5xf32>)
// SIXTEEN-LABEL: func.func @batch_matmul_f16
//   SIXTEEN-NOT:   arith.extf
//       SIXTEEN:   %[[M:.+]] = linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<6x3x4xf16>, tensor<6x4x5xf16>) outs(%{{.*}} : tensor<6x3x5xf32>)
//       SIXTEEN:   tensor.expand_shape %[[M]] {{.*}} into tensor<2x3x3x5xf32>
//       SIXTEEN:   arith.truncf %{{.*}} : f32 to f16
func.func @batch_matmul_f16(%a: tensor<2x3x3x4xf16>, %b: tensor<2x3x4x5xf16>) -> tensor<2x3x3x5xf16> {
  %0 = tcc.matmul %a, %b : (tensor<2x3x3x4xf16>, tensor<2x3x4x5xf16>) -> tensor<2x3x3x5xf16>
  return %0 : tensor<2x3x3x5xf16>
}

// -----

// Tests that a strided one-group conv_transpose zero-dilates its input into
// the buffer the output reads (x at 2 - pad_low + 2i) and convolves it with
// stride 1 by the named convolution, marked as the data gradient of the
// stride-2 convolution from [1, 5, 8, 8] to [1, 3, 4, 4] (pad_bottom /
// pad_right 0: the windows reach no further).
// CHECK-LABEL: func.func @conv_transpose_stride2
//       CHECK:   %[[Z:.+]] = linalg.fill {{.+}} -> tensor<1x3x10x10xf32>
//       CHECK:   %[[D:.+]] = tensor.insert_slice %{{.+}} into %[[Z]][0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2]
//       CHECK:   linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
//  CHECK-SAME:     tcc.conv_backward = {groups = 1 : i64, kind = 5 : i32, params = array<i64: 1, 5, 8, 8, 3, 3, 3, 4, 4, 2, 2, 1, 1, 1, 1, 0, 0>}}
//  CHECK-SAME:     ins(%[[D]], %{{.+}} : tensor<1x3x10x10xf32>, tensor<5x3x3x3xf32>)
func.func @conv_transpose_stride2(%x: tensor<1x3x4x4xf32>, %w: tensor<3x5x3x3xf32>) -> tensor<1x5x8x8xf32> {
  %0 = tcc.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<3x5x3x3xf32>) -> tensor<1x5x8x8xf32>
  return %0 : tensor<1x5x8x8xf32>
}

// -----

// Tests that an f16 softmax computes in f32 (its row max and sum) and
// rounds its probabilities once.
// CHECK-LABEL: func.func @softmax_f16
//       CHECK:   arith.extf %{{.*}} : f16 to f32
//       CHECK:   arith.maximumf %{{.*}} : f32
//       CHECK:   arith.truncf %{{.*}} : f32 to f16
func.func @softmax_f16(%x: tensor<2x8xf16>) -> tensor<2x8xf16> {
  %0 = tcc.softmax %x {axis = 1 : i64} : tensor<2x8xf16>
  return %0 : tensor<2x8xf16>
}

// -----

// Tests that a 2-D filter gradient is one generic over the padded input and
// the gradient, loops (m, c, kh, kw, n, oh, ow): the input read at
// (n, c, 2 oh + kh, 3 ow + kw), the gradient at (n, m, oh, ow), reductions
// over n, oh, ow; marked as a CONV2D_BACKWARD_WEIGHTS call of the unpadded
// geometry (pad_right 1 of the 2: the windows reach one column of it).
//   CHECK-DAG:   #[[XM:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 * 2 + d2, d6 * 3 + d3)>
//   CHECK-DAG:   #[[GM:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>
//   CHECK-DAG:   #[[WM:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @conv_backward_filter
//       CHECK:   %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 0] high[0, 0, 0, 2]
//       CHECK:   linalg.generic {indexing_maps = [#[[XM]], #[[GM]], #[[WM]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
//  CHECK-SAME:     ins(%[[P]], %{{.+}} : tensor<1x2x7x9xf32>, tensor<1x3x3x3xf32>) outs(%{{.+}} : tensor<3x2x3x2xf32>)
//  CHECK-SAME:     attrs = {tcc.conv_backward = {groups = 1 : i64, kind = 6 : i32, params = array<i64: 1, 2, 6, 7, 3, 3, 2, 3, 3, 2, 3, 1, 1, 1, 0, 0, 1>}}
func.func @conv_backward_filter(%x: tensor<1x2x6x7xf32>, %g: tensor<1x3x3x3xf32>) -> tensor<3x2x3x2xf32> {
  %0 = tcc.conv_backward_filter %x, %g {kernel = array<i64: 3, 2>, strides = array<i64: 2, 3>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 0, 2>, group = 1 : i64} : (tensor<1x2x6x7xf32>, tensor<1x3x3x3xf32>) -> tensor<3x2x3x2xf32>
  return %0 : tensor<3x2x3x2xf32>
}

// -----

// Tests that a grouped filter gradient reads [N, G, C/G, ...] and
// [N, G, M/G, ...] views, writes [G, M/G, C/G, K...] (loops g, m, c, k...,
// then n, o...) and reshapes it to [M, C/G, K...]; a 1-D one carries no
// marker.
// CHECK-LABEL: func.func @conv_backward_filter_grouped_1d
//       CHECK:   tensor.expand_shape %{{.+}} {{\[\[}}0], [1, 2], [3]] output_shape [2, 2, 2, 9] : tensor<2x4x9xf32> into tensor<2x2x2x9xf32>
//       CHECK:   tensor.expand_shape %{{.+}} {{\[\[}}0], [1, 2], [3]] output_shape [2, 2, 3, 4] : tensor<2x6x4xf32> into tensor<2x2x3x4xf32>
//       CHECK:   %[[R:.+]] = linalg.generic
//   CHECK-NOT:     tcc.conv_backward
//  CHECK-SAME:     outs(%{{.+}} : tensor<2x3x2x3xf32>)
//       CHECK:   tensor.collapse_shape %[[R]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x2x3xf32> into tensor<6x2x3xf32>
func.func @conv_backward_filter_grouped_1d(%x: tensor<2x4x7xf32>, %g: tensor<2x6x4xf32>) -> tensor<6x2x3xf32> {
  %0 = tcc.conv_backward_filter %x, %g {kernel = array<i64: 3>, strides = array<i64: 2>, dilations = array<i64: 1>, pad_low = array<i64: 1>, pad_high = array<i64: 1>, group = 2 : i64} : (tensor<2x4x7xf32>, tensor<2x6x4xf32>) -> tensor<6x2x3xf32>
  return %0 : tensor<6x2x3xf32>
}

// -----

// Tests that a filter gradient over few output points (N x OH x OW = 8, no
// more than its 8 output channels) is one matmul: dY with its channels
// first [8, 2 x 2 x 2] times the windows of the padded input (im2col, read at
// (n, c, oh + kh, ow + kw)) [8, 3 x 3 x 3], reshaped to the filter; no
// library marker.
//   CHECK-DAG:   #[[COL:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>
//   CHECK-DAG:   #[[GT:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-LABEL: func.func @conv_backward_filter_gemm
//       CHECK:   %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CHECK:   %[[C:.+]] = linalg.generic {indexing_maps = [#[[COL]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[P]] : tensor<2x3x4x4xf32>) outs(%{{.+}} : tensor<2x2x2x3x3x3xf32>)
//       CHECK:   %[[T:.+]] = linalg.generic {indexing_maps = [#[[GT]], #{{.+}}], {{.*}} ins(%{{.+}} : tensor<2x8x2x2xf32>) outs(%{{.+}} : tensor<8x2x2x2xf32>)
//   CHECK-DAG:   %[[A:.+]] = tensor.collapse_shape %[[T]] {{.*}} into tensor<8x8xf32>
//   CHECK-DAG:   %[[B:.+]] = tensor.collapse_shape %[[C]] {{.*}} into tensor<8x27xf32>
//       CHECK:   %[[M:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<8x8xf32>, tensor<8x27xf32>)
//       CHECK:   tensor.expand_shape %[[M]] {{.*}} into tensor<8x3x3x3xf32>
//   CHECK-NOT:   tcc.conv_backward
func.func @conv_backward_filter_gemm(%x: tensor<2x3x2x2xf32>, %g: tensor<2x8x2x2xf32>) -> tensor<8x3x3x3xf32> {
  %0 = tcc.conv_backward_filter %x, %g {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x2x2xf32>, tensor<2x8x2x2xf32>) -> tensor<8x3x3x3xf32>
  return %0 : tensor<8x3x3x3xf32>
}

// -----

// Tests that the zero pad of a GEMM filter gradient by taps that only meet
// padding (autodiff's gradient of a 3x3 filter trimmed to its center on a
// 1x1 map) becomes the gradient of the whole filter: one matmul that writes
// all 3x3 taps ([8, 27]), no pad of the gradient. A pad whose taps would
// meet the input (a 1x1 filter on a 2x2 map padded to 3x3) stays, and so
// does a bf16 one (CONV16).
// CHECK-LABEL: func.func @full_filter_gradient
//       CHECK:   tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CHECK:   } : tensor<2x3x1x1xf32> to tensor<2x3x3x3xf32>
//       CHECK:   linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x2xf32>, tensor<2x27xf32>)
//       CHECK:   tensor.expand_shape %{{.+}} into tensor<8x3x3x3xf32>
//   CHECK-NOT:   tensor.pad
//       CHECK:   linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x4xf32>, tensor<4x3xf32>)
//       CHECK:   tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CHECK:   } : tensor<8x3x1x1xf32> to tensor<8x3x3x3xf32>
// CONV16-LABEL: func.func @full_filter_gradient
//       CONV16:   linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x2xbf16>, tensor<2x3xbf16>) outs(%{{.+}} : tensor<8x3xf32>)
//       CONV16:   tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CONV16:   } : tensor<8x3x1x1xbf16> to tensor<8x3x3x3xbf16>
func.func @full_filter_gradient(%x: tensor<2x3x1x1xf32>, %g: tensor<2x8x1x1xf32>,
                                %x2: tensor<1x3x2x2xf32>, %g2: tensor<1x8x2x2xf32>,
                                %x3: tensor<2x3x1x1xbf16>, %g3: tensor<2x8x1x1xbf16>)
    -> (tensor<8x3x3x3xf32>, tensor<8x3x3x3xf32>, tensor<8x3x3x3xbf16>) {
  %0 = tcc.conv_backward_filter %x, %g {kernel = array<i64: 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, group = 1 : i64} : (tensor<2x3x1x1xf32>, tensor<2x8x1x1xf32>) -> tensor<8x3x1x1xf32>
  %1 = tcc.pad %0, low = [0, 0, 1, 1], high = [0, 0, 1, 1] {mode = 0 : i32, value = 0.0 : f64} : tensor<8x3x1x1xf32> -> tensor<8x3x3x3xf32>
  %2 = tcc.conv_backward_filter %x2, %g2 {kernel = array<i64: 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, group = 1 : i64} : (tensor<1x3x2x2xf32>, tensor<1x8x2x2xf32>) -> tensor<8x3x1x1xf32>
  %3 = tcc.pad %2, low = [0, 0, 1, 1], high = [0, 0, 1, 1] {mode = 0 : i32, value = 0.0 : f64} : tensor<8x3x1x1xf32> -> tensor<8x3x3x3xf32>
  %4 = tcc.conv_backward_filter %x3, %g3 {kernel = array<i64: 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, group = 1 : i64} : (tensor<2x3x1x1xbf16>, tensor<2x8x1x1xbf16>) -> tensor<8x3x1x1xbf16>
  %5 = tcc.pad %4, low = [0, 0, 1, 1], high = [0, 0, 1, 1] {mode = 0 : i32, value = 0.0 : f64} : tensor<8x3x1x1xbf16> -> tensor<8x3x3x3xbf16>
  return %1, %3, %5 : tensor<8x3x3x3xf32>, tensor<8x3x3x3xf32>, tensor<8x3x3x3xbf16>
}

// -----

// Tests that a bf16 convolution, its data gradient (conv_transpose) and its
// filter gradient (conv_backward_filter) widen their operands by default
// (f32 convolutions, one rounding), and with sixteen-bit-convs (the CPU
// pipeline) read the bf16 operands as they are into f32 sums: the padding
// is a bf16 zero, the named convolution converts its bf16 operands to the
// f32 output, the filter gradient over 18 points is a matmul of its bf16
// copies into f32 sums (16-bit filter gradients over at most 256 points);
// then one rounding. Over 289 points the filter gradient's generic of 16
// input channels widens each operand before the product; with 3 input
// channels (a stem, which the library runs without AMX) it is a matmul
// over its 289 points.
// CHECK-LABEL: func.func @conv_bf16
//       CHECK:   arith.extf %{{.*}} : bf16 to f32
//       CHECK:   linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x7x7xf32>, tensor<4x3x3x3xf32>)
// CONV16-LABEL: func.func @conv_bf16
//   CONV16-NOT:   arith.extf %{{.*}} : bf16 to f32
//       CONV16:   tensor.pad
//       CONV16:     tensor.yield %{{.*}} : bf16
//       CONV16:   %[[Y:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x7x7xbf16>, tensor<4x3x3x3xbf16>) outs(%{{.*}} : tensor<2x4x3x3xf32>)
//       CONV16:   linalg.generic {{.*}} ins(%[[Y]] : tensor<2x4x3x3xf32>) outs(%{{.*}} : tensor<2x4x3x3xbf16>)
//       CONV16:     arith.truncf %{{.*}} : f32 to bf16
//       CONV16:   %[[DX:.+]] = linalg.conv_2d_nchw_fchw {{.*}}tcc.conv_backward{{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x4x{{[0-9]+}}x{{[0-9]+}}xbf16>, tensor<3x4x3x3xbf16>) outs(%{{.*}} : tensor<2x3x5x5xf32>)
//       CONV16:   arith.truncf
//       CONV16:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x18xbf16>, tensor<18x27xbf16>) outs(%{{.*}} : tensor<4x27xf32>)
//       CONV16:   arith.truncf
//       CONV16:   linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x16x17x17xbf16>, tensor<1x2x17x17xbf16>) outs(%{{.*}} : tensor<2x16x1x1xf32>)
//       CONV16:     arith.extf %{{.*}} : bf16 to f32
//       CONV16:     arith.extf %{{.*}} : bf16 to f32
//       CONV16:     arith.mulf %{{.*}}, %{{.*}} : f32
//       CONV16:   arith.truncf
//       CONV16:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x289xbf16>, tensor<289x3xbf16>) outs(%{{.*}} : tensor<2x3xf32>)
//       CONV16:   arith.truncf
func.func @conv_bf16(%x: tensor<2x3x5x5xbf16>, %w: tensor<4x3x3x3xbf16>, %g: tensor<2x4x3x3xbf16>,
                     %x2: tensor<1x16x17x17xbf16>, %g2: tensor<1x2x17x17xbf16>,
                     %x3: tensor<1x3x17x17xbf16>)
    -> (tensor<2x4x3x3xbf16>, tensor<2x3x5x5xbf16>, tensor<4x3x3x3xbf16>, tensor<2x16x1x1xbf16>,
        tensor<2x3x1x1xbf16>) {
  %y = tcc.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x5x5xbf16>, tensor<4x3x3x3xbf16>) -> tensor<2x4x3x3xbf16>
  %dx = tcc.conv_transpose %g, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, group = 1 : i64} : (tensor<2x4x3x3xbf16>, tensor<4x3x3x3xbf16>) -> tensor<2x3x5x5xbf16>
  %dw = tcc.conv_backward_filter %x, %g {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x5x5xbf16>, tensor<2x4x3x3xbf16>) -> tensor<4x3x3x3xbf16>
  %dw2 = tcc.conv_backward_filter %x2, %g2 {kernel = array<i64: 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, group = 1 : i64} : (tensor<1x16x17x17xbf16>, tensor<1x2x17x17xbf16>) -> tensor<2x16x1x1xbf16>
  %dw3 = tcc.conv_backward_filter %x3, %g2 {kernel = array<i64: 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, group = 1 : i64} : (tensor<1x3x17x17xbf16>, tensor<1x2x17x17xbf16>) -> tensor<2x3x1x1xbf16>
  return %y, %dx, %dw, %dw2, %dw3 : tensor<2x4x3x3xbf16>, tensor<2x3x5x5xbf16>, tensor<4x3x3x3xbf16>, tensor<2x16x1x1xbf16>, tensor<2x3x1x1xbf16>
}

// -----

// Tests that with few-point-gemms (the CPU pipeline) a data gradient over
// few points (N x OH x OW = 8, no more than its 8 channels) is one matmul and
// a gather: dY with its channels last [8, 8] times W as it is [8, 3 x 3 x 3],
// then each output point sums the taps k whose q = (p + 1 - k) / 2 is a
// whole index inside dY (the stride-2 taps k = (p + 1) mod 2 + 2 j, two of
// them per dimension); no flipped filter, no library marker. A bf16 one
// (with sixteen-bit-convs) sums in f32 and rounds once, an f32 one sums in
// f32; without few-point-gemms both stay convolution calls.
// GEMM-LABEL: func.func @data_gradient_gemm
//       GEMM:   %[[T:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x8x2x2xbf16>) outs(%{{.+}} : tensor<2x2x2x8xbf16>)
//       GEMM:   %[[A:.+]] = tensor.collapse_shape %[[T]] {{.*}} into tensor<8x8xbf16>
//       GEMM:   %[[B:.+]] = tensor.collapse_shape %arg1 {{.*}} into tensor<8x27xbf16>
//       GEMM:   %[[M:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<8x8xbf16>, tensor<8x27xbf16>) outs(%{{.+}} : tensor<8x27xf32>)
//       GEMM:   %[[C:.+]] = tensor.expand_shape %[[M]] {{.*}} into tensor<2x2x2x3x3x3xf32>
//       GEMM:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.+}} : tensor<2x2xf32>) outs(%{{.+}} : tensor<2x3x4x4xf32>)
//       GEMM:     arith.remui
//       GEMM:     arith.divui
//       GEMM:     tensor.extract %[[C]]
//       GEMM:   arith.truncf %{{.*}} : f32 to bf16
//       GEMM:   linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x8xf32>, tensor<8x27xf32>) outs(%{{.+}} : tensor<8x27xf32>)
//       GEMM:     tensor.extract
//   GEMM-NOT:   tcc.conv_backward
// CHECK-LABEL: func.func @data_gradient_gemm
//   CHECK-NOT:   linalg.matmul
//       CHECK:   linalg.conv_2d_nchw_fchw {{.*}}tcc.conv_backward{{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8x{{[0-9]+}}x{{[0-9]+}}xf32>, tensor<3x8x3x3xf32>)
//       CHECK:   linalg.conv_2d_nchw_fchw {{.*}}tcc.conv_backward{{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8x{{[0-9]+}}x{{[0-9]+}}xf32>, tensor<3x8x3x3xf32>)
func.func @data_gradient_gemm(%g: tensor<2x8x2x2xbf16>, %w: tensor<8x3x3x3xbf16>,
                              %g2: tensor<2x8x2x2xf32>, %w2: tensor<8x3x3x3xf32>)
    -> (tensor<2x3x4x4xbf16>, tensor<2x3x4x4xf32>) {
  %0 = tcc.conv_transpose %g, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x8x2x2xbf16>, tensor<8x3x3x3xbf16>) -> tensor<2x3x4x4xbf16>
  %1 = tcc.conv_transpose %g2, %w2 {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x8x2x2xf32>, tensor<8x3x3x3xf32>) -> tensor<2x3x4x4xf32>
  return %0, %1 : tensor<2x3x4x4xbf16>, tensor<2x3x4x4xf32>
}

// -----

// Tests that with few-point-gemms a convolution over few points (8 output
// points into 8 channels) is one matmul of its input's windows (im2col of
// the padded input, read at (n, c, 2 oh + kh, 2 ow + kw)) [8, 27] by W as it
// is, read transposed through the matmul's maps, then its channels moved
// first; one over 1x1 maps is a reshape of the product. One over more
// points than channels (18 into 4) stays a convolution.
//   GEMM-DAG:   #[[COL:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 * 2 + d4, d2 * 2 + d5)>
//   GEMM-DAG:   #[[TA:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
//   GEMM-DAG:   #[[TB:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
//   GEMM-DAG:   #[[FIRST:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
// GEMM-LABEL: func.func @convolution_gemm
//       GEMM:   %[[P:.+]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
//       GEMM:   %[[C:.+]] = linalg.generic {indexing_maps = [#[[COL]], #{{.+}}]{{.*}} ins(%[[P]] : tensor<2x3x5x5xbf16>) outs(%{{.+}} : tensor<2x2x2x3x3x3xbf16>)
//       GEMM:   %[[A:.+]] = tensor.collapse_shape %[[C]] {{.*}} into tensor<8x27xbf16>
//       GEMM:   %[[B:.+]] = tensor.collapse_shape %arg1 {{.*}} into tensor<8x27xbf16>
//       GEMM:   %[[M:.+]] = linalg.matmul indexing_maps = [#[[TA]], #[[TB]], #{{.+}}] ins(%[[A]], %[[B]] : tensor<8x27xbf16>, tensor<8x27xbf16>) outs(%{{.+}} : tensor<8x8xf32>)
//       GEMM:   %[[E:.+]] = tensor.expand_shape %[[M]] {{.*}} into tensor<2x2x2x8xf32>
//       GEMM:   linalg.generic {indexing_maps = [#[[FIRST]], #{{.+}}]{{.*}} ins(%[[E]] : tensor<2x2x2x8xf32>) outs(%{{.+}} : tensor<2x8x2x2xf32>)
//       GEMM:   arith.truncf %{{.*}} : f32 to bf16
//       GEMM:   linalg.matmul indexing_maps = [#[[TA]], #[[TB]], #{{.+}}] ins(%{{.+}}, %{{.+}} : tensor<4x6xf32>, tensor<5x6xf32>) outs(%{{.+}} : tensor<4x5xf32>)
//       GEMM:   tensor.expand_shape %{{.+}} {{.*}} into tensor<4x5x1x1xf32>
//       GEMM:   linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x7x7xf32>, tensor<4x3x3x3xf32>)
func.func @convolution_gemm(%x: tensor<2x3x3x3xbf16>, %w: tensor<8x3x3x3xbf16>,
                            %x2: tensor<4x6x1x1xf32>, %w2: tensor<5x6x1x1xf32>,
                            %x3: tensor<2x3x5x5xf32>, %w3: tensor<4x3x3x3xf32>)
    -> (tensor<2x8x2x2xbf16>, tensor<4x5x1x1xf32>, tensor<2x4x3x3xf32>) {
  %0 = tcc.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x3x3xbf16>, tensor<8x3x3x3xbf16>) -> tensor<2x8x2x2xbf16>
  %1 = tcc.conv %x2, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, group = 1 : i64} : (tensor<4x6x1x1xf32>, tensor<5x6x1x1xf32>) -> tensor<4x5x1x1xf32>
  %2 = tcc.conv %x3, %w3 {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x3x3xf32>
  return %0, %1, %2 : tensor<2x8x2x2xbf16>, tensor<4x5x1x1xf32>, tensor<2x4x3x3xf32>
}

// -----

// Tests that a bf16 zero pad (a 16-bit filter gradient's, which stays a
// pad) is read where it is used: the sum of all its squares (a gradient
// norm) sums the unpadded tensor's squares, and the pad moves right before
// its one remaining reader (the update: tcc-fuse-rows runs both row by
// row). An f32 pad stays where it is and keeps its sum.
// CHECK-LABEL: func.func @sink_zero_pads
//       CHECK:   linalg.generic {{.*}} ins(%arg0 : tensor<8x3x1x1xbf16>)
//       CHECK:   linalg.reduce ins(%{{.*}} : tensor<8x3x1x1xf32>)
//       CHECK:   tensor.pad %arg2 low[0, 0, 1, 1]
//       CHECK:   linalg.reduce ins(%{{.*}} : tensor<8x3x3x3xf32>)
//       CHECK:   math.exp
//       CHECK:   %[[PAD:.*]] = tensor.pad %arg0 low[0, 0, 1, 1]
//       CHECK:   } : tensor<8x3x1x1xbf16> to tensor<8x3x3x3xbf16>
//  CHECK-NEXT:   tensor.empty
//  CHECK-NEXT:   linalg.generic {{.*}} ins(%[[PAD]] : tensor<8x3x3x3xbf16>)
//       CHECK:   arith.addf
func.func @sink_zero_pads(%g: tensor<8x3x1x1xbf16>, %w: tensor<8x3x3x3xf32>, %g32: tensor<8x3x1x1xf32>)
    -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<8x3x3x3xf32>) {
  %p = tcc.pad %g, low = [0, 0, 1, 1], high = [0, 0, 1, 1] {mode = 0 : i32, value = 0.0 : f64} : tensor<8x3x1x1xbf16> -> tensor<8x3x3x3xbf16>
  %c = tcc.cast %p : tensor<8x3x3x3xbf16> to tensor<8x3x3x3xf32>
  %sq = tcc.mul %c, %c : tensor<8x3x3x3xf32>
  %n = tcc.reduce_sum %sq {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<8x3x3x3xf32> -> tensor<f32>
  %p32 = tcc.pad %g32, low = [0, 0, 1, 1], high = [0, 0, 1, 1] {mode = 0 : i32, value = 0.0 : f64} : tensor<8x3x1x1xf32> -> tensor<8x3x3x3xf32>
  %sq32 = tcc.mul %p32, %p32 : tensor<8x3x3x3xf32>
  %n32 = tcc.reduce_sum %sq32 {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<8x3x3x3xf32> -> tensor<f32>
  %e = tcc.exp %n : tensor<f32>
  %u = tcc.add %w, %c : tensor<8x3x3x3xf32>
  return %n, %n32, %e, %u : tensor<f32>, tensor<f32>, tensor<f32>, tensor<8x3x3x3xf32>
}
