// RUN: tcc-opt --split-input-file --tcc-mark-library-calls=sixteen-bit=true %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-mark-library-calls %s | FileCheck %s --check-prefix=OFF
// RUN: tcc-opt --split-input-file --tcc-mark-library-calls=sixteen-bit=true --tcc-plan-memory --tcc-lower-library-calls %s | FileCheck %s --check-prefix=LOWER

// 16-bit matmuls (sixteen-bit: the CPU and CUDA pipelines): a matmul of
// bf16 / f16 operands into f32 sums (tcc-lower-to-linalg
// sixteen-bit-matmuls) is a call of the operands' dtype (abi.h: BF16 = 4,
// F16 = 3); without the option it stays generated code.

// The rounding of the sums to bf16 right after the matmul, and nothing else
// reading them: the call writes the bf16 result itself (8 parameters, every
// operand bf16); the f32 sums, their fill and the rounding go.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func private @tcc_library_call_0(memref<4x10xbf16>, memref<10x8xbf16>, memref<4x8xbf16>)
// CHECK-LABEL: func.func @rounded
//   CHECK-NOT: linalg.fill
//       CHECK: call @tcc_library_call_0(%{{.*}}, %{{.*}}, %{{.*}}) {tcc.library_call = {dtype = 4 : i32, kind = 1 : i32, params = array<i64: 1, 4, 8, 10, 0, 0, 0, 0>}}
//   CHECK-NOT: linalg.generic
//   CHECK-NOT: memref.alloc() {{.*}} memref<4x8xf32>
// OFF-LABEL: func.func @rounded
//       OFF: linalg.matmul
// LOWER: module attributes {tcc.library_calls = [{dtype = 4 : i32, kind = 1 : i32, operands = 3 : i32, params = array<i64: 1, 4, 8, 10, 0, 0, 0, 0>}]}
func.func @rounded(%x: memref<4x10xbf16> {tcc.input = "x"}, %w: memref<10x8xbf16> {tcc.input = "w"})
    -> (memref<4x8xbf16> {tcc.output = "y"}) {
  %z = arith.constant 0.0 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul ins(%x, %w : memref<4x10xbf16>, memref<10x8xbf16>) outs(%c : memref<4x8xf32>)
  %y = memref.alloc() {alignment = 64 : i64} : memref<4x8xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<4x8xf32>) outs(%y : memref<4x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  return %y : memref<4x8xbf16>
}

// -----

// The sums are read by more than a rounding (a bias add in bf16 after it,
// fused): the call writes the f32 sums, C_DTYPE f32 (1) and MATH exact (0)
// appended; the generic stays and reads them. No epilogue for 16-bit calls.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func private @tcc_library_call_0(memref<4x10xbf16>, memref<10x8xbf16>, memref<4x8xf32>)
// CHECK-LABEL: func.func @biased
//       CHECK: call @tcc_library_call_0(%{{.*}}, %{{.*}}, %[[C:.*]]) {tcc.library_call = {dtype = 4 : i32, kind = 1 : i32, params = array<i64: 1, 4, 8, 10, 0, 0, 0, 0, 1, 0>}}
//       CHECK: linalg.generic {{.*}} ins(%[[C]], %{{.*}} : memref<4x8xf32>, memref<8xbf16>)
func.func @biased(%x: memref<4x10xbf16> {tcc.input = "x"}, %w: memref<10x8xbf16> {tcc.input = "w"},
                  %b: memref<8xbf16> {tcc.input = "b"}) -> (memref<4x8xbf16> {tcc.output = "y"}) {
  %z = arith.constant 0.0 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul ins(%x, %w : memref<4x10xbf16>, memref<10x8xbf16>) outs(%c : memref<4x8xf32>)
  %y = memref.alloc() {alignment = 64 : i64} : memref<4x8xbf16>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %b : memref<4x8xf32>, memref<8xbf16>) outs(%y : memref<4x8xbf16>) {
  ^bb0(%in: f32, %bias: bf16, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    %s = arith.addf %r, %bias : bf16
    linalg.yield %s : bf16
  }
  return %y : memref<4x8xbf16>
}

// -----

// A rounding whose sums something else reads too (the output): the sums
// stay f32 and the rounding stays a kernel.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @sums_read_later
//       CHECK: call @tcc_library_call_0({{.*}}) {tcc.library_call = {dtype = 4 : i32, kind = 1 : i32, params = array<i64: 1, 4, 8, 10, 0, 0, 0, 0, 1, 0>}} : (memref<4x10xbf16>, memref<10x8xbf16>, memref<4x8xf32>)
//       CHECK: linalg.generic
func.func @sums_read_later(%x: memref<4x10xbf16> {tcc.input = "x"}, %w: memref<10x8xbf16> {tcc.input = "w"})
    -> (memref<4x8xbf16> {tcc.output = "y"}, memref<4x8xf32> {tcc.output = "c"}) {
  %z = arith.constant 0.0 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul ins(%x, %w : memref<4x10xbf16>, memref<10x8xbf16>) outs(%c : memref<4x8xf32>)
  %y = memref.alloc() {alignment = 64 : i64} : memref<4x8xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<4x8xf32>) outs(%y : memref<4x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  return %y, %c : memref<4x8xbf16>, memref<4x8xf32>
}

