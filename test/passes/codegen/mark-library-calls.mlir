// RUN: tcc-opt --split-input-file --tcc-mark-library-calls %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-mark-library-calls --tcc-plan-memory --tcc-lower-library-calls %s | FileCheck %s --check-prefix=LOWER

// Before the plan: a zero-filled f32 matmul with a transposed weight becomes
// a call of a private declaration carrying the kind and sizes; the fill goes
// (accumulate 0).
// CHECK-LABEL: func.func private @tcc_library_call_0(memref<4x10xf32>, memref<8x10xf32>, memref<4x8xf32>)
// CHECK-LABEL: func.func @forward
// CHECK-NOT: linalg.fill
// CHECK: call @tcc_library_call_0(%{{.*}}, %{{.*}}, %{{.*}}) {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 4, 8, 10, 0, 1, 0, 0>}}
// CHECK-NOT: linalg.matmul
//
// After the plan: the entry takes the runtime pointer; the call goes through
// the runtime's library_call (fields at offsets 24 and 32 of
// tcc_abi_runtime) with the operand addresses and the index in the table.
// LOWER: module attributes {tcc.library_calls = [{kind = 1 : i32, operands = 3 : i32, params = array<i64: 1, 4, 8, 10, 0, 1, 0, 0>}]}
// LOWER-NOT: @tcc_library_call_0
// LOWER-LABEL: func.func @forward
// LOWER-SAME: (%{{.*}}: memref<?xi8>, %{{.*}}: memref<?xi8>, %[[RT:.*]]: !llvm.ptr)
// LOWER: %[[OPS:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// LOWER: memref.extract_aligned_pointer_as_index
// LOWER: llvm.store
// LOWER: %[[FNP:.*]] = llvm.getelementptr %[[RT]][24]
// LOWER: %[[FN:.*]] = llvm.load %[[FNP]]
// LOWER: %[[CTXP:.*]] = llvm.getelementptr %[[RT]][32]
// LOWER: %[[CTX:.*]] = llvm.load %[[CTXP]]
// LOWER: %[[IDX:.*]] = llvm.mlir.constant(0 : i32)
// LOWER: llvm.call %[[FN]](%[[CTX]], %[[IDX]], %[[OPS]])
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @forward(%x: memref<4x10xf32> {tcc.input = "x"}, %w: memref<8x10xf32> {tcc.param = "w"})
    -> (memref<4x8xf32> {tcc.output = "y"}) {
  %z = arith.constant 0.0 : f32
  %y = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  linalg.fill ins(%z : f32) outs(%y : memref<4x8xf32>)
  linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %w : memref<4x10xf32>, memref<8x10xf32>) outs(%y : memref<4x8xf32>)
  return %y : memref<4x8xf32>
}

// -----

// A convolution of a zero-padded copy reads the unpadded input, with the
// padding as parameters (top 1, left 2, bottom 1, right 2); the padded
// buffer, its fill and the copy are gone. Without a zero fill of the output
// right before, the call accumulates (last parameter 1). A batch matmul is
// a call too.
// CHECK-LABEL: func.func @conv
// CHECK-NOT: memref.subview
// CHECK-NOT: linalg.copy
// CHECK: call @tcc_library_call_{{[0-9]+}}(%arg0, %arg1, %{{.*}}) {tcc.library_call = {kind = 2 : i32, params = array<i64: 1, 2, 5, 5, 3, 3, 3, 4, 5, 1, 1, 1, 1, 1, 2, 1, 2, 1>}} : (memref<1x2x5x5xf32>, memref<3x2x3x3xf32>, memref<1x3x4x5xf32>) -> ()
// CHECK: call @tcc_library_call_{{[0-9]+}}({{.*}}) {tcc.library_call = {kind = 1 : i32, params = array<i64: 2, 3, 5, 4, 0, 0, 1, 0>}}
func.func @conv(%x: memref<1x2x5x5xf32> {tcc.input = "x"}, %w: memref<3x2x3x3xf32> {tcc.param = "w"},
                %a: memref<2x3x4xf32> {tcc.input = "a"}, %b: memref<2x4x5xf32> {tcc.input = "b"},
                %acc: memref<1x3x4x5xf32> {tcc.input = "acc"}, %macc: memref<2x3x5xf32> {tcc.input = "macc"})
    -> (memref<1x3x4x5xf32> {tcc.output = "y"}, memref<2x3x5xf32> {tcc.output = "m"}) {
  %z = arith.constant 0.0 : f32
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x7x9xf32>
  linalg.map outs(%p : memref<1x2x7x9xf32>)
    (%init: f32) {
      linalg.yield %z : f32
    }
  %sv = memref.subview %p[0, 0, 1, 2] [1, 2, 5, 5] [1, 1, 1, 1] : memref<1x2x7x9xf32> to memref<1x2x5x5xf32, strided<[126, 63, 9, 1], offset: 11>>
  linalg.copy ins(%x : memref<1x2x5x5xf32>) outs(%sv : memref<1x2x5x5xf32, strided<[126, 63, 9, 1], offset: 11>>)
  %y = memref.alloc() {alignment = 64 : i64} : memref<1x3x4x5xf32>
  memref.copy %acc, %y : memref<1x3x4x5xf32> to memref<1x3x4x5xf32>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : memref<1x2x7x9xf32>, memref<3x2x3x3xf32>) outs(%y : memref<1x3x4x5xf32>)
  %m = memref.alloc() {alignment = 64 : i64} : memref<2x3x5xf32>
  memref.copy %macc, %m : memref<2x3x5xf32> to memref<2x3x5xf32>
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>) outs(%m : memref<2x3x5xf32>)
  return %y, %m : memref<1x3x4x5xf32>, memref<2x3x5xf32>
}

