// RUN: tcc-opt %s --tcc-gpu-map-kernels --split-input-file | FileCheck %s

// Elementwise: one thread per point, 256 per block, ceil(1001 / 256) = 4
// blocks, guarded; the kernel uses the planned buffers (views of the arena
// at constant offsets) as they are, so they become its parameters and the
// offsets stay outside: kernels of equal ops on other buffers are equal.
// (1001 is no multiple of 4: no vector accesses,
// test/codegen/cuda/vector-access.mlir.)
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @elementwise
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[X:.*]] = memref.view %arg0[%{{.*}}][] : memref<?xi8> to memref<1001xf32>
// CHECK-DAG: %[[Y:.*]] = memref.view %arg0[%{{.*}}][] : memref<?xi8> to memref<1001xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C4]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[C256]],
// CHECK-NOT: memref.view
// CHECK-NOT: memref.cast
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK: memref.load %[[X]]
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK-NOT: linalg.generic
func.func @elementwise(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 8192 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<1001xf32>
  %y = memref.view %arg0[%c4096][] : memref<?xi8> to memref<1001xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<1001xf32>) outs(%y : memref<1001xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A row reduction (innermost, 512 long): one block per row; threads stride
// the row from their index, then combine with five xor shuffles, one shared
// word per warp and a barrier; thread 0 combines with the old output.
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row_sum
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C64]], {{.*}}) threads({{.*}}) in ({{.*}} = %{{.*}}, {{.*}}) workgroup(%[[SCRATCH:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %cst
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SCRATCH]]
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: memref.store
func.func @row_sum(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 262144 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c131072 = arith.constant 131072 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<64x512xf32>
  %y = memref.view %arg0[%c131072][] : memref<?xi8> to memref<64xf32>
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x512xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Must not block-reduce: many points (16384) with the reduction outermost
// (a bias gradient's column sum): one thread per point, the reduction loop
// carrying the accumulator in a register, one store.
#in = affine_map<(d0, d1) -> (d1, d0)>
#out = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @column_sum
// CHECK: gpu.launch
// CHECK-NOT: workgroup
// CHECK-NOT: gpu.shuffle
// CHECK: scf.if
// CHECK: memref.load
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.addf
// CHECK: scf.yield
// CHECK: memref.store
func.func @column_sum(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 2162688 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c2097152 = arith.constant 2097152 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<32x16384xf32>
  %y = memref.view %arg0[%c2097152][] : memref<?xi8> to memref<16384xf32>
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : memref<32x16384xf32>) outs(%y : memref<16384xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Must not block-reduce: a reduction yielding two results (max and its
// index) has no single combiner; thread per point.
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @argmax
// CHECK: gpu.launch
// CHECK-NOT: gpu.shuffle
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
func.func @argmax(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 262144 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c131072 = arith.constant 131072 : index
  %c135168 = arith.constant 135168 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<64x512xf32>
  %m = memref.view %arg0[%c131072][] : memref<?xi8> to memref<64xf32>
  %i = memref.view %arg0[%c135168][] : memref<?xi8> to memref<64xi64>
  linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x512xf32>) outs(%m, %i : memref<64xf32>, memref<64xi64>) {
  ^bb0(%a: f32, %best: f32, %at: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %gt = arith.cmpf ogt, %a, %best : f32
    %nb = arith.select %gt, %a, %best : f32
    %ni = arith.select %gt, %ji, %at : i64
    linalg.yield %nb, %ni : f32, i64
  }
  return
}

// -----

// A scatter's loops (iterations may hit the same row) run in one thread, in
// order; a copy and a fill are ordinary kernels; library calls stay on the
// host.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @scatter
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:[^,]*]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[ONE]],
// CHECK: scf.for
// CHECK: gpu.launch
// CHECK-NOT: linalg.copy
// CHECK: memref.load
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK: call @tcc_library_call_0
func.func private @tcc_library_call_0(memref<8xf32>)
func.func @scatter(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 1024 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c512 = arith.constant 512 : index
  %idx = memref.view %arg0[%c0][] : memref<?xi8> to memref<8xi64>
  %t = memref.view %arg0[%c512][] : memref<?xi8> to memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %k = memref.load %idx[%i] : memref<8xi64>
    %ki = arith.index_cast %k : i64 to index
    %v = memref.load %t[%ki] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %t[%ki] : memref<8xf32>
  }
  %u = memref.view %arg0[%c512][] : memref<?xi8> to memref<8xf32>
  memref.copy %t, %u : memref<8xf32> to memref<8xf32>
  call @tcc_library_call_0(%u) : (memref<8xf32>) -> ()
  return
}

// -----

// An embedding gradient's scatter-add: for each token, row[idx] += g[token].
// Iterations may hit the same row, but every op of the body touches column p
// of the rows it selects (subviews keep the trailing dimension whole): one
// thread per column runs the whole loop in order (32 threads, not 1).
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @scatter_rows
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}} = %[[C32]],
// CHECK: scf.if
// CHECK: scf.for
// CHECK: memref.subview
// CHECK: arith.addf
// CHECK-NOT: linalg.
// CHECK-NOT: memref.copy
// CHECK: gpu.terminator
func.func @scatter_rows(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 8192 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c15 = arith.constant 15 : index
  %c64 = arith.constant 64 : index
  %c1088 = arith.constant 1088 : index
  %c3136 = arith.constant 3136 : index
  %idx = memref.view %arg0[%c0][] : memref<?xi8> to memref<8xi64>
  %g = memref.view %arg0[%c64][] : memref<?xi8> to memref<8x32xf32>
  %table = memref.view %arg0[%c1088][] : memref<?xi8> to memref<16x32xf32>
  %tmp = memref.view %arg0[%c3136][] : memref<?xi8> to memref<32xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %k = memref.load %idx[%i] : memref<8xi64>
    %ki = arith.index_cast %k : i64 to index
    %kc = arith.minsi %ki, %c15 : index
    %grow = memref.subview %g[%i, 0] [1, 32] [1, 1] : memref<8x32xf32> to memref<32xf32, strided<[1], offset: ?>>
    %trow = memref.subview %table[%kc, 0] [1, 32] [1, 1] : memref<16x32xf32> to memref<32xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%trow, %grow : memref<32xf32, strided<[1], offset: ?>>, memref<32xf32, strided<[1], offset: ?>>) outs(%tmp : memref<32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
    memref.copy %tmp, %trow : memref<32xf32> to memref<32xf32, strided<[1], offset: ?>>
  }
  return
}

