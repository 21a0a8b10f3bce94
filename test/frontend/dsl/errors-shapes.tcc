# RUN: not tcc %s --batch=4 2>&1 | FileCheck %s
# Tests that shape and type errors are reported at the expression that causes them, one per statement, including inside a called function (with a note at the call).
fn linear(x, n_in, n_out) {
  param weight: [n_out, n_in] = kaiming_uniform(a = sqrt(5))
  param bias: [n_out] = zeros
  return x @ weight.T + bias
}

model m(x: f32[B, 784], t: i64[B]) {
  let h = relu(linear(x, 784, 128) as fc1)
  let g = linear(h, 100, 10) as fc2
  let w = h + t
  let q = h[0, 5, 1]
  let r = reshape(h, [3, 7])
  let u = h.shape[7]
  let v = sum(h, axes = [4])
  let k = layer_norm(h, h)
  let c = concat([h, x], axis = 0)
  let p = max_pool(h, 2)
  let d = dropout(h, p = 1.5)
  let s1, s2 = split(h, 3)
  let e = h[:, 200:]
  let f = transpose(h, [0, 0])
  let j = conv(x, x)
  let l = h + [1, 2]
  let m2 = h.shap
  if h { let zz = 1 }
  for i in 0..x { let yy = 1 }
  output logits = h @ x
}

# CHECK: {{.*}}errors-shapes.tcc:6:12: error: '@' contracts dimension 128 of f32[4, 128] with dimension 100 of f32[100, 10]
# CHECK: {{.*}}errors-shapes.tcc:11:11: note: in the call of 'linear' here
# CHECK: {{.*}}errors-shapes.tcc:12:13: error: the operands of '+' have element types f32 and i64; convert one with cast(x, f32)
# CHECK: {{.*}}errors-shapes.tcc:13:12: error: too many subscripts (3) for f32[4, 128]
# CHECK: {{.*}}errors-shapes.tcc:14:22: error: cannot reshape f32[4, 128] (512 elements) to [3, 7]
# CHECK: {{.*}}errors-shapes.tcc:15:19: error: index 7 is out of range for a list of 2
# CHECK: {{.*}}errors-shapes.tcc:16:25: error: axis 4 is out of range for rank 2
# CHECK: {{.*}}errors-shapes.tcc:17:25: error: layer_norm over f32[4, 128] from axis 1 needs a weight of shape [128], not f32[4, 128]
# CHECK: {{.*}}errors-shapes.tcc:18:18: error: concat along axis 0: f32[4, 784] does not fit f32[4, 128]
# CHECK: {{.*}}errors-shapes.tcc:19:20: error: pooling needs a numeric [N, C, spatial...] tensor, not f32[4, 128]
# CHECK: {{.*}}errors-shapes.tcc:20:26: error: the dropout probability must be in [0, 1), got 1.500000e+00
# CHECK: {{.*}}errors-shapes.tcc:21:25: error: cannot split dimension 1 of f32[4, 128] into 3 equal parts
# CHECK: {{.*}}errors-shapes.tcc:22:16: error: the slice selects nothing from dimension 1 of size 128
# CHECK: {{.*}}errors-shapes.tcc:23:24: error: the permutation [0, 0] is not one of the 2 dimensions of f32[4, 128]
# CHECK: {{.*}}errors-shapes.tcc:24:11: error: conv needs an input [N, C, spatial...] and a weight [M, C/groups, kernel...] of one rank and type; got f32[4, 784] and f32[4, 784]
# CHECK: {{.*}}errors-shapes.tcc:25:13: error: '+' needs tensors or numbers, not a list
# CHECK: {{.*}}errors-shapes.tcc:26:14: error: a tensor has no member 'shap'; did you mean 'shape'?
# CHECK: {{.*}}errors-shapes.tcc:27:6: error: the condition of 'if' must be known when compiling (a boolean or an integer), not a tensor; select between tensors with where()
# CHECK: {{.*}}errors-shapes.tcc:28:15: error: the end of the range must be an integer known when compiling, not a tensor
# CHECK: {{.*}}errors-shapes.tcc:29:21: error: '@' contracts dimension 128 of f32[4, 128] with dimension 4 of f32[4, 784]
