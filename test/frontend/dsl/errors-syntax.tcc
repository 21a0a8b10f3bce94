# RUN: not tcc %s --batch=4 2>&1 | FileCheck %s
# Tests that lexical and syntax errors are reported each at its position, and the parser recovers at the next statement or declaration.
const A = 3 $ 4
const BIG = 99999999999999999999999

fn f(x, x) {
  let y = (x + 1
  let z = x +* 2
  return y
}

fn g(x) {
  return x
  let after = 1
}

fn g(x) {
  output o = x
  return x @
}

model m(x: f32[B, 4]) {
  let a = 1 < 2 < 3
  let b = f(x, x, x)
  let c = f(x, y = 2)
  let d = g()
  let e = 12abc
  return x
  let a = 2
  output o = x
}

model second(x: f32[4]) {
  output o = x
}

# CHECK: {{.*}}errors-syntax.tcc:3:13: error: unexpected character '$'
# CHECK-NEXT: {{^}}const A = 3 $ 4
# CHECK-NEXT: {{^}}            ^
# CHECK: {{.*}}errors-syntax.tcc:4:13: error: integer '99999999999999999999999' does not fit in 64 bits
# CHECK: {{.*}}errors-syntax.tcc:8:3: error: expected ')' to close the parenthesis, found 'let'
# CHECK: {{.*}}errors-syntax.tcc:19:13: error: expected an expression, found end of line
# CHECK: {{.*}}errors-syntax.tcc:23:17: error: comparisons do not chain; combine them with 'and'
# CHECK: {{.*}}errors-syntax.tcc:27:11: error: invalid number '12abc'
