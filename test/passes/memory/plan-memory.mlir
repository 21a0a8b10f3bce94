// RUN: tcc-opt --split-input-file --tcc-plan-memory --verify-diagnostics %s | FileCheck %s

// Tests that buffers whose lifetimes do not overlap share arena space, that a
// returned allocation is placed in its output slot (no copy), that a returned
// argument is copied into its own slot, and that parameters go to the state.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[ARENA:.+]]: memref<?xi8>, %[[STATE:.+]]: memref<?xi8>)
// CHECK-SAME: tcc.arena_size = 192 : i64
// CHECK-SAME: {element_type = f32, name = "x", offset = 0 : i64, region = "arena", role = "input", shape = array<i64: 2, 3>, size = 24 : i64}
// CHECK-SAME: {element_type = f32, name = "b", offset = 0 : i64, region = "state", role = "param", shape = array<i64: 3>, size = 12 : i64}
// CHECK-SAME: {element_type = f32, name = "y", offset = 64 : i64, region = "arena", role = "output"
// CHECK-SAME: {element_type = f32, name = "x_copy", offset = 128 : i64, region = "arena", role = "output"
// CHECK-SAME: tcc.state_size = 64 : i64
// CHECK-NOT: memref.alloc
// CHECK-DAG: %[[X:.+]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<?xi8> to memref<2x3xf32>
// CHECK-DAG: %[[B:.+]] = memref.view %[[STATE]][%c0{{.*}}][] : memref<?xi8> to memref<3xf32>
// The broadcast's buffer is dead once exp has read it: the output y reuses it.
// CHECK-DAG: %[[T0:.+]] = memref.view %[[ARENA]][%c64{{.*}}][] : memref<?xi8> to memref<2x3xf32>
// CHECK-DAG: %[[T1:.+]] = memref.view %[[ARENA]][%c128{{.*}}][] : memref<?xi8> to memref<2x3xf32>
// CHECK-DAG: %[[Y:.+]] = memref.view %[[ARENA]][%c64{{.*}}][] : memref<?xi8> to memref<2x3xf32>
// CHECK: linalg.broadcast ins(%[[B]] : memref<3xf32>) outs(%[[T0]] : memref<2x3xf32>)
// CHECK: linalg.exp ins(%[[T0]] : memref<2x3xf32>) outs(%[[T1]] : memref<2x3xf32>)
// CHECK: linalg.add ins(%[[X]], %[[T1]] : memref<2x3xf32>, memref<2x3xf32>) outs(%[[Y]] : memref<2x3xf32>)
// CHECK: %[[XC:.+]] = memref.view %[[ARENA]][%c128{{.*}}][] : memref<?xi8> to memref<2x3xf32>
// CHECK: memref.copy %[[X]], %[[XC]]
// CHECK-NEXT: return
func.func @forward(%arg0: memref<2x3xf32> {tcc.input = "x"}, %arg1: memref<3xf32> {tcc.param = "b"}) -> (memref<2x3xf32> {tcc.output = "y"}, memref<2x3xf32> {tcc.output = "x_copy"}) {
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<2x3xf32>
  linalg.broadcast ins(%arg1 : memref<3xf32>) outs(%alloc : memref<2x3xf32>) dimensions = [0]
  %alloc_0 = memref.alloc() {alignment = 64 : i64} : memref<2x3xf32>
  linalg.exp ins(%alloc : memref<2x3xf32>) outs(%alloc_0 : memref<2x3xf32>)
  %alloc_1 = memref.alloc() {alignment = 64 : i64} : memref<2x3xf32>
  linalg.add ins(%arg0, %alloc_0 : memref<2x3xf32>, memref<2x3xf32>) outs(%alloc_1 : memref<2x3xf32>)
  memref.dealloc %alloc : memref<2x3xf32>
  return %alloc_1, %arg0 : memref<2x3xf32>, memref<2x3xf32>
}

// -----

