// RUN: tcc-opt --split-input-file --tcc-linalg-to-cpu-loops --canonicalize %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-linalg-to-cpu-loops=min-parallel-work=1 --canonicalize %s | FileCheck %s --check-prefix=ALL

// A large elementwise op: one scf.parallel over both dimensions.
// CHECK-LABEL: func.func @large_add
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) =
// CHECK-NOT: scf.for
// CHECK: return
func.func @large_add(%a: memref<256x256xf32>, %b: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<256x256xf32>) outs(%b : memref<256x256xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A small op stays sequential: a fork would cost more than the loop.
// CHECK-LABEL: func.func @small_add
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// ALL-LABEL: func.func @small_add
// ALL: scf.parallel
func.func @small_add(%a: memref<4x4xf32>, %b: memref<4x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x4xf32>) outs(%b : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A matmul: parallel over (i, j), the reduction over k a sequential loop
// inside, so each result is summed in one fixed order whatever the threads.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK: scf.for %[[K:.*]] =
// CHECK: memref.load %{{.*}}[%[[I]], %[[K]]]
func.func @matmul(%a: memref<64x128xf32>, %b: memref<128x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// A full reduction has no parallel dimension: sequential whatever its size.
// CHECK-LABEL: func.func @sum
// CHECK-NOT: scf.parallel
// CHECK: scf.for
func.func @sum(%a: memref<65536xf32>, %s: memref<f32>) {
  linalg.reduce ins(%a : memref<65536xf32>) outs(%s : memref<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %t = arith.addf %x, %acc : f32
      linalg.yield %t : f32
    }
  return
}