// -----

// An f16 batch matmul whose rounding reads the sums through an expand_shape
// (the lowering's batch collapse undone): the call writes the 2x3x3x5 f16
// result itself.
#id3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func private @tcc_library_call_0(memref<6x3x4xf16>, memref<6x4x5xf16>, memref<2x3x3x5xf16>)
// CHECK-LABEL: func.func @batched_f16
//       CHECK: call @tcc_library_call_0({{.*}}) {tcc.library_call = {dtype = 3 : i32, kind = 1 : i32, params = array<i64: 6, 3, 5, 4, 0, 0, 0, 0>}}
//   CHECK-NOT: linalg.generic
func.func @batched_f16(%a: memref<6x3x4xf16> {tcc.input = "a"}, %b: memref<6x4x5xf16> {tcc.input = "b"})
    -> (memref<2x3x3x5xf16> {tcc.output = "y"}) {
  %z = arith.constant 0.0 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<6x3x5xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<6x3x5xf32>)
  linalg.batch_matmul ins(%a, %b : memref<6x3x4xf16>, memref<6x4x5xf16>) outs(%c : memref<6x3x5xf32>)
  %e = memref.expand_shape %c [[0, 1], [2], [3]] output_shape [2, 3, 3, 5] : memref<6x3x5xf32> into memref<2x3x3x5xf32>
  %y = memref.alloc() {alignment = 64 : i64} : memref<2x3x3x5xf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%e : memref<2x3x3x5xf32>) outs(%y : memref<2x3x3x5xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  }
  return %y : memref<2x3x3x5xf16>
}

// -----

// Operands of two 16-bit types (which the precision policy never makes)
// stay generated code.
// CHECK-LABEL: func.func @mixed_operands
//       CHECK: linalg.matmul
//   CHECK-NOT: call @tcc_library_call
func.func @mixed_operands(%x: memref<4x10xbf16> {tcc.input = "x"}, %w: memref<10x8xf16> {tcc.input = "w"})
    -> (memref<4x8xf32> {tcc.output = "c"}) {
  %z = arith.constant 0.0 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul ins(%x, %w : memref<4x10xbf16>, memref<10x8xf16>) outs(%c : memref<4x8xf32>)
  return %c : memref<4x8xf32>
}

// -----

