// RUN: tcc-opt --split-input-file --tcc-filter-layouts %s | FileCheck %s

// Tests a training step's filter set: the parameter W (state offset 0) is
// the filter of the forward and data-gradient calls, its gradient G (an
// arena buffer) the output of the weight-gradient call; the SGD update
// reads W, G and the momentum M (state offset 1024) elementwise and writes
// W and M, a gradient norm sums G's squares, and infer reads W through a
// reshape. All three calls get the set's number, the module lists W and M;
// the arena's input x and the bias B (read per channel) stay out.
// CHECK-LABEL: module attributes {tcc.filter_layouts = {{\[\["w", "w.momentum_buffer"\]\]}}}
// CHECK-LABEL: func.func @train_step
//       CHECK:   call @tcc_library_call_0({{.*}}) {tcc.library_call = {filter_layout = 0 : i64, kind = 2 : i32
//       CHECK:   call @tcc_library_call_1({{.*}}) {tcc.library_call = {filter_layout = 0 : i64, kind = 5 : i32
//       CHECK:   call @tcc_library_call_2({{.*}}) {tcc.library_call = {filter_layout = 0 : i64, kind = 6 : i32
// CHECK-LABEL: func.func @infer
//       CHECK:   call @tcc_library_call_3({{.*}}) {tcc.library_call = {filter_layout = 0 : i64, kind = 2 : i32
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#scalar = affine_map<(d0, d1, d2, d3) -> ()>
#channel = affine_map<(d0, d1, d2, d3) -> (d1)>
module {
  func.func private @tcc_library_call_0(memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>)
  func.func private @tcc_library_call_1(memref<2x16x4x4xf32>, memref<16x8x3x3xf32>, memref<2x8x4x4xf32>)
  func.func private @tcc_library_call_2(memref<2x8x4x4xf32>, memref<2x16x4x4xf32>, memref<16x8x3x3xf32>)
  func.func private @tcc_library_call_3(memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>)
  func.func @train_step(%arena: memref<?xi8>, %state: memref<?xi8>) attributes {tcc.plan = [
      {element_type = f32, name = "x", offset = 0 : i64, region = "arena", role = "input", shape = array<i64: 2, 8, 4, 4>, size = 1024 : i64},
      {element_type = f32, name = "w", offset = 0 : i64, region = "state", role = "param", shape = array<i64: 16, 8, 3, 3>, size = 4608 : i64},
      {element_type = f32, name = "w.momentum_buffer", offset = 5120 : i64, region = "state", role = "state", shape = array<i64: 16, 8, 3, 3>, size = 4608 : i64},
      {element_type = f32, name = "b", offset = 9728 : i64, region = "state", role = "param", shape = array<i64: 16>, size = 64 : i64}]} {
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %c2048 = arith.constant 2048 : index
    %c3072 = arith.constant 3072 : index
    %c8192 = arith.constant 8192 : index
    %c5120 = arith.constant 5120 : index
    %c9728 = arith.constant 9728 : index
    %c12800 = arith.constant 12800 : index
    %lr = arith.constant 0.1 : f32
    %x = memref.view %arena[%c0][] : memref<?xi8> to memref<2x8x4x4xf32>
    %y = memref.view %arena[%c1024][] : memref<?xi8> to memref<2x16x4x4xf32>
    %dy = memref.view %arena[%c2048][] : memref<?xi8> to memref<2x16x4x4xf32>
    %dx = memref.view %arena[%c3072][] : memref<?xi8> to memref<2x8x4x4xf32>
    %g = memref.view %arena[%c8192][] : memref<?xi8> to memref<16x8x3x3xf32>
    %norm = memref.view %arena[%c12800][] : memref<?xi8> to memref<f32>
    %w = memref.view %state[%c0][] : memref<?xi8> to memref<16x8x3x3xf32>
    %m = memref.view %state[%c5120][] : memref<?xi8> to memref<16x8x3x3xf32>
    %b = memref.view %state[%c9728][] : memref<?xi8> to memref<16xf32>
    call @tcc_library_call_0(%x, %w, %y) {tcc.library_call = {kind = 2 : i32, params = array<i64: 2, 8, 4, 4, 16, 3, 3, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0>}} : (memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>) -> ()
    linalg.generic {indexing_maps = [#id, #channel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %b : memref<2x16x4x4xf32>, memref<16xf32>) outs(%dy : memref<2x16x4x4xf32>) {
    ^bb0(%a: f32, %c: f32, %out: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    }
    call @tcc_library_call_1(%dy, %w, %dx) {tcc.library_call = {kind = 5 : i32, params = array<i64: 2, 8, 4, 4, 16, 3, 3, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0>}} : (memref<2x16x4x4xf32>, memref<16x8x3x3xf32>, memref<2x8x4x4xf32>) -> ()
    call @tcc_library_call_2(%x, %dy, %g) {tcc.library_call = {kind = 6 : i32, params = array<i64: 2, 8, 4, 4, 16, 3, 3, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0>}} : (memref<2x8x4x4xf32>, memref<2x16x4x4xf32>, memref<16x8x3x3xf32>) -> ()
    linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%g : memref<16x8x3x3xf32>) outs(%norm : memref<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %g, %m : memref<16x8x3x3xf32>, memref<16x8x3x3xf32>, memref<16x8x3x3xf32>) outs(%w, %m : memref<16x8x3x3xf32>, memref<16x8x3x3xf32>) {
    ^bb0(%pw: f32, %pg: f32, %pm: f32, %ow: f32, %om: f32):
      %nm = arith.addf %pm, %pg : f32
      %step = arith.mulf %nm, %lr : f32
      %nw = arith.subf %pw, %step : f32
      linalg.yield %nw, %nm : f32, f32
    }
    return
  }
  func.func @infer(%arena: memref<?xi8>, %state: memref<?xi8>) attributes {tcc.plan = [
      {element_type = f32, name = "x", offset = 0 : i64, region = "arena", role = "input", shape = array<i64: 2, 8, 4, 4>, size = 1024 : i64},
      {element_type = f32, name = "w", offset = 0 : i64, region = "state", role = "param", shape = array<i64: 16, 8, 3, 3>, size = 4608 : i64},
      {element_type = f32, name = "y", offset = 1024 : i64, region = "arena", role = "output", shape = array<i64: 2, 16, 4, 4>, size = 2048 : i64}]} {
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %x = memref.view %arena[%c0][] : memref<?xi8> to memref<2x8x4x4xf32>
    %y = memref.view %arena[%c1024][] : memref<?xi8> to memref<2x16x4x4xf32>
    %w = memref.view %state[%c0][] : memref<?xi8> to memref<1152xf32>
    %w4 = memref.expand_shape %w [[0, 1, 2, 3]] output_shape [16, 8, 3, 3] : memref<1152xf32> into memref<16x8x3x3xf32>
    call @tcc_library_call_3(%x, %w4, %y) {tcc.library_call = {kind = 2 : i32, params = array<i64: 2, 8, 4, 4, 16, 3, 3, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0>}} : (memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>) -> ()
    return
  }
}

// -----

// Tests the uses that keep a filter plain: a subview of it (W, the taps a
// small map reaches), a per-channel factor in its update (V), a constant
// it is combined with (U), an entry output it is copied into (T), and a
// grouped convolution (S).
// CHECK-LABEL: module {
//   CHECK-NOT:   filter_layout
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d0)>
module {
  memref.global "private" constant @mask : memref<16x8x3x3xf32> = dense<1.0>
  func.func private @tcc_library_call_0(memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>)
  func.func private @tcc_library_call_1(memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>)
  func.func private @tcc_library_call_2(memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>)
  func.func private @tcc_library_call_3(memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>)
  func.func private @tcc_library_call_4(memref<2x16x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>)
  func.func @train_step(%arena: memref<?xi8>, %state: memref<?xi8>) attributes {tcc.plan = [
      {element_type = f32, name = "w", offset = 0 : i64, region = "state", role = "param", shape = array<i64: 16, 8, 3, 3>, size = 4608 : i64},
      {element_type = f32, name = "v", offset = 5120 : i64, region = "state", role = "param", shape = array<i64: 16, 8, 3, 3>, size = 4608 : i64},
      {element_type = f32, name = "u", offset = 10240 : i64, region = "state", role = "param", shape = array<i64: 16, 8, 3, 3>, size = 4608 : i64},
      {element_type = f32, name = "t", offset = 15360 : i64, region = "state", role = "param", shape = array<i64: 16, 8, 3, 3>, size = 4608 : i64},
      {element_type = f32, name = "s", offset = 20480 : i64, region = "state", role = "param", shape = array<i64: 16, 8, 3, 3>, size = 4608 : i64},
      {element_type = f32, name = "scale", offset = 25600 : i64, region = "state", role = "param", shape = array<i64: 16>, size = 64 : i64},
      {element_type = f32, name = "copy", offset = 8192 : i64, region = "arena", role = "output", shape = array<i64: 16, 8, 3, 3>, size = 4608 : i64}]} {
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %c5120 = arith.constant 5120 : index
    %c8192 = arith.constant 8192 : index
    %c10240 = arith.constant 10240 : index
    %c15360 = arith.constant 15360 : index
    %c20480 = arith.constant 20480 : index
    %c25600 = arith.constant 25600 : index
    %x = memref.view %arena[%c0][] : memref<?xi8> to memref<2x8x4x4xf32>
    %y = memref.view %arena[%c1024][] : memref<?xi8> to memref<2x16x4x4xf32>
    %copy = memref.view %arena[%c8192][] : memref<?xi8> to memref<16x8x3x3xf32>
    %w = memref.view %state[%c0][] : memref<?xi8> to memref<16x8x3x3xf32>
    %v = memref.view %state[%c5120][] : memref<?xi8> to memref<16x8x3x3xf32>
    %u = memref.view %state[%c10240][] : memref<?xi8> to memref<16x8x3x3xf32>
    %t = memref.view %state[%c15360][] : memref<?xi8> to memref<16x8x3x3xf32>
    %s = memref.view %state[%c20480][] : memref<?xi8> to memref<16x8x3x3xf32>
    %scale = memref.view %state[%c25600][] : memref<?xi8> to memref<16xf32>
    %mask = memref.get_global @mask : memref<16x8x3x3xf32>
    %cst0 = arith.constant 0.0 : f32
    call @tcc_library_call_0(%x, %w, %y) {tcc.library_call = {kind = 2 : i32, params = array<i64: 2, 8, 4, 4, 16, 3, 3, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0>}} : (memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>) -> ()
    %taps = memref.subview %w[0, 0, 1, 1] [16, 8, 2, 2] [1, 1, 1, 1] : memref<16x8x3x3xf32> to memref<16x8x2x2xf32, strided<[72, 9, 3, 1], offset: 4>>
    linalg.fill ins(%cst0 : f32) outs(%taps : memref<16x8x2x2xf32, strided<[72, 9, 3, 1], offset: 4>>)
    call @tcc_library_call_1(%x, %v, %y) {tcc.library_call = {kind = 2 : i32, params = array<i64: 2, 8, 4, 4, 16, 3, 3, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0>}} : (memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>) -> ()
    linalg.generic {indexing_maps = [#id, #out, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v, %scale : memref<16x8x3x3xf32>, memref<16xf32>) outs(%v : memref<16x8x3x3xf32>) {
    ^bb0(%a: f32, %f: f32, %o: f32):
      %p = arith.mulf %a, %f : f32
      linalg.yield %p : f32
    }
    call @tcc_library_call_2(%x, %u, %y) {tcc.library_call = {kind = 2 : i32, params = array<i64: 2, 8, 4, 4, 16, 3, 3, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0>}} : (memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>) -> ()
    linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%u, %mask : memref<16x8x3x3xf32>, memref<16x8x3x3xf32>) outs(%u : memref<16x8x3x3xf32>) {
    ^bb0(%a: f32, %k: f32, %o: f32):
      %p = arith.mulf %a, %k : f32
      linalg.yield %p : f32
    }
    call @tcc_library_call_3(%x, %t, %y) {tcc.library_call = {kind = 2 : i32, params = array<i64: 2, 8, 4, 4, 16, 3, 3, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0>}} : (memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>) -> ()
    memref.copy %t, %copy : memref<16x8x3x3xf32> to memref<16x8x3x3xf32>
    call @tcc_library_call_4(%y, %s, %y) {tcc.library_call = {kind = 2 : i32, params = array<i64: 2, 16, 4, 4, 16, 3, 3, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2>}} : (memref<2x16x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>) -> ()
    return
  }
}

