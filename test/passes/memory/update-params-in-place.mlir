// RUN: tcc-opt --split-input-file --tcc-update-params-in-place %s | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// Tests that an update that reads the parameter element by element as it
// writes it takes the parameter as its destination.
// CHECK-LABEL: func.func @reads_in_place
// CHECK-SAME: (%[[P:.+]]: tensor<4x4xf32> {tcc.param = "p"}, %[[G:.+]]: tensor<4x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[P]], %[[G]] : {{.*}}) outs(%[[P]] : tensor<4x4xf32>)
func.func @reads_in_place(%p: tensor<4x4xf32> {tcc.param = "p"}, %g: tensor<4x4xf32> {tcc.input = "g"})
    -> (tensor<4x4xf32> {tcc.update = "p"}) {
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Tests that the last op of an unfused update chain, which does not read the
// parameter itself but comes after every op that does, writes over it.
// CHECK-LABEL: func.func @after_every_reader
// CHECK-SAME: (%[[P:.+]]: tensor<4x4xf32> {tcc.param = "p"}
// CHECK: %[[T:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<4x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[T]], %{{.+}} : {{.*}}) outs(%[[P]] : tensor<4x4xf32>)
func.func @after_every_reader(%p: tensor<4x4xf32> {tcc.param = "p"}, %g: tensor<4x4xf32> {tcc.input = "g"})
    -> (tensor<4x4xf32> {tcc.update = "p"}) {
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 0.5 : f32
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// Tests that an update reading the parameter transposed keeps its own
// destination (writing in place would overwrite elements still to be read).
// CHECK-LABEL: func.func @reads_transposed
// CHECK: %[[E:.+]] = tensor.empty
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<4x4xf32>)
func.func @reads_transposed(%p: tensor<4x4xf32> {tcc.param = "p"}, %g: tensor<4x4xf32> {tcc.input = "g"})
    -> (tensor<4x4xf32> {tcc.update = "p"}) {
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#tr, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %g : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Tests that an update computed before a later reader of the old value keeps
// its own destination.
// CHECK-LABEL: func.func @read_later
// CHECK: %[[E:.+]] = tensor.empty
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<4x4xf32>)
func.func @read_later(%p: tensor<4x4xf32> {tcc.param = "p"}, %g: tensor<4x4xf32> {tcc.input = "g"})
    -> (tensor<4x4xf32> {tcc.update = "p"}, tensor<4x4xf32> {tcc.output = "old"}) {
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %later = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  return %r, %later : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Tests that a multi-output kernel (two parameters' updates merged as
// siblings reading the same gradient) writes each update over its own
// parameter.
// CHECK-LABEL: func.func @multi_output_update
// CHECK-SAME: (%[[P:.+]]: tensor<4x4xf32> {tcc.param = "p"}, %[[Q:.+]]: tensor<4x4xf32> {tcc.param = "q"}
// CHECK: linalg.generic {{.*}} outs(%[[P]], %[[Q]] : tensor<4x4xf32>, tensor<4x4xf32>)
func.func @multi_output_update(%p: tensor<4x4xf32> {tcc.param = "p"}, %q: tensor<4x4xf32> {tcc.param = "q"},
                               %g: tensor<4x4xf32> {tcc.input = "g"})
    -> (tensor<4x4xf32> {tcc.update = "p"}, tensor<4x4xf32> {tcc.update = "q"}) {
  %e = tensor.empty() : tensor<4x4xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %q, %g : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) outs(%e, %e : tensor<4x4xf32>, tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32, %o2: f32):
    %s = arith.subf %a, %c : f32
    %t = arith.addf %b, %c : f32
    linalg.yield %s, %t : f32, f32
  } -> (tensor<4x4xf32>, tensor<4x4xf32>)
  return %r#0, %r#1 : tensor<4x4xf32>, tensor<4x4xf32>
}
