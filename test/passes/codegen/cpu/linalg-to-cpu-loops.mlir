// RUN: tcc-opt --split-input-file --tcc-linalg-to-cpu-loops=min-parallel-work=32768 --canonicalize %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-linalg-to-cpu-loops=min-parallel-work=1 --canonicalize %s | FileCheck %s --check-prefix=ALL
// RUN: tcc-opt --split-input-file --tcc-linalg-to-cpu-loops --canonicalize %s | FileCheck %s --check-prefix=DEFAULT
// (The cases use a threshold of 32768 units of work, loop iterations times
// body operations; with the default, 262144, the 256x256 add stays
// sequential.)
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

// A full reduction has no parallel dimension: a large sum splits into 64
// chunks of 1024 (@chunked_sum below says how). A reduction over the first
// dimension would fork once per step: it stays sequential.
// CHECK-LABEL: func.func @sum
// CHECK: memref.alloca() : memref<64xf32>
// CHECK: scf.parallel
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

// A large sum into a scalar with register accumulators (a gradient norm's
// sum of squares) splits its outermost loop into 64 fixed chunks: one
// parallel loop whose iterations sum their 8 rows from -0.0 into a partial
// each, then the partials added in order onto the absorbed fill's 0.0. The
// chunks are the shape's, whatever the thread count. Below the work
// threshold it stays one sequential nest.
// CHECK-LABEL: func.func @chunked_sum
//   CHECK-DAG:   %[[NEG0:.+]] = arith.constant -0.000000e+00 : f32
//   CHECK-DAG:   %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[P:.+]] = memref.alloca() : memref<64xf32>
//       CHECK:   scf.parallel (%[[C:[^)]*]]) = (%c0) to (%c64)
//       CHECK:     %[[LO:.+]] = arith.muli %[[C]], %c8
//       CHECK:     scf.for %{{.+}} = %[[LO]] to %{{.+}} step %c1 iter_args(%{{.+}} = %[[NEG0]])
//       CHECK:       arith.addf %{{.+}}, %{{.+}} fastmath<reassoc,contract> : f32
//       CHECK:     memref.store %{{.+}}, %[[P]][%[[C]]]
//       CHECK:   %[[S:.+]] = scf.for %[[I:[^ ]+]] = %c0 to %c64 step %c1 iter_args(%[[A:[^ ]+]] = %[[ZERO]])
//       CHECK:     %[[X:.+]] = memref.load %[[P]][%[[I]]]
//       CHECK:     arith.addf %[[A]], %[[X]] : f32
//       CHECK:   memref.store %[[S]], %arg1[]
// ALL-LABEL: func.func @chunked_sum
// ALL: scf.parallel
// CHECK-LABEL: func.func @small_sum
// CHECK-NOT: scf.parallel
// CHECK-NOT: memref.alloca
// CHECK: return
func.func @chunked_sum(%a: memref<512x512xf32>, %s: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<512x512xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %q = arith.mulf %x, %x : f32
    %t = arith.addf %acc, %q : f32
    linalg.yield %t : f32
  }
  return
}
func.func @small_sum(%a: memref<16x64xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<16x64xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %q = arith.mulf %x, %x : f32
    %t = arith.addf %acc, %q : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Batch norm's statistics over NCHW: the reduction over n, h and w leads
// with n, so the channel loop moves outermost (the reduction loops keep
// their order, w stays innermost) and runs in parallel with a register
// accumulator per channel (h and w merge into one loop of 256).
// CHECK-LABEL: func.func @channel_sums
// CHECK: scf.parallel (%[[C:[^)]*]]) =
// CHECK: %[[ACC:.*]] = memref.load %{{.*}}[%[[C]]]
// CHECK: scf.for %[[N:[^ ]*]] = %c0 to %c16 {{.*}} iter_args
// CHECK: scf.for %[[HW:[^ ]*]] = %c0 to %c256 {{.*}} iter_args
// CHECK: memref.load %{{.*}}[%[[N]], %[[C]], %[[HW]]] : memref<16x64x256xf32>
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK: memref.store
func.func @channel_sums(%a: memref<16x64x16x16xf32>, %s: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%a : memref<16x64x16x16xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %t = arith.addf %x, %acc : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// The work of an op is its iterations times its body's operations: 8192
// points of 32 operations run in parallel under the default threshold, as
// 262144 points of one operation would.
// DEFAULT-LABEL: func.func @heavy_body
// DEFAULT: scf.parallel
// DEFAULT: return
func.func @heavy_body(%a: memref<64x128xf32>, %b: memref<64x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x128xf32>) outs(%b : memref<64x128xf32>) {
  ^bb0(%x: f32, %y: f32):
    %t0 = arith.mulf %x, %y : f32
    %t1 = arith.mulf %t0, %x : f32
    %t2 = arith.mulf %t1, %x : f32
    %t3 = arith.mulf %t2, %x : f32
    %t4 = arith.mulf %t3, %x : f32
    %t5 = arith.mulf %t4, %x : f32
    %t6 = arith.mulf %t5, %x : f32
    %t7 = arith.mulf %t6, %x : f32
    %t8 = arith.mulf %t7, %x : f32
    %t9 = arith.mulf %t8, %x : f32
    %t10 = arith.mulf %t9, %x : f32
    %t11 = arith.mulf %t10, %x : f32
    %t12 = arith.mulf %t11, %x : f32
    %t13 = arith.mulf %t12, %x : f32
    %t14 = arith.mulf %t13, %x : f32
    %t15 = arith.mulf %t14, %x : f32
    %t16 = arith.mulf %t15, %x : f32
    %t17 = arith.mulf %t16, %x : f32
    %t18 = arith.mulf %t17, %x : f32
    %t19 = arith.mulf %t18, %x : f32
    %t20 = arith.mulf %t19, %x : f32
    %t21 = arith.mulf %t20, %x : f32
    %t22 = arith.mulf %t21, %x : f32
    %t23 = arith.mulf %t22, %x : f32
    %t24 = arith.mulf %t23, %x : f32
    %t25 = arith.mulf %t24, %x : f32
    %t26 = arith.mulf %t25, %x : f32
    %t27 = arith.mulf %t26, %x : f32
    %t28 = arith.mulf %t27, %x : f32
    %t29 = arith.mulf %t28, %x : f32
    %t30 = arith.mulf %t29, %x : f32
    %t31 = arith.mulf %t30, %x : f32
    linalg.yield %t31 : f32
  }
  return
}

// -----

// What stays scalar: rows whose length is not a multiple of the vector width
// and that cannot merge (one operand's rows are not contiguous), and a body
// that loads from another buffer (a gather).
// CHECK-LABEL: func.func @odd_rows
// CHECK-NOT: vector.
// CHECK-NOT: reinterpret_cast
// CHECK: return
// CHECK-LABEL: func.func @gather
// CHECK-NOT: vector.
// CHECK: memref.load
// CHECK: return
func.func @odd_rows(%a: memref<512x7xf32, strided<[8, 1]>>, %b: memref<512x7xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<512x7xf32, strided<[8, 1]>>) outs(%b : memref<512x7xf32>) {
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

// -----

// Short innermost loops over contiguous buffers merge with the loops around
// them (reinterpret casts, no copies, no index divisions): an update of a
// 3x3 filter is one vectorized loop over every element (a broadcast scalar
// and a per-output-channel operand allowed where their maps keep the
// merged loops together; the 0-d rate is loaded once, before the loop), a
// sum of squares over it one loop of register accumulation (in chunks); a fill, vectors
// of its value. What cannot merge stays: a transposed operand, and the
// leading loop of a reduction over the trailing ones.
// CHECK-LABEL: func.func @update_3x3
// CHECK: memref.load %arg2[] : memref<f32>
// CHECK: memref.reinterpret_cast %arg1 to offset: [0], sizes: [64, 288], strides: [288, 1]
// CHECK: memref.reinterpret_cast %arg0 to offset: [0], sizes: [64, 288], strides: [288, 1]
// CHECK: vector.transfer_read
// CHECK-NOT: arith.divui
// CHECK-NOT: arith.remui
// CHECK: return
// CHECK-LABEL: func.func @whole_update
// CHECK: memref.reinterpret_cast %arg1 to offset: [0], sizes: [18432], strides: [1]
// CHECK: vector.transfer_read
// CHECK: return
// CHECK-LABEL: func.func @norm_3x3
// CHECK: memref.reinterpret_cast %arg0 to offset: [0], sizes: [18432], strides: [1]
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} step %c1 iter_args
// CHECK: arith.addf {{.*}} fastmath<reassoc,contract>
// CHECK: return
// CHECK-LABEL: func.func @transposed_3x3
// CHECK-NOT: reinterpret_cast
// CHECK: return
// CHECK-LABEL: func.func @channel_sums
// CHECK: memref.reinterpret_cast %arg0 to offset: [0], sizes: [16, 32, 9], strides: [288, 9, 1]
// CHECK: return
// CHECK-LABEL: func.func @zeros_3x3
// CHECK: %[[F:.+]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [18432], strides: [1]
// CHECK: vector.transfer_write %{{.*}}, %[[F]]
// CHECK: %[[M:.+]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [18432], strides: [1]
// CHECK: vector.transfer_write %{{.*}}, %[[M]]
// CHECK: return
func.func @update_3x3(%w: memref<64x32x3x3xf32>, %g: memref<64x32x3x3xf32>, %lr: memref<f32>, %c: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>,
                                   affine_map<(a, b, c, d) -> (a)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%g, %lr, %c : memref<64x32x3x3xf32>, memref<f32>, memref<64xf32>) outs(%w : memref<64x32x3x3xf32>) {
  ^bb0(%x: f32, %r: f32, %k: f32, %y: f32):
    %m = arith.mulf %x, %r : f32
    %n = arith.mulf %m, %k : f32
    %s = arith.subf %y, %n : f32
    linalg.yield %s : f32
  }
  return
}
func.func @whole_update(%w: memref<64x32x3x3xf32>, %g: memref<64x32x3x3xf32>, %lr: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>,
                                   affine_map<(a, b, c, d) -> (a, b, c, d)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%g, %lr : memref<64x32x3x3xf32>, memref<f32>) outs(%w : memref<64x32x3x3xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %m = arith.mulf %x, %r : f32
    %s = arith.subf %y, %m : f32
    linalg.yield %s : f32
  }
  return
}
func.func @norm_3x3(%g: memref<64x32x3x3xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>],
                  iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%g : memref<64x32x3x3xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.mulf %x, %x : f32
    %t = arith.addf %m, %acc : f32
    linalg.yield %t : f32
  }
  return
}
func.func @transposed_3x3(%a: memref<64x32x3x3xf32>, %b: memref<64x32x3x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, d, c)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : memref<64x32x3x3xf32>) outs(%b : memref<64x32x3x3xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}
func.func @channel_sums(%a: memref<16x32x3x3xf32>, %s: memref<16x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a : memref<16x32x3x3xf32>) outs(%s : memref<16x32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %t = arith.addf %x, %acc : f32
    linalg.yield %t : f32
  }
  return
}
func.func @zeros_3x3(%a: memref<64x32x3x3xf32>, %b: memref<64x32x3x3xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%a : memref<64x32x3x3xf32>)
  linalg.map outs(%b : memref<64x32x3x3xf32>)
    (%init: f32) {
      linalg.yield %z : f32
    }
  return
}