// -----

// Tests that a data-parallel step (one with collectives) is left plain.
// CHECK-LABEL: module {
//   CHECK-NOT:   filter_layout
module {
  func.func private @tcc_library_call_0(memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>)
  func.func private @tcc_collective_0(memref<16x8x3x3xf32>)
  func.func @train_step(%arena: memref<?xi8>, %state: memref<?xi8>) attributes {tcc.plan = [
      {element_type = f32, name = "w", offset = 0 : i64, region = "state", role = "param", shape = array<i64: 16, 8, 3, 3>, size = 4608 : i64}]} {
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %x = memref.view %arena[%c0][] : memref<?xi8> to memref<2x8x4x4xf32>
    %y = memref.view %arena[%c1024][] : memref<?xi8> to memref<2x16x4x4xf32>
    %w = memref.view %state[%c0][] : memref<?xi8> to memref<16x8x3x3xf32>
    call @tcc_library_call_0(%x, %w, %y) {tcc.library_call = {kind = 2 : i32, params = array<i64: 2, 8, 4, 4, 16, 3, 3, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0>}} : (memref<2x8x4x4xf32>, memref<16x8x3x3xf32>, memref<2x16x4x4xf32>) -> ()
    call @tcc_collective_0(%w) {tcc.collective = {kind = 1 : i32, id = 0 : i64, params = array<i64: 0, 1152>}} : (memref<16x8x3x3xf32>) -> ()
    return
  }
}
