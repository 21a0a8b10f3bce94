// RUN: tcc-opt --split-input-file --tcc-linalg-to-cpu-loops=min-parallel-work=32768 --canonicalize %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-linalg-to-cpu-loops=min-parallel-work=1 --canonicalize %s | FileCheck %s --check-prefix=ALL
// RUN: tcc-opt --split-input-file --tcc-linalg-to-cpu-loops --canonicalize %s | FileCheck %s --check-prefix=DEFAULT
// (The cases use a threshold of 32768 iterations; with the default, 262144,
// the 256x256 add stays sequential.)
// DEFAULT-LABEL: func.func @large_add
// DEFAULT-NOT: scf.parallel
// DEFAULT: return

// A large elementwise op: its first dimension (256 >= 64 iterations) is the
// parallel loop, the second a sequential loop inside it that steps one AVX2
// vector (8 floats) at a time.
// CHECK-LABEL: func.func @large_add
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.parallel (%[[I:[^)]*]]) =
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[C8]]
// CHECK: %[[A:.*]] = vector.transfer_read %arg0[%[[I]], %[[J]]], %{{.*}} {in_bounds = [true]} : memref<256x256xf32>, vector<8xf32>
// CHECK: %[[B:.*]] = vector.transfer_read %arg1[%[[I]], %[[J]]]
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[B]] : vector<8xf32>
// CHECK: vector.transfer_write %[[S]], %arg1[%[[I]], %[[J]]]
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

// Short leading dimensions are collapsed until the parallel loop has 64
// iterations (2 x 4 x 16 = 128).
// CHECK-LABEL: func.func @short_leading
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{[^,]*}}) =
// CHECK-NEXT: scf.for
func.func @short_leading(%a: memref<2x4x16x512xf32>, %b: memref<2x4x16x512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k, l) -> (i, j, k, l)>, affine_map<(i, j, k, l) -> (i, j, k, l)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : memref<2x4x16x512xf32>) outs(%b : memref<2x4x16x512xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = math.exp %x : f32
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

// A matmul on the generated path (integers): parallel over its rows, the
// reduction over k a sequential loop inside that carries the accumulator in
// a register (one load and one store of each result), so each result is
// summed in one fixed order whatever the thread count.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.parallel (%[[I:[^)]*]]) =
// CHECK: scf.for %[[J:[^ ]*]] =
// CHECK: %[[ACC:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK: scf.for %[[K:[^ ]*]] = {{.*}} iter_args(%{{.*}} = %[[ACC]])
// CHECK: memref.load %{{.*}}[%[[I]], %[[K]]]
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK: memref.store
func.func @matmul(%a: memref<64x128xi32>, %b: memref<128x64xi32>, %c: memref<64x64xi32>) {
  linalg.matmul ins(%a, %b : memref<64x128xi32>, memref<128x64xi32>) outs(%c : memref<64x64xi32>)
  return
}

// -----

// A full reduction has no parallel dimension, and a reduction over the first
// dimension would fork once per step: both stay sequential.
// CHECK-LABEL: func.func @sum
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK-LABEL: func.func @column_sums
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @sum(%a: memref<65536xf32>, %s: memref<f32>) {
  linalg.reduce ins(%a : memref<65536xf32>) outs(%s : memref<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %t = arith.addf %x, %acc : f32
      linalg.yield %t : f32
    }
  return
}
func.func @column_sums(%a: memref<512x512xf32>, %s: memref<512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (c)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<512x512xf32>) outs(%s : memref<512xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %t = arith.addf %x, %acc : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// What stays scalar: a row length that is not a multiple of the vector width,
// and a body that loads from another buffer (a gather).
// CHECK-LABEL: func.func @odd_rows
// CHECK-NOT: vector.
// CHECK: return
// CHECK-LABEL: func.func @gather
// CHECK-NOT: vector.
// CHECK: memref.load
// CHECK: return
func.func @odd_rows(%a: memref<512x7xf32>, %b: memref<512x7xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<512x7xf32>) outs(%b : memref<512x7xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}
func.func @gather(%table: memref<1000xf32>, %idx: memref<256x64xindex>, %out: memref<256x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%idx : memref<256x64xindex>) outs(%out : memref<256x64xf32>) {
  ^bb0(%k: index, %o: f32):
    %v = memref.load %table[%k] : memref<1000xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

// A float row reduction: the combiner gets reassociation (and contraction)
// so that LLVM may vectorize the inner loop with several partial sums; the
// order is fixed by the compiled code, not by the thread count.
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.addf {{.*}} fastmath<reassoc,contract> : f32
func.func @row_sum(%a: memref<16x256xf32>, %b: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<16x256xf32>) outs(%b : memref<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The fill of a row reduction's output is absorbed: the accumulator starts
// from the fill's constant (no load of the output, no fill loop), and the
// result is stored once per row.
// CHECK-LABEL: func.func @row_max_absorbs_fill
// CHECK-DAG: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK-NOT: memref.load %{{.*}}[%[[I]]] : memref<16xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[NEG]])
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[I]]] : memref<16xf32>
// CHECK-NOT: memref.store
// CHECK: return
func.func @row_max_absorbs_fill(%a: memref<16x256xf32>, %b: memref<16xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%b : memref<16xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<16x256xf32>) outs(%b : memref<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Must not absorb: the output is read by another op between the fill and
// the reduction (the copy must see the fill's values).
// CHECK-LABEL: func.func @fill_read_between
// CHECK: memref.store %{{.*}}, %[[B:.*]][%{{.*}}] : memref<16xf32>
// CHECK: memref.load %[[B]]
// CHECK: scf.for {{.*}} iter_args
func.func @fill_read_between(%a: memref<16x256xf32>, %b: memref<16xf32>, %c: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%b : memref<16xf32>)
  memref.copy %b, %c : memref<16xf32> to memref<16xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<16x256xf32>) outs(%b : memref<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Must not absorb: the fill writes a larger buffer than the reduction's
// output (a view of it), and a reduction over the outer loop (not in the
// accumulator form) keeps its fill.
// CHECK-LABEL: func.func @fill_of_other_buffer
// CHECK: memref.store %cst, %{{.*}} : memref<32xf32>
// CHECK: memref.load %{{.*}} : memref<32xf32>
// CHECK-LABEL: func.func @column_sums_keep_fill
// CHECK: memref.store %cst, %{{.*}} : memref<16xf32>
func.func @fill_of_other_buffer(%a: memref<16x256xf32>, %b: memref<32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%b : memref<32xf32>)
  %v = memref.subview %b[0] [16] [1] : memref<32xf32> to memref<16xf32, strided<[1]>>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<16x256xf32>) outs(%v : memref<16xf32, strided<[1]>>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}
func.func @column_sums_keep_fill(%a: memref<256x16xf32>, %b: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%b : memref<16xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<256x16xf32>) outs(%b : memref<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}
