// RUN: tcc-opt --split-input-file --tcc-linalg-to-cpu-loops=vector-bits=512 --canonicalize %s | FileCheck %s

// With 512-bit vectors (tcc --cpu for an AVX-512 CPU) an elementwise op
// whose innermost extent 16 floats divide steps 16 at a time.
// CHECK-LABEL: func.func @bias_add_64
// CHECK: vector.transfer_read {{.*}} : memref<256x64xf32>, vector<16xf32>
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK-NOT: vector<8xf32>
// CHECK: return
func.func @bias_add_64(%x: memref<256x64xf32>, %b: memref<64xf32>, %y: memref<256x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<256x64xf32>, memref<64xf32>) outs(%y : memref<256x64xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An extent that only 8 divide (72; the bias keeps the loops from merging
// into one contiguous loop) takes 256-bit vectors instead of staying scalar.
// CHECK-LABEL: func.func @bias_add_72
// CHECK: vector.transfer_read {{.*}} : memref<256x72xf32>, vector<8xf32>
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK: return
func.func @bias_add_72(%x: memref<256x72xf32>, %b: memref<72xf32>, %y: memref<256x72xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<256x72xf32>, memref<72xf32>) outs(%y : memref<256x72xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    linalg.yield %s : f32
  }
  return
}
