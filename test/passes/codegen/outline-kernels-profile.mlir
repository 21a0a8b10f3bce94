// RUN: tcc-opt --tcc-outline-kernels=profile-marks=true %s | FileCheck %s
// RUN: not tcc-opt --tcc-outline-kernels=profile-marks=true --split-input-file %S/outline-kernels.mlir 2>&1 | FileCheck %s --check-prefix=NORUNTIME

// Tests that with profile-marks each kernel call is bracketed by calls of
// the runtime's profile_kernel (field 56 of tcc_abi_runtime, its context at
// 64) with 2k and 2k + 1, and that the metadata names the kernels in order.
// CHECK: module attributes {tcc.metadata = {loss = "mse", profile.kernels = "kernel_0_relu;kernel_1_neg"}}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[RT:arg[0-9]+]]: !llvm.ptr)
// CHECK: %[[FN:.*]] = llvm.getelementptr %[[RT]][56]
// CHECK: %[[I0:.*]] = llvm.mlir.constant(0 : i32)
// CHECK: llvm.call %{{.*}}(%{{.*}}, %[[I0]], %{{.*}})
// CHECK-NEXT: call @kernel_0_relu(
// CHECK: llvm.mlir.constant(1 : i32)
// CHECK: llvm.call
// CHECK: llvm.mlir.constant(2 : i32)
// CHECK: llvm.call
// CHECK-NEXT: call @kernel_1_neg(
// CHECK: llvm.mlir.constant(3 : i32)
// CHECK: llvm.call
// CHECK-NEXT: return
// NORUNTIME: error: tcc-outline-kernels: profile-marks needs the runtime argument
module attributes {tcc.metadata = {loss = "mse"}} {
func.func @forward(%a: memref<8xf32>, %b: memref<8xf32>, %rt: !llvm.ptr) attributes {tcc.plan = []} {
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
}
