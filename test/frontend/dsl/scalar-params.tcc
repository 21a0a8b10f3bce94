# RUN: tcc %s --batch=2 --emit=mlir | FileCheck %s
# Tests that a scalar parameter takes any initializer: PyTorch's fan of a
# tensor without dimensions is 1 (the fan-in read the first dimension a
# scalar does not have: found by the DSL fuzzer).

model m(x: f32[B, 3]) {
  param s: [] = zeros
  param t: [] = kaiming_uniform(a = sqrt(5))
  param u: [] = xavier_normal
  output y = x * s + t * u
}

# CHECK: tcc.param = "s"
# CHECK: tcc.param = "t"
# CHECK: tcc.param = "u"
