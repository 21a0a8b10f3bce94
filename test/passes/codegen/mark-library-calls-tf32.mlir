// RUN: tcc-opt --split-input-file --tcc-mark-library-calls=tf32=true %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-mark-library-calls %s | FileCheck %s --check-prefix=EXACT

// --precision=tf32 (tf32): every f32 call carries abi.h's math mode TF32
// (1) as its last parameter: a matmul after C_DTYPE (0: the call's), a
// convolution after its groups (1 when it has none). Without the option the
// parameters are what they were.

// A matmul and its epilogue.
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul
//       CHECK: {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 4, 8, 10, 0, 1, 0, 0, 0, 1>}}
// EXACT-LABEL: func.func @matmul
//       EXACT: {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 4, 8, 10, 0, 1, 0, 0>}}
func.func @matmul(%x: memref<4x10xf32> {tcc.input = "x"}, %w: memref<8x10xf32> {tcc.param = "w"})
    -> (memref<4x8xf32> {tcc.output = "y"}) {
  %z = arith.constant 0.0 : f32
  %y = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  linalg.fill ins(%z : f32) outs(%y : memref<4x8xf32>)
  linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %w : memref<4x10xf32>, memref<8x10xf32>) outs(%y : memref<4x8xf32>)
  return %y : memref<4x8xf32>
}

// -----

// A convolution of one group: groups 1 written, then the math mode.
// CHECK-LABEL: func.func @conv
//       CHECK: {tcc.library_call = {kind = 2 : i32, params = array<i64: 1, 2, 5, 5, 3, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1>}}
// EXACT-LABEL: func.func @conv
//       EXACT: {tcc.library_call = {kind = 2 : i32, params = array<i64: 1, 2, 5, 5, 3, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0>}}
func.func @conv(%x: memref<1x2x5x5xf32> {tcc.input = "x"}, %w: memref<3x2x3x3xf32> {tcc.param = "w"})
    -> (memref<1x3x3x3xf32> {tcc.output = "y"}) {
  %z = arith.constant 0.0 : f32
  %y = memref.alloc() {alignment = 64 : i64} : memref<1x3x3x3xf32>
  linalg.fill ins(%z : f32) outs(%y : memref<1x3x3x3xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x2x5x5xf32>, memref<3x2x3x3xf32>) outs(%y : memref<1x3x3x3xf32>)
  return %y : memref<1x3x3x3xf32>
}
