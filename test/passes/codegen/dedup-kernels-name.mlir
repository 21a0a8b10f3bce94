// RUN: tcc-opt --tcc-dedup-kernels %s | FileCheck %s

// Tests that the name depends on the body only: the Relu kernel of
// dedup-kernels.mlir, under another name, gets the same content name.
// CHECK: func.func private @kernel_706856ef1b3e98cb(
// CHECK: call @kernel_706856ef1b3e98cb(
func.func private @kernel_41_Relu_other(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.maximumf %x, %z : f32
    memref.store %y, %b[%i] : memref<4xf32>
  }
  return
}
func.func @step(%a: memref<4xf32>, %b: memref<4xf32>) {
  call @kernel_41_Relu_other(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}
