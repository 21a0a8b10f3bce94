// RUN: tcc-opt --split-input-file --tcc-split-shared-empties="max-writers=4 run-length=2" %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-split-shared-empties %s | FileCheck %s --check-prefix=DEFAULT

#id = affine_map<(d0) -> (d0)>

// Tests that five writers of one empty tensor (more than four) become runs of
// two in program order, each run with its own empty; reads are left alone.
// CHECK-LABEL: func.func @chain
// CHECK: %[[E0:.+]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[A:.+]] = linalg.generic {{.*}} outs(%[[E0]] :
// CHECK: %[[B:.+]] = linalg.generic {{.*}} ins(%[[A]] : {{.*}} outs(%[[E0]] :
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[C:.+]] = linalg.generic {{.*}} ins(%[[B]] : {{.*}} outs(%[[E1]] :
// CHECK: %[[D:.+]] = linalg.generic {{.*}} ins(%[[C]], %[[E0]] : {{.*}} outs(%[[E1]] :
// CHECK: %[[E2:.+]] = tensor.empty() : tensor<8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[D]] : {{.*}} outs(%[[E2]] :
// With the default (more than 512 writers) nothing changes.
// DEFAULT-LABEL: func.func @chain
// DEFAULT-COUNT-1: tensor.empty
// DEFAULT-NOT: tensor.empty
func.func @chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.absf %v : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%c, %e : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %t = arith.addf %v, %w : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %f = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%d : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.absf %v : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %f : tensor<8xf32>
}