// -----

// Must stay in one thread: the body writes a column of the selected row
// (the subview keeps the leading dimension), so different iterations' point
// p are different elements that other points may also hit.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @scatter_columns
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:[^,]*]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[ONE]],
// CHECK: scf.for
// CHECK: linalg.generic
func.func @scatter_columns(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 8192 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c15 = arith.constant 15 : index
  %c64 = arith.constant 64 : index
  %c1088 = arith.constant 1088 : index
  %idx = memref.view %arg0[%c0][] : memref<?xi8> to memref<8xi64>
  %g = memref.view %arg0[%c64][] : memref<?xi8> to memref<8x16xf32>
  %table = memref.view %arg0[%c1088][] : memref<?xi8> to memref<16x16xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %k = memref.load %idx[%i] : memref<8xi64>
    %ki = arith.index_cast %k : i64 to index
    %kc = arith.minsi %ki, %c15 : index
    %gcol = memref.subview %g[%i, 0] [1, 16] [1, 1] : memref<8x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    %tcol = memref.subview %table[0, %kc] [16, 1] [1, 1] : memref<16x16xf32> to memref<16xf32, strided<[16], offset: ?>>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%gcol : memref<16xf32, strided<[1], offset: ?>>) outs(%tcol : memref<16xf32, strided<[16], offset: ?>>) {
    ^bb0(%b: f32, %o: f32):
      %s = arith.addf %o, %b : f32
      linalg.yield %s : f32
    }
  }
  return
}

// -----

// One output point and a long reduction (a loss or a norm over a whole
// tensor): split over 64 blocks of 16384 points that write partial sums to a
// scratch region grown at the arena's end (4194308 rounded up to 256, plus
// 64 floats), then one block combines them with the old output. Two
// launches, no atomics.
#in = affine_map<(d0) -> (d0)>
#out = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @total
// CHECK-SAME: tcc.arena_size = 4194816
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[ARENA:.*]] = memref.cast %arg0 : memref<?xi8> to memref<4194816xi8>
// CHECK-DAG: %[[PARTIALS:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<4194816xi8> to memref<64xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C64]], {{.*}}) threads
// CHECK: gpu.barrier
// CHECK: memref.store {{.*}}, %[[PARTIALS]]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}}) threads
// CHECK: memref.load %[[PARTIALS]]{{.*}} : memref<64xf32>
// CHECK: gpu.barrier
// CHECK: memref.store {{.*}} : memref<f32>
func.func @total(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 4194308 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c4194304 = arith.constant 4194304 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<1048576xf32>
  %y = memref.view %arg0[%c4194304][] : memref<?xi8> to memref<f32>
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction"]} ins(%x : memref<1048576xf32>) outs(%y : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row max and a column sum each absorb the fill of their output: one
// kernel apiece (no fill kernel); the block reduction's thread 0 combines
// with the fill's constant instead of loading the output, and the
// thread-per-point accumulator starts from it.
#in = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1, d0)>
#out = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @absorbed_fills
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
// CHECK-LABEL: func.func @fill_read_between
// CHECK-COUNT-3: gpu.launch
func.func @absorbed_fills(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 2424832 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c131072 = arith.constant 131072 : index
  %c262144 = arith.constant 262144 : index
  %c327680 = arith.constant 327680 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<64x512xf32>
  %y = memref.view %arg0[%c131072][] : memref<?xi8> to memref<64xf32>
  %z = memref.view %arg0[%c262144][] : memref<?xi8> to memref<16384xf32>
  %w = memref.view %arg0[%c327680][] : memref<?xi8> to memref<32x16384xf32>
  linalg.fill ins(%ninf : f32) outs(%y : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x512xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%z : memref<16384xf32>)
  linalg.generic {indexing_maps = [#col, #out], iterator_types = ["parallel", "reduction"]} ins(%w : memref<32x16384xf32>) outs(%z : memref<16384xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}
func.func @fill_read_between(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 262400 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c131072 = arith.constant 131072 : index
  %c131328 = arith.constant 131328 : index
  %zero = arith.constant 0.0 : f32
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<64x512xf32>
  %y = memref.view %arg0[%c131072][] : memref<?xi8> to memref<64xf32>
  %c = memref.view %arg0[%c131328][] : memref<?xi8> to memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<64xf32>)
  memref.copy %y, %c : memref<64xf32> to memref<64xf32>
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x512xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}
