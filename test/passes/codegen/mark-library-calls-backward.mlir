// RUN: tcc-opt --split-input-file --tcc-mark-library-calls %s | FileCheck %s

// Tests that a data gradient the lowering marked (the stride-2, pad-1
// convolution from [1, 2, 5, 5] to [1, 3, 3, 3]) becomes one
// CONV2D_BACKWARD_DATA call on dY and W themselves: the zero-dilated copy of
// dY (at 1 = dilation * (K - 1) - pad_top, every 2nd position) and the
// flipped copy of W go, and so does the zero fill of dX (accumulate 0).
// CHECK-LABEL: func.func @backward_data_strided
//  CHECK-SAME:   (%[[DY:.+]]: memref<1x3x3x3xf32>, %[[W:.+]]: memref<3x2x3x3xf32>, %[[DX:.+]]: memref<1x2x5x5xf32>)
//   CHECK-NOT:   memref.copy
//   CHECK-NOT:   linalg.generic
//       CHECK:   call @tcc_library_call_0(%[[DY]], %[[W]], %[[DX]]) {tcc.library_call = {kind = 5 : i32, params = array<i64: 1, 2, 5, 5, 3, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0>}}
//   CHECK-NOT:   linalg.
#flip = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2 + 2, -d3 + 2)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @backward_data_strided(%dy: memref<1x3x3x3xf32>, %w: memref<3x2x3x3xf32>, %dx: memref<1x2x5x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %buf = memref.alloc() : memref<1x3x7x7xf32>
  linalg.fill ins(%zero : f32) outs(%buf : memref<1x3x7x7xf32>)
  %sv = memref.subview %buf[0, 0, 1, 1] [1, 3, 3, 3] [1, 1, 2, 2] : memref<1x3x7x7xf32> to memref<1x3x3x3xf32, strided<[147, 49, 14, 2], offset: 8>>
  memref.copy %dy, %sv : memref<1x3x3x3xf32> to memref<1x3x3x3xf32, strided<[147, 49, 14, 2], offset: 8>>
  %f = memref.alloc() : memref<2x3x3x3xf32>
  linalg.generic {indexing_maps = [#flip, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<3x2x3x3xf32>) outs(%f : memref<2x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.fill ins(%zero : f32) outs(%dx : memref<1x2x5x5xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
      tcc.conv_backward = {groups = 1 : i64, kind = 5 : i32, params = array<i64: 1, 2, 5, 5, 3, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1>}}
      ins(%buf, %f : memref<1x3x7x7xf32>, memref<2x3x3x3xf32>) outs(%dx : memref<1x2x5x5xf32>)
  return
}

// -----

// Tests that a dilated copy whose place disagrees with the marker (dY at 2
// where the geometry puts it at 1) is no data gradient: the convolution
// stays a forward CONV2D of the buffer it reads.
// CHECK-LABEL: func.func @backward_data_misplaced
//       CHECK:   memref.copy
//       CHECK:   linalg.generic
//       CHECK:   call @tcc_library_call_0({{.+}}) {tcc.library_call = {kind = 2 : i32, params = array<i64: 1, 3, 8, 8, 2, 3, 3, 5, 5, 1, 1, 1, 1, 0, 0, 0, 0, 0>}}
#flip = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2 + 2, -d3 + 2)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @backward_data_misplaced(%dy: memref<1x3x3x3xf32>, %w: memref<3x2x3x3xf32>, %dx: memref<1x2x5x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %buf = memref.alloc() : memref<1x3x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%buf : memref<1x3x8x8xf32>)
  %sv = memref.subview %buf[0, 0, 2, 2] [1, 3, 3, 3] [1, 1, 2, 2] : memref<1x3x8x8xf32> to memref<1x3x3x3xf32, strided<[192, 64, 16, 2], offset: 18>>
  memref.copy %dy, %sv : memref<1x3x3x3xf32> to memref<1x3x3x3xf32, strided<[192, 64, 16, 2], offset: 18>>
  %f = memref.alloc() : memref<2x3x3x3xf32>
  linalg.generic {indexing_maps = [#flip, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<3x2x3x3xf32>) outs(%f : memref<2x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.fill ins(%zero : f32) outs(%dx : memref<1x2x5x5xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
      tcc.conv_backward = {groups = 1 : i64, kind = 5 : i32, params = array<i64: 1, 2, 5, 5, 3, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1>}}
      ins(%buf, %f : memref<1x3x8x8xf32>, memref<2x3x3x3xf32>) outs(%dx : memref<1x2x5x5xf32>)
  return
}

// -----