// Tests that a buffer used through a view (a subview here) stays live until
// the view's last use, so a later allocation cannot take its place early.
// x [0,256) dies after the first copy and y reuses its space; %a stays live
// through %s until the second copy, so %c takes the gap [128,256): 512 bytes.
// CHECK-LABEL: func.func @through_views(
// CHECK-SAME: tcc.arena_size = 512 : i64
// CHECK-SAME: name = "y", offset = 0 : i64
// CHECK-DAG: %[[A:.+]] = memref.view %arg0[%c256{{.*}}][] : memref<?xi8> to memref<64xf32>
// CHECK-DAG: %[[C:.+]] = memref.view %arg0[%c128{{.*}}][] : memref<?xi8> to memref<32xf32>
func.func @through_views(%arg0: memref<64xf32> {tcc.input = "x"}) -> (memref<32xf32> {tcc.output = "y"}) {
  %a = memref.alloc() : memref<64xf32>
  memref.copy %arg0, %a : memref<64xf32> to memref<64xf32>
  %s = memref.subview %a[0] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1]>>
  %b = memref.alloc() : memref<32xf32>
  memref.copy %s, %b : memref<32xf32, strided<[1]>> to memref<32xf32>
  %c = memref.alloc() : memref<32xf32>
  memref.copy %s, %c : memref<32xf32, strided<[1]>> to memref<32xf32>
  linalg.add ins(%b, %c : memref<32xf32>, memref<32xf32>) outs(%b : memref<32xf32>)
  return %b : memref<32xf32>
}

// -----

// Tests that an allocation inside a loop is refused: an entry point
// allocates nothing, and a loop-carried buffer has no single lifetime.
func.func @in_loop(%arg0: memref<4xf32> {tcc.input = "x"}) -> (memref<4xf32> {tcc.output = "y"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @+1 {{allocation inside a region; hoist it first}}
    %t = memref.alloc() : memref<4xf32>
  }
  return %arg0 : memref<4xf32>
}

// -----

// Tests that a buffer whose byte count does not fit int64 is an error naming
// it and its type (2^62 x 4 f32: 2^66 bytes), not a wrapped size.
// expected-error @+1 {{tcc-plan-memory: input 'x' of type 'memref<4611686018427387904x4xf32>' has more than 2^63 bytes}}
func.func @huge_input(%arg0: memref<4611686018427387904x4xf32> {tcc.input = "x"}) -> (memref<4xf32> {tcc.output = "y"}) {
  %y = memref.alloc() : memref<4xf32>
  return %y : memref<4xf32>
}

// -----

// Tests that placing buffers past 2^63 bytes is an error naming the buffer
// that does not fit (three of 2^61 bytes fit; the fourth ends at 2^63), not
// offsets that wrap and overlap.
// expected-error @+1 {{tcc-plan-memory: input 'd' of type 'memref<2305843009213693952xi8>' (2305843009213693952 bytes) does not fit in the arena: the memory plan would pass 2^63 bytes (6917529027641081856 bytes placed before it)}}
func.func @arena_overflow(%a: memref<2305843009213693952xi8> {tcc.input = "a"}, %b: memref<2305843009213693952xi8> {tcc.input = "b"}, %c: memref<2305843009213693952xi8> {tcc.input = "c"}, %d: memref<2305843009213693952xi8> {tcc.input = "d"}) -> (memref<4xf32> {tcc.output = "y"}) {
  %y = memref.alloc() : memref<4xf32>
  return %y : memref<4xf32>
}

// -----

// Tests that an intermediate that does not fit is reported at its allocation.
func.func @temp_overflow(%a: memref<4611686018427387904xi8> {tcc.input = "a"}) -> (memref<4611686018427387904xi8> {tcc.output = "y"}) {
  // expected-error @+1 {{tcc-plan-memory: an intermediate buffer of type 'memref<4611686018427387904xi8>' (4611686018427387904 bytes) does not fit in the arena}}
  %t = memref.alloc() : memref<4611686018427387904xi8>
  memref.copy %a, %t : memref<4611686018427387904xi8> to memref<4611686018427387904xi8>
  %y = memref.alloc() : memref<4611686018427387904xi8>
  memref.copy %t, %y : memref<4611686018427387904xi8> to memref<4611686018427387904xi8>
  return %y : memref<4611686018427387904xi8>
}

// -----

// Tests that the state region's parameters are checked too.
// expected-error @+1 {{tcc-plan-memory: param 'q' of type 'memref<4611686018427387904xi8>' (4611686018427387904 bytes) does not fit in the state}}
func.func @state_overflow(%p: memref<4611686018427387904xi8> {tcc.param = "p"}, %q: memref<4611686018427387904xi8> {tcc.param = "q"}) -> (memref<4xf32> {tcc.output = "y"}) {
  %y = memref.alloc() : memref<4xf32>
  return %y : memref<4xf32>
}
