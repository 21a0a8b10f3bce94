# RUN: not tcc %s --batch=4 --dim L=3 --dim Q=2 2>&1 | FileCheck %s
# Tests the binding of symbolic dimensions and constants from the command line: unbound dimensions, --dim that binds nothing or overrides a non-integer, and invalid input types and dimensions.
const L = 2.5

model m(x: f32[B, 3, T, 4], ids: int64[N], z: f32[0, 2]) {
  output o = x
}

# CHECK: {{.*}}errors-bindings.tcc:3:7: error: --dim L=3 overrides a constant that is a number, not an integer
# CHECK: {{.*}}errors-bindings.tcc:5:22: error: dimension 'T' of input 'x' is symbolic; bind it with --dim T=N
# CHECK: {{.*}}errors-bindings.tcc:5:34: error: unknown element type 'int64'
# CHECK: {{.*}}errors-bindings.tcc:5:51: error: dimension 0 is not positive
# CHECK: {{.*}}errors-bindings.tcc:5:7: error: --dim Q binds nothing: the model has no such symbolic dimension or constant
