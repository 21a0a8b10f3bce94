// RUN: tcc-opt --split-input-file --tcc-lower-library-calls --verify-diagnostics %s | FileCheck %s

// The input is what tcc-mark-library-calls and tcc-plan-memory leave: planned
// entry points (a tcc.plan; its content does not matter here) calling
// private declarations @tcc_library_call_N marked with tcc.library_call.

// Tests that each call becomes an indirect call of the runtime's
// library_call (the fields at offsets 24 and 32 of tcc_abi_runtime, the
// entry's new last argument) with its operands' addresses in one array sized
// for the largest call, and its index in the module's tcc.library_calls
// table, whose rows add the operand count; the declarations go.
// CHECK: module attributes {tcc.library_calls = [
// CHECK-SAME: {kind = 1 : i32, operands = 3 : i32, params = array<i64: 1, 4, 8, 10, 0, 0, 0, 0>},
// CHECK-SAME: {kind = 1 : i32, operands = 4 : i32, params = array<i64: 1, 4, 8, 8, 0, 0, 0, 1>}]}
// CHECK-NOT: @tcc_library_call_
// CHECK-LABEL: func.func @forward
//  CHECK-SAME:   (%[[ARENA:.+]]: memref<?xi8>, %{{.+}}: memref<?xi8>, %[[RT:.+]]: !llvm.ptr)
//       CHECK:   %[[N:.+]] = llvm.mlir.constant(4 : i64) : i64
//       CHECK:   %[[OPS:.+]] = llvm.alloca %[[N]] x !llvm.ptr
//       CHECK:   %[[A:.+]] = memref.view %[[ARENA]]
//       CHECK:   %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[A]]
//       CHECK:   %[[I:.+]] = arith.index_cast %[[P]] : index to i64
//       CHECK:   %[[Q:.+]] = llvm.inttoptr %[[I]] : i64 to !llvm.ptr
//       CHECK:   %[[SLOT:.+]] = llvm.getelementptr %[[OPS]][0]
//       CHECK:   llvm.store %[[Q]], %[[SLOT]]
//       CHECK:   llvm.getelementptr %[[OPS]][2]
//       CHECK:   %[[FNP:.+]] = llvm.getelementptr %[[RT]][24]
//       CHECK:   %[[FN:.+]] = llvm.load %[[FNP]]
//       CHECK:   %[[CTXP:.+]] = llvm.getelementptr %[[RT]][32]
//       CHECK:   %[[CTX:.+]] = llvm.load %[[CTXP]]
//       CHECK:   %[[FIRST:.+]] = llvm.mlir.constant(0 : i32)
//       CHECK:   llvm.call %[[FN]](%[[CTX]], %[[FIRST]], %[[OPS]])
//       CHECK:   llvm.getelementptr %[[OPS]][3]
//       CHECK:   %[[SECOND:.+]] = llvm.mlir.constant(1 : i32)
//       CHECK:   llvm.call %{{.+}}(%{{.+}}, %[[SECOND]], %[[OPS]])
//   CHECK-NOT:   call @
//       CHECK:   return
func.func private @tcc_library_call_0(memref<4x10xf32>, memref<10x8xf32>, memref<4x8xf32>)
func.func private @tcc_library_call_1(memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>, memref<8xf32>)
func.func @forward(%arena: memref<?xi8>, %state: memref<?xi8>) attributes {tcc.plan = []} {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %c768 = arith.constant 768 : index
  %c1024 = arith.constant 1024 : index
  %a = memref.view %arena[%c0][] : memref<?xi8> to memref<4x10xf32>
  %b = memref.view %state[%c0][] : memref<?xi8> to memref<10x8xf32>
  %c = memref.view %arena[%c256][] : memref<?xi8> to memref<4x8xf32>
  %w = memref.view %state[%c512][] : memref<?xi8> to memref<8x8xf32>
  %bias = memref.view %state[%c768][] : memref<?xi8> to memref<8xf32>
  %y = memref.view %arena[%c1024][] : memref<?xi8> to memref<4x8xf32>
  call @tcc_library_call_0(%a, %b, %c) {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 4, 8, 10, 0, 0, 0, 0>}} : (memref<4x10xf32>, memref<10x8xf32>, memref<4x8xf32>) -> ()
  call @tcc_library_call_1(%c, %w, %y, %bias) {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 4, 8, 8, 0, 0, 0, 1>}} : (memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>, memref<8xf32>) -> ()
  return
}

// -----

// Tests that calls are appended to a table already on the module (a second
// lowering run, say), their indices continuing from it; that a planned
// entry point without calls still takes the runtime argument (every entry
// of an artifact has the same signature); and that functions without a plan
// are left alone.
// CHECK: module attributes {tcc.library_calls = [{kind = 2 : i32}, {kind = 1 : i32, operands = 3 : i32, params = array<i64: 1, 2, 2, 2, 0, 0, 1, 0>}]}
// CHECK-LABEL: func.func @step
//  CHECK-SAME:   (%{{.+}}: memref<?xi8>, %{{.+}}: memref<?xi8>, %{{.+}}: !llvm.ptr)
//       CHECK:   llvm.mlir.constant(1 : i32)
//       CHECK:   llvm.call
// CHECK-LABEL: func.func @no_calls
//  CHECK-SAME:   (%{{.+}}: memref<?xi8>, %{{.+}}: memref<?xi8>, %{{.+}}: !llvm.ptr)
//   CHECK-NOT:   llvm.alloca
//       CHECK:   return
// CHECK-LABEL: func.func @helper
//  CHECK-SAME:   (%{{.+}}: memref<2x2xf32>)
//  CHECK-NEXT:   return
module attributes {tcc.library_calls = [{kind = 2 : i32}]} {
  func.func private @tcc_library_call_0(memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>)
  func.func @step(%arena: memref<?xi8>, %state: memref<?xi8>) attributes {tcc.plan = []} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %a = memref.view %arena[%c0][] : memref<?xi8> to memref<2x2xf32>
    %b = memref.view %arena[%c16][] : memref<?xi8> to memref<2x2xf32>
    %c = memref.view %arena[%c32][] : memref<?xi8> to memref<2x2xf32>
    call @tcc_library_call_0(%a, %b, %c) {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 2, 2, 2, 0, 0, 1, 0>}} : (memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>) -> ()
    return
  }
  func.func @no_calls(%arena: memref<?xi8>, %state: memref<?xi8>) attributes {tcc.plan = []} {
    return
  }
  func.func @helper(%x: memref<2x2xf32>) {
    return
  }
}

// -----

// Tests that a library call outside a planned entry point is refused: only
// an entry point receives the runtime.
func.func private @tcc_library_call_0(memref<2xf32>, memref<2xf32>, memref<2xf32>)
func.func @unplanned(%x: memref<2xf32>) {
  // expected-error @+1 {{library call outside a planned entry point}}
  call @tcc_library_call_0(%x, %x, %x) {tcc.library_call = {kind = 1 : i32, params = array<i64: 1, 1, 2, 1, 0, 0, 0, 0>}} : (memref<2xf32>, memref<2xf32>, memref<2xf32>) -> ()
  return
}