// -----

// A 0-d buffer input (a random op's Philox seed, say) is loaded once before
// the loops and broadcast: the vectorized loop reads no scalar per point.
// CHECK-LABEL: func.func @scalar_input
//       CHECK:   %[[S:.*]] = memref.load %arg1[%{{.*}}] : memref<2xi64>
//       CHECK:   scf.for
//   CHECK-NOT:   memref.load
//       CHECK:   %[[V:.*]] = vector.broadcast %[[S]] : i64 to vector<4xi64>
//       CHECK:   arith.addi %{{.*}}, %[[V]] : vector<4xi64>
func.func @scalar_input(%a: memref<64xi64>, %rng: memref<2xi64>) {
  %s = memref.subview %rng[1] [1] [1] : memref<2xi64> to memref<i64, strided<[], offset: 1>>
  linalg.generic {indexing_maps = [affine_map<(i) -> ()>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%s : memref<i64, strided<[], offset: 1>>) outs(%a : memref<64xi64>) {
  ^bb0(%x: i64, %y: i64):
    %r = arith.addi %y, %x : i64
    linalg.yield %r : i64
  }
  return
}

// -----

// Boolean buffers hold a byte per element, but a vector of i1 is
// bit-packed: a generic reading a mask (planned in the arena) and one
// writing one read and write their bytes through i8 views of the same
// memory, so both vectorize (8 lanes, the f32 operand's); the body converts.
// CHECK-LABEL: func.func @masks
//       CHECK:   %[[MB:.*]] = memref.view %arg0[%{{.*}}][] : memref<1024xi8> to memref<4x64xi8>
//       CHECK:   vector.transfer_read %[[MB]]{{.*}} : memref<4x64xi8>, vector<8xi8>
//       CHECK:   arith.trunci %{{.*}} : vector<8xi8> to vector<8xi1>
//       CHECK:   arith.select
//       CHECK:   arith.extui %{{.*}} : vector<8xi1> to vector<8xi8>
//       CHECK:   vector.transfer_write %{{.*}}, %[[MB]]
//   CHECK-NOT:   memref.load
func.func @masks(%arena: memref<1024xi8>, %x: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.view %arena[%c0][] : memref<1024xi8> to memref<4x64xi1>
  %z = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%m : memref<4x64xi1>) outs(%x : memref<4x64xf32>) {
  ^bb0(%b: i1, %y: f32):
    %r = arith.select %b, %y, %z : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x64xf32>) outs(%m : memref<4x64xi1>) {
  ^bb0(%y: f32, %b: i1):
    %r = arith.cmpf ogt, %y, %z : f32
    linalg.yield %r : i1
  }
  return
}

