// RUN: tcc-opt --split-input-file --tcc-mark-library-calls=grouped=true %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-mark-library-calls=grouped=false %s | FileCheck %s --check-prefix=OFF

// Tests that a depthwise convolution becomes a CONV2D call with as many
// groups as channels (19 parameters: the groups appended), its filter
// [C, KH, KW] being [F = C, 1, KH, KW].
// CHECK-LABEL: func.func @depthwise
//       CHECK:   call @tcc_library_call_0(%{{.+}}, %{{.+}}, %{{.+}}) {tcc.library_call = {kind = 2 : i32, params = array<i64: 2, 8, 4, 4, 8, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 1, 8>}}
// OFF-LABEL: func.func @depthwise
//       OFF:   linalg.depthwise_conv_2d_nchw_chw
func.func @depthwise(%x: memref<2x8x4x4xf32>, %w: memref<8x3x3xf32>, %y: memref<2x8x2x2xf32>) {
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<2x8x4x4xf32>, memref<8x3x3xf32>) outs(%y : memref<2x8x2x2xf32>)
  return
}

// -----

// Tests that a grouped convolution on [N, G, C/G, H, W] views becomes a
// CONV2D call on the plain sizes: C = 2 * 3, F = 2 * 4, 2 groups.
// CHECK-LABEL: func.func @grouped
//       CHECK:   call @tcc_library_call_0(%{{.+}}, %{{.+}}, %{{.+}}) {tcc.library_call = {kind = 2 : i32, params = array<i64: 1, 6, 5, 5, 8, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 2>}}
func.func @grouped(%x: memref<1x2x3x5x5xf32>, %w: memref<2x4x3x3x3xf32>, %y: memref<1x2x4x3x3xf32>) {
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x2x3x5x5xf32>, memref<2x4x3x3x3xf32>) outs(%y : memref<1x2x4x3x3xf32>)
  return
}
