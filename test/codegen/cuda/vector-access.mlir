// REQUIRES: cuda-toolkit
// RUN: tcc-opt %s --split-input-file --tcc-gpu-map-kernels | FileCheck %s --check-prefix=IR
// RUN: tcc-opt %s --split-input-file --tcc-cuda-kernels | FileCheck %s --check-prefix=PTX

// Vectorized elementwise kernels: when every buffer indexed by the innermost
// loop has it as its last, contiguous index, with a 16-byte aligned base and
// outer strides, each thread computes 4 consecutive innermost points with one
// 16-byte access per such buffer. LLVM 22's NVPTX backend spells the 16-byte
// f32 accesses ld.global.v4.b32 / st.global.v4.b32 (untyped bits).

// A bias add and a per-row scale over 128 rows of 64: the input, the bias
// (indexed by the inner dimension) and the output are vectors, the per-row
// scale one scalar load; linalg.index sees each point's own column.
// 2048 groups of 4 points: 8 blocks of 256 threads.
#xy = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
// IR-LABEL: func.func @bias_add
// IR-DAG: %[[C8:.*]] = arith.constant 8 : index
// IR-DAG: %[[C256:.*]] = arith.constant 256 : index
// IR: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C8]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[C256]],
// IR: arith.cmpi ult, %{{.*}}, %c2048
// IR: %[[COL:.*]] = arith.muli %{{.*}}, %c4
// IR: %[[X:.*]] = vector.load %{{.*}}[%[[ROW:.*]], %[[COL]]] {alignment = 16 : i64} : memref<128x64xf32>, vector<4xf32>
// IR: %[[B:.*]] = vector.load %{{.*}}[%[[COL]]] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
// IR: %[[S:.*]] = memref.load %{{.*}}[%[[ROW]]] : memref<128xf32>
// IR: vector.extract %[[X]][0]
// IR: vector.extract %[[B]][0]
// IR: arith.index_cast %[[COL]]
// IR: %[[COL3:.*]] = arith.addi %[[COL]], %c3
// IR: vector.extract %[[X]][3]
// IR: arith.index_cast %[[COL3]]
// IR: %[[V:.*]] = vector.from_elements
// IR: vector.store %[[V]], %{{.*}}[%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<128x64xf32>, vector<4xf32>
// IR-NOT: linalg.generic
// PTX-LABEL: .entry bias_add_0_op(
// PTX-SAME: ld.global.v4.b32{{.*}}ld.global.v4.b32
// PTX-SAME: st.global.v4.b32
// PTX: func.func @bias_add
func.func @bias_add(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 66560 : i64, tcc.state_size = 1024 : i64} {
  %c0 = arith.constant 0 : index
  %c32768 = arith.constant 32768 : index
  %c65536 = arith.constant 65536 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<128x64xf32>
  %y = memref.view %arg0[%c32768][] : memref<?xi8> to memref<128x64xf32>
  %s = memref.view %arg0[%c65536][] : memref<?xi8> to memref<128xf32>
  %bias = memref.view %arg1[%c0][] : memref<?xi8> to memref<64xf32>
  linalg.generic {indexing_maps = [#xy, #col, #row, #xy], iterator_types = ["parallel", "parallel"]} ins(%x, %bias, %s : memref<128x64xf32>, memref<64xf32>, memref<128xf32>) outs(%y : memref<128x64xf32>) {
  ^bb0(%a: f32, %b: f32, %r: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    %u = arith.mulf %t, %r : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %v = arith.addf %u, %jf : f32
    linalg.yield %v : f32
  }
  return
}

// -----

// A view with an offset: columns 4..67 of rows of 72 start 16 bytes into
// each 288-byte row, so 16-byte accesses stay aligned; an accumulating
// output (the body reads it) is a vector load too.
#xy = affine_map<(d0, d1) -> (d0, d1)>
// IR-LABEL: func.func @aligned_subview
// IR: vector.load %{{.*}} {alignment = 16 : i64} : memref<128x64xf32, strided<[72, 1], offset: 4>>, vector<4xf32>
// IR: vector.load %{{.*}} {alignment = 16 : i64} : memref<128x64xf32>, vector<4xf32>
// IR: vector.store
// PTX-LABEL: .entry aligned_subview_0_op(
// PTX-SAME: ld.global.v4.b32{{.*}}ld.global.v4.b32
// PTX-SAME: st.global.v4.b32
// PTX: func.func @aligned_subview
func.func @aligned_subview(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 69632 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c36864 = arith.constant 36864 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<128x72xf32>
  %xs = memref.subview %x[0, 4] [128, 64] [1, 1] : memref<128x72xf32> to memref<128x64xf32, strided<[72, 1], offset: 4>>
  %y = memref.view %arg0[%c36864][] : memref<?xi8> to memref<128x64xf32>
  linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]} ins(%xs : memref<128x64xf32, strided<[72, 1], offset: 4>>) outs(%y : memref<128x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Must not vectorize: an innermost size (6) that 4 does not divide.
#xy = affine_map<(d0, d1) -> (d0, d1)>
// IR-LABEL: func.func @inner_not_multiple
// IR-NOT: vector.
// IR: memref.load
// IR: memref.store
// PTX-LABEL: .entry inner_not_multiple_0_op(
// PTX-NOT: .v4.
// PTX: func.func @inner_not_multiple
func.func @inner_not_multiple(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 12288 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c6144 = arith.constant 6144 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<256x6xf32>
  %y = memref.view %arg0[%c6144][] : memref<?xi8> to memref<256x6xf32>
  linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]} ins(%x : memref<256x6xf32>) outs(%y : memref<256x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Must not vectorize: a transposed read (the innermost loop indexes the
// input's rows: 4 points are 4 rows apart).
#xy = affine_map<(d0, d1) -> (d0, d1)>
#yx = affine_map<(d0, d1) -> (d1, d0)>
// IR-LABEL: func.func @transposed
// IR-NOT: vector.
// IR: memref.load
// IR: memref.store
// PTX-LABEL: .entry transposed_0_op(
// PTX-NOT: .v4.
// PTX: func.func @transposed
func.func @transposed(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 65536 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c32768 = arith.constant 32768 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<128x64xf32>
  %y = memref.view %arg0[%c32768][] : memref<?xi8> to memref<64x128xf32>
  linalg.generic {indexing_maps = [#yx, #xy], iterator_types = ["parallel", "parallel"]} ins(%x : memref<128x64xf32>) outs(%y : memref<64x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// Must not vectorize: a view whose offset (1 element, 4 bytes) leaves its
// groups of 4 off 16-byte boundaries.
#xy = affine_map<(d0, d1) -> (d0, d1)>
// IR-LABEL: func.func @unaligned_offset
// IR-NOT: vector.
// IR: memref.load
// IR: memref.store
// PTX-LABEL: .entry unaligned_offset_0_op(
// PTX-NOT: .v4.
// PTX: func.func @unaligned_offset
func.func @unaligned_offset(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 69632 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c36864 = arith.constant 36864 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<128x72xf32>
  %xs = memref.subview %x[0, 1] [128, 64] [1, 1] : memref<128x72xf32> to memref<128x64xf32, strided<[72, 1], offset: 1>>
  %y = memref.view %arg0[%c36864][] : memref<?xi8> to memref<128x64xf32>
  linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]} ins(%xs : memref<128x64xf32, strided<[72, 1], offset: 1>>) outs(%y : memref<128x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Must not vectorize: rows of 66 elements (264 bytes) put every other row's
// groups off 16-byte boundaries, though the view itself starts aligned.
#xy = affine_map<(d0, d1) -> (d0, d1)>
// IR-LABEL: func.func @unaligned_rows
// IR-NOT: vector.
// IR: memref.load
// PTX-LABEL: .entry unaligned_rows_0_op(
// PTX-NOT: .v4.
// PTX: func.func @unaligned_rows
func.func @unaligned_rows(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 69632 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c36864 = arith.constant 36864 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<128x66xf32>
  %xs = memref.subview %x[0, 0] [128, 64] [1, 1] : memref<128x66xf32> to memref<128x64xf32, strided<[66, 1]>>
  %y = memref.view %arg0[%c36864][] : memref<?xi8> to memref<128x64xf32>
  linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]} ins(%xs : memref<128x64xf32, strided<[66, 1]>>) outs(%y : memref<128x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// 16-bit elementwise kernels take 8 points per thread: 16 bytes of bf16 per
// access (ld.global.v4.b32 of packed pairs). A bf16 bias add over 128 rows
// of 64: 1024 groups of 8 points, 4 blocks of 256 threads.
// IR-LABEL: func.func @bf16_add
// IR: gpu.launch blocks({{.*}}) in ({{.*}} = %c4, {{.*}}) threads({{.*}}) in ({{.*}} = %c256,
// IR: arith.cmpi ult, %{{.*}}, %c1024
// IR: %[[COL:.*]] = arith.muli %{{.*}}, %c8
// IR: vector.load %{{.*}}[%{{.*}}, %[[COL]]] {alignment = 16 : i64} : memref<128x64xbf16>, vector<8xbf16>
// IR: vector.load %{{.*}}[%[[COL]]] {alignment = 16 : i64} : memref<64xbf16>, vector<8xbf16>
// IR: vector.store %{{.*}} {alignment = 16 : i64} : memref<128x64xbf16>, vector<8xbf16>
// PTX-LABEL: .entry bf16_add_0_op(
// PTX-SAME: ld.global.v4.b32{{.*}}ld.global.v4.b32
// PTX-SAME: st.global.v4.b32
// PTX: func.func @bf16_add
#xy = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @bf16_add(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 32768 : i64, tcc.state_size = 128 : i64} {
  %c0 = arith.constant 0 : index
  %c16384 = arith.constant 16384 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<128x64xbf16>
  %y = memref.view %arg0[%c16384][] : memref<?xi8> to memref<128x64xbf16>
  %bias = memref.view %arg1[%c0][] : memref<?xi8> to memref<64xbf16>
  linalg.generic {indexing_maps = [#xy, #col, #xy], iterator_types = ["parallel", "parallel"]} ins(%x, %bias : memref<128x64xbf16>, memref<64xbf16>) outs(%y : memref<128x64xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %t = arith.addf %a, %b : bf16
    linalg.yield %t : bf16
  }
  return
}

// -----

// A widening cast (f16 in, f32 out): 8 points too, so the f16 load is 16
// bytes and the f32 store two 16-byte stores.
// IR-LABEL: func.func @widen
// IR: vector.load %{{.*}} {alignment = 16 : i64} : memref<128x64xf16>, vector<8xf16>
// IR: vector.store %{{.*}} {alignment = 16 : i64} : memref<128x64xf32>, vector<8xf32>
// PTX-LABEL: .entry widen_0_op(
// PTX-SAME: ld.global.v4.b32
// PTX-SAME: st.global.v4.b32{{.*}}st.global.v4.b32
// PTX: func.func @widen
#xy = affine_map<(d0, d1) -> (d0, d1)>
func.func @widen(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 49152 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c16384 = arith.constant 16384 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<128x64xf16>
  %y = memref.view %arg0[%c16384][] : memref<?xi8> to memref<128x64xf32>
  linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]} ins(%x : memref<128x64xf16>) outs(%y : memref<128x64xf32>) {
  ^bb0(%a: f16, %o: f32):
    %t = arith.extf %a : f16 to f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Rows of 60 bf16 (8 does not divide 60, 4 does): 4 points per thread,
// 8-byte accesses.
// IR-LABEL: func.func @bf16_rows_of_60
// IR: arith.cmpi ult, %{{.*}}, %c1920
// IR: vector.load %{{.*}} {alignment = 8 : i64} : memref<128x60xbf16>, vector<4xbf16>
// IR: vector.store %{{.*}} {alignment = 8 : i64} : memref<128x60xbf16>, vector<4xbf16>
// PTX-LABEL: .entry bf16_rows_of_60_0_op(
// PTX-SAME: ld.global.v2.b32
// PTX-SAME: st.global.v2.b32
// PTX: func.func @bf16_rows_of_60
#xy = affine_map<(d0, d1) -> (d0, d1)>
func.func @bf16_rows_of_60(%arg0: memref<?xi8>, %arg1: memref<?xi8>) attributes {tcc.plan = [], tcc.arena_size = 32768 : i64, tcc.state_size = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c16384 = arith.constant 16384 : index
  %x = memref.view %arg0[%c0][] : memref<?xi8> to memref<128x60xbf16>
  %y = memref.view %arg0[%c16384][] : memref<?xi8> to memref<128x60xbf16>
  linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]} ins(%x : memref<128x60xbf16>) outs(%y : memref<128x60xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %t = arith.mulf %a, %a : bf16
    linalg.yield %t : bf16
  }
  return
}
