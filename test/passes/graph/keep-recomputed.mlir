// RUN: tcc-opt --split-input-file --tcc-keep-recomputed --cse %s | FileCheck %s
// RUN: tcc-opt --split-input-file --cse %s | FileCheck %s --check-prefix=MERGED

#id = affine_map<(d0) -> (d0)>

// Tests that an op recomputed by tcc-rematerialize (its location says so)
// keeps the mark as an attribute, so that CSE keeps it apart from the value
// it recomputes; without the pass, CSE merges the two.
// CHECK-LABEL: func.func @kept_apart
//       CHECK:   %[[A:.+]] = linalg.generic
//   CHECK-NOT:   tcc.recomputed
//       CHECK:   %[[B:.+]] = linalg.generic {{.*}}tcc.recomputed = 3 : i64
//       CHECK:   return %[[A]], %[[B]]
// MERGED-LABEL: func.func @kept_apart
//       MERGED:   %[[A:.+]] = linalg.generic
//   MERGED-NOT:   linalg.generic
//       MERGED:   return %[[A]], %[[A]]
func.func @kept_apart(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32> loc("h")
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32> loc(fused<{tcc.recomputed = 3 : i64}>["h"])
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}
