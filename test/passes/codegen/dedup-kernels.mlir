// RUN: tcc-opt --tcc-dedup-kernels="report=true" %s 2>%t.report | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.report

// Tests that kernels equal op for op (locations aside) become one function,
// called from every site; that a kernel differing in one op stays apart; and
// that each survivor is named after its body (the same name whatever the
// kernel was called before, so the compile cache sees the same symbol).
// REPORT: tcc-dedup-kernels: 3 kernels, 2 distinct

// CHECK:     func.func private @[[RELU:kernel_[0-9a-f]{16}]](
// CHECK:       arith.maximumf
// CHECK:     func.func private @[[NEG:kernel_[0-9a-f]{16}]](
// CHECK:       arith.negf
// CHECK-NOT: func.func private @kernel_
// CHECK:     func.func @step
// CHECK-NEXT:  call @[[RELU]](%arg0, %arg1)
// CHECK-NEXT:  call @[[RELU]](%arg1, %arg2)
// CHECK-NEXT:  call @[[NEG]](%arg2, %arg0)
func.func private @kernel_0_Relu_1(%a: memref<4xf32>, %b: memref<4xf32>) {
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
func.func private @kernel_1_Relu_7(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.maximumf %x, %z : f32
    memref.store %y, %b[%i] : memref<4xf32>
  } loc("elsewhere")
  return
}
func.func private @kernel_2_Neg_9(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.negf %x : f32
    memref.store %y, %b[%i] : memref<4xf32>
  }
  return
}
func.func @step(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>) {
  call @kernel_0_Relu_1(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  call @kernel_1_Relu_7(%b, %c) : (memref<4xf32>, memref<4xf32>) -> ()
  call @kernel_2_Neg_9(%c, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}