// -----

// A boolean constant is read through an i8 copy of its global.
// CHECK-LABEL: memref.global "private" constant @mask_bytes : memref<8xi8> = dense<[1, 0, 1, 1, 0, 0, 1, 0]>
// CHECK-LABEL: func.func @constant_mask
//       CHECK:   memref.get_global @mask_bytes : memref<8xi8>
//       CHECK:   vector.transfer_read {{.*}} : memref<8xi8>, vector<8xi8>
memref.global "private" constant @mask : memref<8xi1> = dense<[true, false, true, true, false, false, true, false]>
func.func @constant_mask(%x: memref<8xf32>) {
  %m = memref.get_global @mask : memref<8xi1>
  %z = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%m : memref<8xi1>) outs(%x : memref<8xf32>) {
  ^bb0(%b: i1, %y: f32):
    %r = arith.select %b, %y, %z : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A max pool's window loops move outside its output columns (loops n, c, oh,
// kh, kw, ow): the innermost loop walks a row of outputs and a stride-2 row
// of inputs, a loop LLVM vectorizes, where the window innermost made each
// output a scalar chain of maxima. A maximum is exact in any order.
// CHECK-LABEL: func.func @max_pool_window_outside
// CHECK-NOT: linalg.pooling_nchw_max
// CHECK: scf.for %[[N:[^ ]*]] =
// CHECK: scf.for %[[C:[^ ]*]] =
// CHECK: scf.for %[[OH:[^ ]*]] =
// CHECK: scf.for %[[KH:[^ ]*]] =
// CHECK: scf.for %[[KW:[^ ]*]] =
// CHECK: scf.for %[[OW:[^ ]*]] =
// CHECK: memref.load %arg0
// CHECK: %[[OLD:.*]] = memref.load %arg2[%[[N]], %[[C]], %[[OH]], %[[OW]]]
// CHECK: %[[MAX:.*]] = arith.maximumf %[[OLD]], %{{.*}} : f32
// CHECK: memref.store %[[MAX]], %arg2[%[[N]], %[[C]], %[[OH]], %[[OW]]]
func.func @max_pool_window_outside(%x: memref<2x4x9x9xf32>, %w: memref<3x3xf32>,
                                   %y: memref<2x4x4x4xf32>) {
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : memref<2x4x9x9xf32>, memref<3x3xf32>) outs(%y : memref<2x4x4x4xf32>)
  return
}

