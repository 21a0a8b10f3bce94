// RUN: tcc-opt %s --split-input-file --verify-diagnostics --tcc-gpu-emulated-kernels | FileCheck %s

// Tests that a block reduction's kernel gets a host twin with the signature
// of abi.h's tcc_abi_emulated_kernel.fn: its buffers are the bare pointers
// the params array points at, its workgroup attribution a view of the
// block's shared memory, the ids the fields of the thread (threadIdx at byte
// 0, blockIdx at 12, blockDim at 24, gridDim at 36, shared at 48, context
// at 56, barrier at 64, shuffle at 72), the barrier and the shuffle indirect
// calls; the kernel's global is copied beside it; the table says 32 bytes of
// shared memory (two attributions, each 16-byte aligned) and that it
// synchronizes. The gpu.module is left as it was.
// CHECK-LABEL: module attributes {gpu.container_module, tcc.emulated_kernels = {reduce = ["kernel_emulated_reduce", 32, 1], scale = ["kernel_emulated_scale", 0, 0]}}
// CHECK: gpu.module @tcc_kernels {
// CHECK: gpu.func @reduce(
// CHECK: gpu.shuffle  down
// CHECK: gpu.barrier
// CHECK: memref.global "private" constant @tcc_emulated_table : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]>
// CHECK: func.func @kernel_emulated_reduce(%[[THREAD:.*]]: !llvm.ptr, %[[PARAMS:.*]]: !llvm.ptr) {
// CHECK: %[[MODE:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x i32
// CHECK: %[[P0:.*]] = llvm.load %[[PARAMS]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[A0:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to memref<64xf32>
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[PARAMS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to memref<1xf32>
// CHECK: %[[SHAREDF:.*]] = llvm.getelementptr %[[THREAD]][48] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: %[[SHARED:.*]] = llvm.load %[[SHAREDF]] : !llvm.ptr -> !llvm.ptr
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to memref<1xf32>
// CHECK: llvm.getelementptr %[[SHARED]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to memref<3xi8>
// CHECK-DAG: %[[TX:.*]] = llvm.load %[[THREAD]] : !llvm.ptr -> i32
// CHECK-DAG: arith.index_castui %[[TX]] : i32 to index
// CHECK-DAG: llvm.getelementptr %[[THREAD]][12] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-DAG: llvm.getelementptr %[[THREAD]][28] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-DAG: llvm.getelementptr %[[THREAD]][44] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-DAG: memref.get_global @tcc_emulated_table : memref<2xf32>
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[WIDE:.*]] = arith.extui %[[BITS]] : i32 to i64
// CHECK: %[[SHF:.*]] = llvm.getelementptr %[[THREAD]][72] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: %[[SHFN:.*]] = llvm.load %[[SHF]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[CTXF:.*]] = llvm.getelementptr %[[THREAD]][56] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: %[[CTX:.*]] = llvm.load %[[CTXF]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[R:.*]] = llvm.call %[[SHFN]](%[[CTX]], %[[WIDE]], %{{.*}}, %{{.*}}, %[[MODE]], %[[SLOT]]) : !llvm.ptr, (!llvm.ptr, i64, i32, i32, i32, !llvm.ptr) -> i64
// CHECK: %[[NARROW:.*]] = arith.trunci %[[R]] : i64 to i32
// CHECK: arith.bitcast %[[NARROW]] : i32 to f32
// CHECK: %[[VALID:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> i32
// CHECK: arith.cmpi ne, %[[VALID]]
// CHECK: %[[BARF:.*]] = llvm.getelementptr %[[THREAD]][64] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: %[[BAR:.*]] = llvm.load %[[BARF]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call %[[BAR]](%{{.*}}) : !llvm.ptr, (!llvm.ptr) -> ()
// CHECK: return
// CHECK: func.func @kernel_emulated_scale(
// CHECK-NOT: linalg.
// CHECK: scf.for
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @tcc_kernels {
    memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
    gpu.func @reduce(%in: memref<64xf32>, %out: memref<1xf32>)
        workgroup(%partial : memref<1xf32, #gpu.address_space<workgroup>>,
                  %flags : memref<3xi8, #gpu.address_space<workgroup>>) kernel {
      %tx = gpu.thread_id x
      %bx = gpu.block_id x
      %bd = gpu.block_dim y
      %gd = gpu.grid_dim z
      %t = memref.get_global @table : memref<2xf32>
      %c0 = arith.constant 0 : index
      %i0 = arith.addi %tx, %bx : index
      %i1 = arith.addi %i0, %bd : index
      %i2 = arith.addi %i1, %gd : index
      %w = memref.load %t[%c0] : memref<2xf32>
      %u = memref.load %in[%i2] : memref<64xf32>
      %v = arith.mulf %u, %w : f32
      %off = arith.constant 1 : i32
      %width = arith.constant 32 : i32
      %s, %ok = gpu.shuffle down %v, %off, %width : f32
      %other = arith.select %ok, %s, %v : f32
      %sum = arith.addf %v, %other : f32
      memref.store %sum, %partial[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %r = memref.load %partial[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
      memref.store %r, %out[%c0] : memref<1xf32>
      %flag = arith.constant 1 : i8
      memref.store %flag, %flags[%c0] : memref<3xi8, #gpu.address_space<workgroup>>
      gpu.return
    }
    // A one-thread kernel whose scatter loop is still a linalg op.
    gpu.func @scale(%a: memref<8xf32>) kernel {
      %two = arith.constant 2.0 : f32
      linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
          outs(%a : memref<8xf32>) {
      ^bb0(%x: f32):
        %y = arith.mulf %x, %two : f32
        linalg.yield %y : f32
      }
      gpu.return
    }
  }
}

// -----

// Tests that an op the emulation does not know is refused, named.
module attributes {gpu.container_module} {
  gpu.module @tcc_kernels {
    gpu.func @lanes(%a: memref<32xi32>) kernel {
      // expected-error @below {{emulation: gpu.lane_id is not emulated}}
      %l = gpu.lane_id
      %c0 = arith.constant 0 : index
      %li = arith.index_cast %l : index to i32
      memref.store %li, %a[%c0] : memref<32xi32>
      gpu.return
    }
  }
}
