// RUN: tcc-opt --tcc-outline-kernels %s | FileCheck %s

// Tests that every loop nest of a planned function becomes a call of a
// function named after its node.
// CHECK-LABEL: func.func @kernel_0_relu(
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK-LABEL: func.func @kernel_1_neg(
// CHECK: scf.for
// CHECK: arith.negf
// CHECK-LABEL: func.func @forward
// CHECK-NOT: scf.for
// CHECK: call @kernel_0_relu(
// CHECK-NEXT: call @kernel_1_neg(
// CHECK-NEXT: return
func.func @forward(%a: memref<8xf32>, %b: memref<8xf32>) attributes {tcc.plan = []} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf32>
    %r = arith.maximumf %v, %z : f32
    memref.store %r, %b[%i] : memref<8xf32>
  } loc("relu")
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %b[%i] : memref<8xf32>
    %r = arith.negf %v : f32
    memref.store %r, %a[%i] : memref<8xf32>
  } loc("neg")
  return
}