// 16-bit convolutions (tcc-lower-to-linalg sixteen-bit-convs, the CPU
// pipeline): a forward convolution of a zero-padded bf16 input and a bf16
// filter into f32 sums whose rounding follows is one CONV2D call of dtype
// bf16 on the unpadded input that writes the bf16 result itself (18
// parameters); and its filter gradient, whose f32 sums something else reads
// (an optimizer in f32), is a CONV2D_BACKWARD_WEIGHTS call of dtype bf16
// with an f32 output: groups 1, math exact, OUT_DTYPE f32 appended (21).
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 * 2 + d2, d6 * 2 + d3)>
#g = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @conv_bf16
//  CHECK-SAME:   (%[[X:[a-z0-9]+]]: memref<2x3x6x6xbf16> {{[^,]*}}, %[[W:[a-z0-9]+]]: memref<4x3x3x3xbf16> {{[^,]*}}, %[[G:[a-z0-9]+]]: memref<2x4x3x3xbf16>
//   CHECK-NOT:   memref.copy
//       CHECK:   %[[Y:.+]] = memref.alloc() {{.*}} : memref<2x4x3x3xbf16>
//       CHECK:   call @tcc_library_call_0(%[[X]], %[[W]], %[[Y]]) {tcc.library_call = {dtype = 4 : i32, kind = 2 : i32, params = array<i64: 2, 3, 6, 6, 4, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0>}}
//       CHECK:   %[[DW:.+]] = memref.alloc() {{.*}} : memref<4x3x3x3xf32>
//       CHECK:   call @tcc_library_call_1(%[[X]], %[[G]], %[[DW]]) {tcc.library_call = {dtype = 4 : i32, kind = 6 : i32, params = array<i64: 2, 3, 6, 6, 4, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 1, 0, 1>}}
//   CHECK-NOT:   linalg.
// OFF-LABEL: func.func @conv_bf16
//       OFF:   linalg.conv_2d_nchw_fchw
//       OFF:   linalg.generic
// LOWER: module attributes {tcc.library_calls = [{dtype = 4 : i32, kind = 2 : i32, operands = 3 : i32, params = array<i64: 2, 3, 6, 6, 4, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0>}, {dtype = 4 : i32, kind = 6 : i32, operands = 3 : i32, params = array<i64: 2, 3, 6, 6, 4, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 1, 0, 1>}]}
func.func @conv_bf16(%x: memref<2x3x6x6xbf16> {tcc.input = "x"}, %w: memref<4x3x3x3xbf16> {tcc.input = "w"},
                     %g: memref<2x4x3x3xbf16> {tcc.input = "g"})
    -> (memref<2x4x3x3xbf16> {tcc.output = "y"}, memref<4x3x3x3xf32> {tcc.output = "dw"}) {
  %zero = arith.constant 0.0 : f32
  %zero16 = arith.constant 0.0 : bf16
  %p = memref.alloc() {alignment = 64 : i64} : memref<2x3x8x8xbf16>
  linalg.fill ins(%zero16 : bf16) outs(%p : memref<2x3x8x8xbf16>)
  %sv = memref.subview %p[0, 0, 1, 1] [2, 3, 6, 6] [1, 1, 1, 1] : memref<2x3x8x8xbf16> to memref<2x3x6x6xbf16, strided<[192, 64, 8, 1], offset: 9>>
  memref.copy %x, %sv : memref<2x3x6x6xbf16> to memref<2x3x6x6xbf16, strided<[192, 64, 8, 1], offset: 9>>
  %c = memref.alloc() {alignment = 64 : i64} : memref<2x4x3x3xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x4x3x3xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %w : memref<2x3x8x8xbf16>, memref<4x3x3x3xbf16>) outs(%c : memref<2x4x3x3xf32>)
  %y = memref.alloc() {alignment = 64 : i64} : memref<2x4x3x3xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : memref<2x4x3x3xf32>) outs(%y : memref<2x4x3x3xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %dw = memref.alloc() {alignment = 64 : i64} : memref<4x3x3x3xf32>
  linalg.fill ins(%zero : f32) outs(%dw : memref<4x3x3x3xf32>)
  linalg.generic {indexing_maps = [#x, #g, #w], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%p, %g : memref<2x3x8x8xbf16>, memref<2x4x3x3xbf16>) outs(%dw : memref<4x3x3x3xf32>)
      attrs = {tcc.conv_backward = {groups = 1 : i64, kind = 6 : i32, params = array<i64: 2, 3, 6, 6, 4, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0>}} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return %y, %dw : memref<2x4x3x3xbf16>, memref<4x3x3x3xf32>
}

// -----

// A 16-bit data gradient (the stride-2, pad-1 convolution from
// [1, 2, 5, 5] to [1, 3, 3, 3]) into f32 sums returned as they are:
// a CONV2D_BACKWARD_DATA call of dtype bf16 on dY and W themselves (the
// dilated and flipped copies go) with an f32 output (21 parameters), the
// zero fill of dX taken in (accumulate 0).
#flip = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2 + 2, -d3 + 2)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @backward_data_bf16
//  CHECK-SAME:   (%[[DY:[a-z0-9]+]]: memref<1x3x3x3xbf16> {{[^,]*}}, %[[W:[a-z0-9]+]]: memref<3x2x3x3xbf16>
//   CHECK-NOT:   linalg.generic
//       CHECK:   %[[DX:.+]] = memref.alloc() {{.*}} : memref<1x2x5x5xf32>
//   CHECK-NOT:   linalg.generic
//       CHECK:   call @tcc_library_call_0(%[[DY]], %[[W]], %[[DX]]) {tcc.library_call = {dtype = 4 : i32, kind = 5 : i32, params = array<i64: 1, 2, 5, 5, 3, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1>}}
//   CHECK-NOT:   linalg.
func.func @backward_data_bf16(%dy: memref<1x3x3x3xbf16> {tcc.input = "dy"}, %w: memref<3x2x3x3xbf16> {tcc.input = "w"})
    -> (memref<1x2x5x5xf32> {tcc.output = "dx"}) {
  %zero = arith.constant 0.0 : f32
  %zero16 = arith.constant 0.0 : bf16
  %buf = memref.alloc() : memref<1x3x7x7xbf16>
  linalg.fill ins(%zero16 : bf16) outs(%buf : memref<1x3x7x7xbf16>)
  %sv = memref.subview %buf[0, 0, 1, 1] [1, 3, 3, 3] [1, 1, 2, 2] : memref<1x3x7x7xbf16> to memref<1x3x3x3xbf16, strided<[147, 49, 14, 2], offset: 8>>
  memref.copy %dy, %sv : memref<1x3x3x3xbf16> to memref<1x3x3x3xbf16, strided<[147, 49, 14, 2], offset: 8>>
  %f = memref.alloc() : memref<2x3x3x3xbf16>
  linalg.generic {indexing_maps = [#flip, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<3x2x3x3xbf16>) outs(%f : memref<2x3x3x3xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  }
  %dx = memref.alloc() {alignment = 64 : i64} : memref<1x2x5x5xf32>
  linalg.fill ins(%zero : f32) outs(%dx : memref<1x2x5x5xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
      tcc.conv_backward = {groups = 1 : i64, kind = 5 : i32, params = array<i64: 1, 2, 5, 5, 3, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1>}}
      ins(%buf, %f : memref<1x3x7x7xbf16>, memref<2x3x3x3xbf16>) outs(%dx : memref<1x2x5x5xf32>)
  return %dx : memref<1x2x5x5xf32>
}
