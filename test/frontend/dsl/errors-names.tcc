# RUN: not tcc %s --batch=4 2>&1 | FileCheck %s
# Tests name resolution errors (unknown and duplicate names with suggestions, call arity and keywords, misplaced statements), parameter re-declarations and the train block, all in one run.
const D = 8
const D = 9

fn relu(x) {
  return x
}

fn f(x, x) {
  return x
}

fn g(x) {
  return x
  let after = 1
}

fn h(x) {
  output o = x
  return x
}

fn bn(x, c) {
  param weight: [c] = ones
  param bias: [c] = zeros
  param mean: [c] = zeros
  state var: [c] = ones
  return batch_norm(x, weight, bias, mean, var)
}

fn lin(x, n) {
  param w: [n, n] = normal(0, 0.02, sed = 3)
  return x @ w
}

model m(x: f32[B, 8], x: f32[B, 8]) {
  let b = g(x, x, x)
  let c = g(x, y = 2)
  let d = g()
  let e = lin(x, 8) as l1
  let e = lin(x, 4) as l1
  let q = l1.weight
  let s = sofmax
  let t = softmax(x) as s1
  return x
  output o = x
}

train {
  loss = cross_entropi
  optimiser = adamw
  momentum = fast
}

# CHECK: {{.*}}errors-names.tcc:4:7: error: constant 'D' is defined twice
# CHECK: {{.*}}errors-names.tcc:6:4: error: function 'relu' has the name of a builtin; choose another name
# CHECK: {{.*}}errors-names.tcc:10:9: error: parameter 'x' is listed twice
# CHECK: {{.*}}errors-names.tcc:15:3: error: 'return' must be the last statement of the function
# CHECK: {{.*}}errors-names.tcc:17:1: error: function 'g' must end with 'return' and the value it computes
# CHECK: {{.*}}errors-names.tcc:20:3: error: 'output' belongs in the model; a function returns its value
# CHECK: {{.*}}errors-names.tcc:33:37: error: 'normal' has no parameter 'sed'; did you mean 'std'?
# CHECK: {{.*}}errors-names.tcc:37:23: error: input 'x' is declared twice
# CHECK: {{.*}}errors-names.tcc:38:16: error: 'g' takes 1 argument, got 3
# CHECK: {{.*}}errors-names.tcc:39:16: error: 'g' has no parameter 'y'; did you mean 'x'?
# CHECK: {{.*}}errors-names.tcc:40:11: error: 'g' needs its argument 'x'
# CHECK: {{.*}}errors-names.tcc:42:7: error: variable 'e' is already defined in this block; assign it with 'e = ...'
# CHECK: {{.*}}errors-names.tcc:41:7: note: defined here
# CHECK: {{.*}}errors-names.tcc:44:11: error: unknown name 'sofmax'; did you mean 'softmax'?
# CHECK: {{.*}}errors-names.tcc:45:25: error: 'softmax' is a builtin and declares no parameters; 'as' names the parameters of a function of this file
# CHECK: {{.*}}errors-names.tcc:46:3: error: a model names its results with 'output NAME = ...', not 'return'
# CHECK: {{.*}}errors-names.tcc:33:9: error: parameter 'l1.w' is declared again as f32[4, 4]; it is f32[8, 8]
# CHECK: {{.*}}errors-names.tcc:42:11: note: in the call of 'lin' here
# CHECK: {{.*}}errors-names.tcc:33:9: note: first declared here
# CHECK: {{.*}}errors-names.tcc:43:14: error: no parameter 'l1.weight' has been declared
# CHECK: {{.*}}errors-names.tcc:51:10: error: unknown loss 'cross_entropi'; did you mean 'cross_entropy'?
# CHECK: {{.*}}errors-names.tcc:52:3: error: unknown training setting 'optimiser'; did you mean 'optimizer'?
# CHECK: {{.*}}errors-names.tcc:53:14: error: 'momentum' takes a number