// -----

// The padded copy stays when its source is written between the copy and the
// convolution (the unpadded values would be gone by then).
// CHECK-LABEL: func.func @clobbered
// CHECK: linalg.copy
// CHECK: call @tcc_library_call_{{[0-9]+}}(%{{.*}}) {tcc.library_call = {kind = 2 : i32, params = array<i64: 1, 2, 7, 9, 3, 3, 3, 4, 5, 1, 1, 1, 1, 0, 0, 0, 0, 0>}}
func.func @clobbered(%x: memref<1x2x5x5xf32> {tcc.input = "x"}, %w: memref<3x2x3x3xf32> {tcc.param = "w"})
    -> (memref<1x3x4x5xf32> {tcc.output = "y"}) {
  %z = arith.constant 0.0 : f32
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x7x9xf32>
  linalg.fill ins(%z : f32) outs(%p : memref<1x2x7x9xf32>)
  %sv = memref.subview %p[0, 0, 1, 2] [1, 2, 5, 5] [1, 1, 1, 1] : memref<1x2x7x9xf32> to memref<1x2x5x5xf32, strided<[126, 63, 9, 1], offset: 11>>
  linalg.copy ins(%x : memref<1x2x5x5xf32>) outs(%sv : memref<1x2x5x5xf32, strided<[126, 63, 9, 1], offset: 11>>)
  linalg.fill ins(%z : f32) outs(%x : memref<1x2x5x5xf32>)
  %y = memref.alloc() {alignment = 64 : i64} : memref<1x3x4x5xf32>
  linalg.fill ins(%z : f32) outs(%y : memref<1x3x4x5xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : memref<1x2x7x9xf32>, memref<3x2x3x3xf32>) outs(%y : memref<1x3x4x5xf32>)
  return %y : memref<1x3x4x5xf32>
}

// -----

// What stays on the generated path: integer matmuls, and outputs that are
// strided views. A strided (non-contiguous) input is copied into a dense
// buffer, once per value, and the product becomes a call.
// CHECK-LABEL: func.func @stays
// CHECK: linalg.matmul ins(%{{.*}} : memref<4x4xi32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
// CHECK-NEXT: %[[D:[a-z0-9_]+]] = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
// CHECK-NEXT: linalg.copy ins(%{{.*}} : memref<4x4xf32, strided<[8, 1]>>) outs(%[[D]] : memref<4x4xf32>)
// CHECK-NEXT: call @tcc_library_call_{{[0-9]+}}(%[[D]], %[[D]], %{{.*}})
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x4xf32>, memref<4x4xf32>) outs(%{{.*}} : memref<4x4xf32, strided<[8, 1], offset: 4>>)
func.func @stays(%i: memref<4x4xi32> {tcc.input = "i"}, %big: memref<4x8xf32> {tcc.input = "big"})
    -> (memref<4x4xi32> {tcc.output = "o"}, memref<4x4xf32> {tcc.output = "f"}) {
  %o = memref.alloc() {alignment = 64 : i64} : memref<4x4xi32>
  linalg.matmul ins(%i, %i : memref<4x4xi32>, memref<4x4xi32>) outs(%o : memref<4x4xi32>)
  %sub = memref.subview %big[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  %f = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
  linalg.matmul ins(%sub, %sub : memref<4x4xf32, strided<[8, 1]>>, memref<4x4xf32, strided<[8, 1]>>) outs(%f : memref<4x4xf32>)
  %sub2 = memref.subview %big[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  linalg.matmul ins(%f, %f : memref<4x4xf32>, memref<4x4xf32>) outs(%sub2 : memref<4x4xf32, strided<[8, 1], offset: 4>>)
  return %o, %f : memref<4x4xi32>, memref<4x4xf32>
}
