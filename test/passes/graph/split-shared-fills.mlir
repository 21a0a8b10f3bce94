// RUN: tcc-opt --split-input-file --tcc-split-shared-fills %s | FileCheck %s

// Tests that two matmuls accumulating into one shared zero fill get a fill
// each (after bufferization, no copy of the shared one per writer). The first
// writer in program order keeps the original fill; the later one gets its
// own right before it (not at the original's place, where the buffer would
// be live from there on: a backward product filled in the forward pass).
// CHECK-LABEL: func.func @shared_accumulator
// CHECK: %[[F1:.+]] = linalg.fill
// CHECK-NEXT: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8x4xf32>) outs(%[[F1]] : tensor<4x4xf32>)
// CHECK-NEXT: math.exp
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: %[[F2:.+]] = linalg.fill
// CHECK-NEXT: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8x4xf32>) outs(%[[F2]] : tensor<4x4xf32>)
func.func @shared_accumulator(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<8x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = math.exp %x : tensor<4x4xf32>
  %y = linalg.matmul ins(%a, %c : tensor<4x8xf32>, tensor<8x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %x, %y, %t : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Tests that a fill read as an input (not written) stays shared.
// CHECK-LABEL: func.func @read_fill
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @read_fill(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.add ins(%a, %f : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.sub ins(%f, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %x, %y : tensor<4x4xf32>, tensor<4x4xf32>
}