// Tests that a filter gradient and the forward convolution sharing its
// zero-padded input both read the unpadded X (CONV2D with pads 1,
// CONV2D_BACKWARD_WEIGHTS with pad_bottom / pad_right 0, the windows reach
// no further), and that the padded copy goes once neither reads it.
// CHECK-LABEL: func.func @backward_weights_shared_padding
//  CHECK-SAME:   (%[[X:.+]]: memref<2x3x6x6xf32>, %[[W:.+]]: memref<4x3x3x3xf32>, %[[Y:.+]]: memref<2x4x3x3xf32>, %[[G:.+]]: memref<2x4x3x3xf32>, %[[DW:.+]]: memref<4x3x3x3xf32>)
//   CHECK-NOT:   memref.alloc
//       CHECK:   call @tcc_library_call_0(%[[X]], %[[W]], %[[Y]]) {tcc.library_call = {kind = 2 : i32, params = array<i64: 2, 3, 6, 6, 4, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0>}}
//       CHECK:   call @tcc_library_call_1(%[[X]], %[[G]], %[[DW]]) {tcc.library_call = {kind = 6 : i32, params = array<i64: 2, 3, 6, 6, 4, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0>}}
//   CHECK-NOT:   linalg.
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 * 2 + d2, d6 * 2 + d3)>
#g = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @backward_weights_shared_padding(%x: memref<2x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x3x3xf32>, %g: memref<2x4x3x3xf32>, %dw: memref<4x3x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<2x3x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<2x3x8x8xf32>)
  %sv = memref.subview %p[0, 0, 1, 1] [2, 3, 6, 6] [1, 1, 1, 1] : memref<2x3x8x8xf32> to memref<2x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>
  memref.copy %x, %sv : memref<2x3x6x6xf32> to memref<2x3x6x6xf32, strided<[192, 64, 8, 1], offset: 9>>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x4x3x3xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %w : memref<2x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x3x3xf32>)
  linalg.fill ins(%zero : f32) outs(%dw : memref<4x3x3x3xf32>)
  linalg.generic {indexing_maps = [#x, #g, #w], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%p, %g : memref<2x3x8x8xf32>, memref<2x4x3x3xf32>) outs(%dw : memref<4x3x3x3xf32>)
      attrs = {tcc.conv_backward = {groups = 1 : i64, kind = 6 : i32, params = array<i64: 2, 3, 6, 6, 4, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0>}} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a depthwise filter gradient (8 groups) is a call without
// `grouped` (which is about forward convolutions), on the [N, G, C/G, H, W]
// view of X and [G, F/G, C/G, KH, KW] of dW, with its groups appended.
// CHECK-LABEL: func.func @backward_weights_depthwise
//       CHECK:   call @tcc_library_call_0(%{{.+}}, %{{.+}}, %{{.+}}) {tcc.library_call = {kind = 6 : i32, params = array<i64: 2, 8, 4, 4, 8, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 8>}}
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d2, d6 + d3, d7 + d4)>
#g = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d1, d6, d7)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @backward_weights_depthwise(%x: memref<2x8x1x4x4xf32>, %g: memref<2x8x1x2x2xf32>, %dw: memref<8x1x1x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dw : memref<8x1x1x3x3xf32>)
  linalg.generic {indexing_maps = [#x, #g, #w], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %g : memref<2x8x1x4x4xf32>, memref<2x8x1x2x2xf32>) outs(%dw : memref<8x1x1x3x3xf32>)
      attrs = {tcc.conv_backward = {groups = 8 : i64, kind = 6 : i32, params = array<i64: 2, 8, 4, 4, 8, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0>}} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a depthwise filter gradient whose 3x3 kernel is larger than its
// 2x2 map (oneDNN's slow gemm fallback) stays the generic, padded copy and
// all.
// CHECK-LABEL: func.func @backward_weights_depthwise_tiny_map
//       CHECK:   memref.copy
//       CHECK:   linalg.generic
//   CHECK-NOT:   call @
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d2, d6 + d3, d7 + d4)>
#g = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d0, d1, d6, d7)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @backward_weights_depthwise_tiny_map(%x: memref<2x8x2x2xf32>, %g: memref<2x8x1x2x2xf32>, %dw: memref<8x1x1x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() : memref<2x8x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<2x8x4x4xf32>)
  %sv = memref.subview %p[0, 0, 1, 1] [2, 8, 2, 2] [1, 1, 1, 1] : memref<2x8x4x4xf32> to memref<2x8x2x2xf32, strided<[128, 16, 4, 1], offset: 5>>
  memref.copy %x, %sv : memref<2x8x2x2xf32> to memref<2x8x2x2xf32, strided<[128, 16, 4, 1], offset: 5>>
  %pg = memref.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [2, 8, 1, 4, 4] : memref<2x8x4x4xf32> into memref<2x8x1x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%dw : memref<8x1x1x3x3xf32>)
  linalg.generic {indexing_maps = [#x, #g, #w], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%pg, %g : memref<2x8x1x4x4xf32>, memref<2x8x1x2x2xf32>) outs(%dw : memref<8x1x1x3x3xf32>)
      attrs = {tcc.conv_backward = {groups = 8 : i64, kind = 6 : i32, params = array<i64: 2, 8, 2, 2, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1>}} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A sliced filter (the center tap of a 3x3 filter on 1x1 maps: tcc's
// DropPaddingOnlyTaps): the forward call reads a dense copy of the slice,
// and the data gradient reads that same copy instead of a flipped copy that
// would walk the filter across its slowest dimension.
// CHECK-LABEL: func.func @sliced_filter_shared_copy
//  CHECK-SAME:   (%[[X:[a-z0-9]+]]: memref<2x4x1x1xf32>, %[[W:[a-z0-9]+]]: memref<6x4x3x3xf32>, %[[DY:[a-z0-9]+]]: memref<2x6x1x1xf32>, %[[DX:[a-z0-9]+]]: memref<2x4x1x1xf32>, %[[Y:[a-z0-9]+]]: memref<2x6x1x1xf32>)
//       CHECK:   %[[D:.+]] = memref.alloc() {alignment = 64 : i64} : memref<6x4x1x1xf32>
//  CHECK-NEXT:   linalg.copy ins(%{{.*}} : memref<6x4x1x1xf32, strided<[36, 9, 3, 1], offset: 4>>) outs(%[[D]] : memref<6x4x1x1xf32>)
//       CHECK:   call @tcc_library_call_0(%[[X]], %[[D]], %[[Y]])
//   CHECK-NOT:   linalg.generic
//       CHECK:   call @tcc_library_call_1(%[[DY]], %[[D]], %[[DX]]) {tcc.library_call = {kind = 5 : i32
#flip1 = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2, -d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @sliced_filter_shared_copy(%x: memref<2x4x1x1xf32>, %w: memref<6x4x3x3xf32>, %dy: memref<2x6x1x1xf32>, %dx: memref<2x4x1x1xf32>, %y: memref<2x6x1x1xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = memref.subview %w[0, 0, 1, 1] [6, 4, 1, 1] [1, 1, 1, 1] : memref<6x4x3x3xf32> to memref<6x4x1x1xf32, strided<[36, 9, 3, 1], offset: 4>>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x6x1x1xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %s : memref<2x4x1x1xf32>, memref<6x4x1x1xf32, strided<[36, 9, 3, 1], offset: 4>>) outs(%y : memref<2x6x1x1xf32>)
  %s2 = memref.subview %w[0, 0, 1, 1] [6, 4, 1, 1] [1, 1, 1, 1] : memref<6x4x3x3xf32> to memref<6x4x1x1xf32, strided<[36, 9, 3, 1], offset: 4>>
  %f = memref.alloc() : memref<4x6x1x1xf32>
  linalg.generic {indexing_maps = [#flip1, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s2 : memref<6x4x1x1xf32, strided<[36, 9, 3, 1], offset: 4>>) outs(%f : memref<4x6x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x4x1x1xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
      tcc.conv_backward = {groups = 1 : i64, kind = 5 : i32, params = array<i64: 2, 4, 1, 1, 6, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}}
      ins(%dy, %f : memref<2x6x1x1xf32>, memref<4x6x1x1xf32>) outs(%dx : memref<2x4x1x1xf32>)
  return
}

// -----

// Without a forward copy to share (or when the filter is written after
// it), the data gradient reads a dense copy of the slice made where the
// flipped copy was.
// CHECK-LABEL: func.func @sliced_filter_own_copy
//  CHECK-SAME:   (%[[W:[a-z0-9]+]]: memref<6x4x3x3xf32>, %[[DY:[a-z0-9]+]]: memref<2x6x1x1xf32>, %[[DX:[a-z0-9]+]]: memref<2x4x1x1xf32>)
//   CHECK-NOT:   linalg.generic
//       CHECK:   %[[D:.+]] = memref.alloc() {alignment = 64 : i64} : memref<6x4x1x1xf32>
//  CHECK-NEXT:   linalg.copy ins(%{{.*}} : memref<6x4x1x1xf32, strided<[36, 9, 3, 1], offset: 4>>) outs(%[[D]] : memref<6x4x1x1xf32>)
//   CHECK-NOT:   linalg.generic
//       CHECK:   call @tcc_library_call_0(%[[DY]], %[[D]], %[[DX]]) {tcc.library_call = {kind = 5 : i32
#flip1 = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2, -d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @sliced_filter_own_copy(%w: memref<6x4x3x3xf32>, %dy: memref<2x6x1x1xf32>, %dx: memref<2x4x1x1xf32>) {
  %zero = arith.constant 0.0 : f32
  %s2 = memref.subview %w[0, 0, 1, 1] [6, 4, 1, 1] [1, 1, 1, 1] : memref<6x4x3x3xf32> to memref<6x4x1x1xf32, strided<[36, 9, 3, 1], offset: 4>>
  %f = memref.alloc() : memref<4x6x1x1xf32>
  linalg.generic {indexing_maps = [#flip1, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s2 : memref<6x4x1x1xf32, strided<[36, 9, 3, 1], offset: 4>>) outs(%f : memref<4x6x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x4x1x1xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
      tcc.conv_backward = {groups = 1 : i64, kind = 5 : i32, params = array<i64: 2, 4, 1, 1, 6, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}}
      ins(%dy, %f : memref<2x6x1x1xf32>, memref<4x6x1x1xf32>) outs(%dx : memref<2x4x1x1xf32>)
  return
}