// -----

// An input whose innermost stride is 2 (a max pool's window, one of the
// slices its backward compares) is read as one unit-stride row of the 15
// elements 8 lanes span, through a view of the same buffer, and
// deinterleaved by a shuffle; the output and the unit-stride input stay
// plain vector accesses.
// CHECK-LABEL: func.func @strided_input
// CHECK: scf.for
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata
// CHECK: %[[ROW:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%[[OFFSET]]], sizes: [15], strides: [1]
// CHECK: %[[WIDE:.*]] = vector.transfer_read %[[ROW]][%{{.*}}], %{{.*}} {in_bounds = [true]} : memref<15xf32, strided<[1], offset: ?>>, vector<15xf32>
// CHECK: %[[EVEN:.*]] = vector.shuffle %[[WIDE]], %[[WIDE]] [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK: %[[B:.*]] = vector.transfer_read %arg1
// CHECK: arith.maximumf %[[EVEN]], %[[B]] : vector<8xf32>
// CHECK: vector.transfer_write
func.func @strided_input(%a: memref<2x4x4x8xf32, strided<[576, 144, 24, 2], offset: 1>>,
                         %b: memref<2x4x4x8xf32>, %o: memref<2x4x4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
                                   affine_map<(n, c, h, w) -> (n, c, h, w)>,
                                   affine_map<(n, c, h, w) -> (n, c, h, w)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a, %b : memref<2x4x4x8xf32, strided<[576, 144, 24, 2], offset: 1>>, memref<2x4x4x8xf32>)
      outs(%o : memref<2x4x4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %m = arith.maximumf %x, %y : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A stride of 5 reads more than it uses: the op stays scalar loops.
// CHECK-LABEL: func.func @wide_stride_stays_scalar
// CHECK-NOT: vector.
// CHECK: return
func.func @wide_stride_stays_scalar(%a: memref<4x8xf32, strided<[40, 5]>>, %o: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32, strided<[40, 5]>>) outs(%o : memref<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Conversions between a 16-bit type and f32 do not count as work (a shift to
// widen, one instruction or a few integer ones to round): 65536 points of a
// bf16 body with one multiplication, two extf and a truncf stay one
// sequential loop under the default threshold (262144), as the f32 body
// would, where counting them (65536 x 4) made the kernel fork for a few
// microseconds of work.
// DEFAULT-LABEL: func.func @conversions_are_free
// DEFAULT-NOT: scf.parallel
// DEFAULT: return
func.func @conversions_are_free(%a: memref<64x1024xbf16>, %b: memref<64x1024xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x1024xbf16>) outs(%b : memref<64x1024xbf16>) {
  ^bb0(%x: bf16, %y: bf16):
    %wx = arith.extf %x : bf16 to f32
    %wy = arith.extf %y : bf16 to f32
    %p = arith.mulf %wx, %wy : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}
