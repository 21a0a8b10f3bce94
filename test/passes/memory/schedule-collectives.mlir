// RUN: tcc-opt --split-input-file --tcc-schedule-collectives --verify-diagnostics %s | FileCheck %s

// Tests that an all-reduce on buffers becomes a START call at its place and
// a WAIT call right before the first later op that touches one of its
// buffers, here through a view; the ops in between that touch other buffers
// run while the reduction does. The START lists the bucket and each
// buffer's element count; the WAIT names its START by id.
// CHECK-LABEL: func.func private @tcc_collective_0(memref<4x8xf32>, memref<8xf32>)
// CHECK-LABEL: func.func private @tcc_collective_1(memref<4x8xf32>, memref<8xf32>)
// CHECK-LABEL: func.func @train_step
//       CHECK:   call @tcc_collective_0(%[[G:.+]], %[[H:.+]]) {tcc.collective = {dtype = 1 : i32, id = 0 : i64, kind = 1 : i32, params = array<i64: 3, 32, 8>}}
//  CHECK-NEXT:   linalg.fill {{.*}} outs(%[[OTHER:.+]] : memref<16xf32>)
//  CHECK-NEXT:   %[[V:.+]] = memref.collapse_shape %[[G]]
//  CHECK-NEXT:   call @tcc_collective_1(%[[G]], %[[H]]) {tcc.collective = {dtype = 1 : i32, kind = 2 : i32, start = 0 : i64}}
//  CHECK-NEXT:   linalg.fill {{.*}} outs(%[[V]] : memref<32xf32>)
//   CHECK-NOT:   tcc.all_reduce
func.func @train_step(%g: memref<4x8xf32>, %h: memref<8xf32>, %other: memref<16xf32>) {
  %cst = arith.constant 1.0 : f32
  tcc.all_reduce %g, %h {bucket = 3 : i64} : memref<4x8xf32>, memref<8xf32>
  linalg.fill ins(%cst : f32) outs(%other : memref<16xf32>)
  %v = memref.collapse_shape %g [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  linalg.fill ins(%cst : f32) outs(%v : memref<32xf32>)
  return
}

// -----

// Tests that a bucket nothing touches afterwards is waited for before the
// return, and that a strided view is reduced through a contiguous copy,
// copied back after the wait.
// CHECK-LABEL: func.func @strided
//       CHECK:   %[[DENSE:.+]] = memref.alloc() : memref<4xf32>
//       CHECK:   %[[SUB:.+]] = memref.subview
//       CHECK:   memref.copy %[[SUB]], %[[DENSE]]
//       CHECK:   call @tcc_collective_0(%[[DENSE]])
//       CHECK:   call @tcc_collective_1(%[[DENSE]])
//  CHECK-NEXT:   memref.copy %[[DENSE]], %[[SUB]]
//  CHECK-NEXT:   return
func.func @strided(%g: memref<4x2xf32>) {
  %s = memref.subview %g[0, 0] [4, 1] [1, 1] : memref<4x2xf32> to memref<4xf32, strided<[2]>>
  tcc.all_reduce %s {bucket = 0 : i64} : memref<4xf32, strided<[2]>>
  return
}

// -----

// Tests that a bucket mixing element types is refused.
func.func @mixed(%a: memref<4xf32>, %b: memref<4xbf16>) {
  // expected-error @+1 {{mixes element types in one bucket}}
  tcc.all_reduce %a, %b {bucket = 0 : i64} : memref<4xf32>, memref<4xbf16>
  return
}
