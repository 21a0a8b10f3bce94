// RUN: tcc-opt --split-input-file --tcc-cpu-library-calls=sixteen-bit=true %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-cpu-library-calls %s | FileCheck %s --check-prefix=OFF
// RUN: tcc-opt --split-input-file --tcc-cpu-library-calls=sixteen-bit=true --tcc-plan-memory --tcc-cpu-lower-library-calls %s | FileCheck %s --check-prefix=LOWER

// 16-bit matmuls on a device (sixteen-bit, the CUDA pipeline): a matmul of
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
