# RUN: not tcc %s --batch=2 2>&1 | FileCheck %s
# Tests that a function calling itself twice stops at the call-depth limit
# with one error, at once: before the fix each of the 2^64 calls at the
# limit failed on its own and elaboration never ended (found by the fuzzer).
fn twice(x) {
  return twice(x) + twice(x)
}

model m(x: f32[B, 4]) {
  output y = twice(x)
}

# CHECK: {{.*}}errors-recursion.tcc:6:10: error: calls nested more than 64 deep (is 'twice' recursive?)
# CHECK-NOT: error:
