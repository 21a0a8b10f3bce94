// RUN: tcc-opt %s --tcc-gpu-lower-launches | FileCheck %s --check-prefix=LOWER
// A launch becomes: the kernel's bare pointers stored in the parameter
// slots, then an indirect call of the runtime's launch_kernel (offset 40 of
// tcc_abi_runtime) with device_context (offset 48) and the kernel's index.
// The kernel table, the PTX and the device go to module attributes; the
// binary and the container attribute are gone.
// LOWER-LABEL: module attributes
// LOWER-SAME: tcc.device = "cuda:sm_90"
// LOWER-SAME: tcc.device_ptx = "PTX TEXT"
// LOWER-SAME: tcc.kernels = [{block = array<i32: 256, 1, 1>, grid = array<i32: 4, 1, 1>, name = "k0", params = 1 : i32, shared = 0 : i32}, {block = array<i32: 1, 1, 1>, grid = array<i32: 1, 1, 1>, name = "k1", params = 2 : i32, shared = 0 : i32}]
// LOWER-NOT: gpu.container_module
// LOWER: func.func @entry
// LOWER: memref.extract_aligned_pointer_as_index
// LOWER: llvm.getelementptr %arg1[40]
// LOWER: llvm.getelementptr %arg1[48]
// LOWER: %[[I0:.*]] = llvm.mlir.constant(0 : i32)
// LOWER: llvm.call %{{.*}}(%{{.*}}, %[[I0]], %{{.*}})
// LOWER: %[[I1:.*]] = llvm.mlir.constant(1 : i32)
// LOWER: llvm.call %{{.*}}(%{{.*}}, %[[I1]], %{{.*}})
// LOWER-NOT: gpu.
module attributes {gpu.container_module} {
  func.func @entry(%arg0: memref<?xi8>, %rt: !llvm.ptr) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c256 = arith.constant 256 : index
    %a = memref.cast %arg0 : memref<?xi8> to memref<4096xi8>
    gpu.launch_func @tcc_kernels::@k0 blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1) args(%a : memref<4096xi8>)
    gpu.launch_func @tcc_kernels::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4096xi8>, %a : memref<4096xi8>)
    return
  }
  gpu.binary @tcc_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = "PTX TEXT">]
}
