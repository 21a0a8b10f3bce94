// RUN: tcc-opt %s --split-input-file --tcc-gpu-merge-modules | FileCheck %s --check-prefix=MERGE

// Outlining makes one gpu.module per launch and may name kernels alike: the
// merge gives one module, each kernel named after its entry point, its
// position and its ONNX node ("op" without one), and one copy of a global
// that two kernels use. A kernel equal op for op to one merged before (the
// third launch: the first's body again) is not kept twice: its launch calls
// the first.
// MERGE-LABEL: module attributes {gpu.container_module}
// MERGE-NOT: gpu.module @f_kernel
// MERGE: gpu.launch_func  @tcc_kernels::@f_0_op blocks
// MERGE: gpu.launch_func  @tcc_kernels::@f_1_Gemm_3 blocks
// MERGE: gpu.launch_func  @tcc_kernels::@f_0_op blocks
// MERGE: gpu.module @tcc_kernels
// MERGE-DAG: gpu.func @f_0_op(
// MERGE-DAG: gpu.func @f_1_Gemm_3(
// MERGE-NOT: gpu.func @f_2
// MERGE: memref.global "private" constant @table
// MERGE-NOT: memref.global
module attributes {gpu.container_module} {
  func.func @f(%arg0: memref<64xi8>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<64xi8>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<64xi8>) loc("Gemm#3")
    gpu.launch_func @f_kernel_1::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<64xi8>) loc("Add#4")
    return
  }
  gpu.module @f_kernel {
    memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
    gpu.func @f_kernel(%a: memref<64xi8>) kernel {
      %t = memref.get_global @table : memref<2xf32>
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
    gpu.func @f_kernel(%a: memref<64xi8>) kernel {
      %t = memref.get_global @table : memref<2xf32>
      %c0 = arith.constant 0 : index
      %v = memref.load %t[%c0] : memref<2xf32>
      gpu.return
    }
  }
  gpu.module @f_kernel_1 {
    memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
    gpu.func @f_kernel(%a: memref<64xi8>) kernel {
      %t = memref.get_global @table : memref<2xf32>
      gpu.return
    }
  }
}

// -----

// Tests that a kernel of a length bucket's entry point ("train_step.T_4")
// gets a name PTX accepts: letters, digits and '_' only.
// MERGE-LABEL: module attributes {gpu.container_module}
// MERGE: gpu.launch_func  @tcc_kernels::@train_step_T_4_0_op blocks
// MERGE: gpu.func @train_step_T_4_0_op(
module attributes {gpu.container_module} {
  func.func @"train_step.T_4"(%arg0: memref<64xi8>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<64xi8>)
    return
  }
  gpu.module @k {
    gpu.func @k(%a: memref<64xi8>) kernel {
      gpu.return
    }
  }
}
