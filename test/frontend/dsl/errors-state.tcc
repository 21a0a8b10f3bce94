# RUN: not tcc %s --batch=4 --dim T=5 2>&1 | FileCheck %s
# Tests that state is read only by batch_norm, that batch-norm statistics must be state, and that parameters are float tensors with positive dimensions and valid initializers.
const L = 2

fn bn(x, c) {
  param weight: [c] = ones
  param bias: [c] = zeros
  param mean: [c] = zeros
  state var: [c] = ones
  return batch_norm(x, weight, bias, mean, var)
}

model m(x: f32[B, 3, T, 4]) {
  let y = bn(x, 3) as bn1
  state extra: [3] = zeros
  let w = x + reshape(extra, [3, 1, 1])
  param r: [3] = uniform(1, 0)
  param p: i64[3] = zeros
  param q: [3, -1] = uniform(1, 0)
  output o = x
}

# CHECK: {{.*}}errors-state.tcc:10:38: error: running_mean must be declared with 'state' (running statistics are updated by the training step, not trained)
# CHECK: {{.*}}errors-state.tcc:14:11: note: in the call of 'bn' here
# CHECK: {{.*}}errors-state.tcc:17:18: error: uniform(low, high) needs low < high
# CHECK: {{.*}}errors-state.tcc:18:12: error: a parameter is a float tensor, not 'i64'
# CHECK: {{.*}}errors-state.tcc:19:16: error: dimension -1 of 'q' is not positive
# CHECK: {{.*}}errors-state.tcc:16:15: error: state 'extra' is read here; state holds batch-norm running statistics and is read only by batch_norm (use 'param' for a tensor that is trained)
