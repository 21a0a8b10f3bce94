// RUN: tcc-opt --split-input-file --tcc-cpu-library-calls %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-cpu-library-calls=enable=false %s | FileCheck %s --check-prefix=OFF

// A planned entry gains the runtime argument; a zero-filled f32 matmul with
// a transposed weight becomes one call through the runtime's library_call
// (field offsets 24 and 32 of tcc_abi_runtime), the fill is dropped and the
// call overwrites (accumulate 0).
// CHECK: module attributes {tcc.library_calls = [{kind = 1 : i32, operands = 3 : i32, params = array<i64: 1, 4, 8, 10, 0, 1, 0>}]}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%{{.*}}: memref<?xi8>, %{{.*}}: memref<?xi8>, %[[RT:.*]]: !llvm.ptr)
// CHECK: %[[OPS:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// CHECK-NOT: linalg.fill
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: llvm.store
// CHECK: %[[FNP:.*]] = llvm.getelementptr %[[RT]][24]
// CHECK: %[[FN:.*]] = llvm.load %[[FNP]]
// CHECK: %[[CTXP:.*]] = llvm.getelementptr %[[RT]][32]
// CHECK: %[[CTX:.*]] = llvm.load %[[CTXP]]
// CHECK: %[[IDX:.*]] = llvm.mlir.constant(0 : i32)
// CHECK: llvm.call %[[FN]](%[[CTX]], %[[IDX]], %[[OPS]])
// CHECK-NOT: linalg.matmul
// OFF-LABEL: func.func @forward(%{{.*}}: memref<?xi8>, %{{.*}}: memref<?xi8>, %{{.*}}: !llvm.ptr)
// OFF: linalg.fill
// OFF: linalg.matmul
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @forward(%arena: memref<?xi8>, %state: memref<?xi8>) attributes {tcc.plan = []} {
  %c0 = arith.constant 0 : index
  %c192 = arith.constant 192 : index
  %z = arith.constant 0.0 : f32
  %x = memref.view %arena[%c0][] : memref<?xi8> to memref<4x10xf32>
  %w = memref.view %state[%c0][] : memref<?xi8> to memref<8x10xf32>
  %y = memref.view %arena[%c192][] : memref<?xi8> to memref<4x8xf32>
  linalg.fill ins(%z : f32) outs(%y : memref<4x8xf32>)
  linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %w : memref<4x10xf32>, memref<8x10xf32>) outs(%y : memref<4x8xf32>)
  return
}

// -----

// Without a zero fill right before, the call accumulates (last param 1);
// a batch matmul and a strided 2x2 convolution are calls too.
// CHECK: tcc.library_calls = [{kind = 1 : i32, operands = 3 : i32, params = array<i64: 2, 3, 5, 4, 0, 0, 1>}, {kind = 2 : i32, operands = 3 : i32, params = array<i64: 1, 2, 7, 7, 3, 3, 3, 3, 3, 2, 2, 1, 1, 0>}]
// CHECK-LABEL: func.func @more
// CHECK-COUNT-2: llvm.call
// CHECK-NOT: linalg.batch_matmul
// CHECK-NOT: linalg.conv
func.func @more(%arena: memref<?xi8>, %state: memref<?xi8>) attributes {tcc.plan = []} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  %z = arith.constant 0.0 : f32
  %a = memref.view %arena[%c0][] : memref<?xi8> to memref<2x3x4xf32>
  %b = memref.view %arena[%c128][] : memref<?xi8> to memref<2x4x5xf32>
  %c = memref.view %arena[%c256][] : memref<?xi8> to memref<2x3x5xf32>
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>) outs(%c : memref<2x3x5xf32>)
  %x = memref.view %arena[%c512][] : memref<?xi8> to memref<1x2x7x7xf32>
  %w = memref.view %state[%c0][] : memref<?xi8> to memref<3x2x3x3xf32>
  %y = memref.view %arena[%c1024][] : memref<?xi8> to memref<1x3x3x3xf32>
  linalg.fill ins(%z : f32) outs(%y : memref<1x3x3x3xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : memref<1x2x7x7xf32>, memref<3x2x3x3xf32>) outs(%y : memref<1x3x3x3xf32>)
  return
}

// -----

// What stays on the generated path: integer matmuls, non-contiguous
// (strided) operands, and functions that are not planned entries.
// CHECK-NOT: tcc.library_calls
// CHECK-LABEL: func.func @stays
// CHECK: linalg.matmul ins(%{{.*}} : memref<4x4xi32>
// CHECK: linalg.matmul ins(%{{.*}} : memref<4x4xf32, strided<[8, 1]>>
// CHECK-LABEL: func.func @helper(%{{.*}}: memref<4x4xf32>, %{{.*}}: memref<4x4xf32>, %{{.*}}: memref<4x4xf32>)
// CHECK: linalg.matmul
func.func @stays(%arena: memref<?xi8>, %state: memref<?xi8>) attributes {tcc.plan = []} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %i = memref.view %arena[%c0][] : memref<?xi8> to memref<4x4xi32>
  %o = memref.view %arena[%c64][] : memref<?xi8> to memref<4x4xi32>
  linalg.matmul ins(%i, %i : memref<4x4xi32>, memref<4x4xi32>) outs(%o : memref<4x4xi32>)
  %big = memref.view %arena[%c128][] : memref<?xi8> to memref<4x8xf32>
  %sub = memref.subview %big[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  %f = memref.view %arena[%c256][] : memref<?xi8> to memref<4x4xf32>
  linalg.matmul ins(%sub, %sub : memref<4x4xf32, strided<[8, 1]>>, memref<4x4xf32, strided<[8, 1]>>) outs(%f : memref<4x4xf32>)
  return
}
func.func @helper(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  return
}
