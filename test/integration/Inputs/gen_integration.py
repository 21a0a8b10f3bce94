#!/usr/bin/env python3
"""gen_integration.py - writes the numeric tests of test/integration/.

Each test file holds one function per case: tcc ops on constant inputs,
lowered by %tcc_lower_to_llvm and executed by mlir-runner, with the results
printed through the runner utils and checked by FileCheck against values
computed here.

The oracle: naive reference implementations of every op in this file, in
float64 with the Python standard library only (no numpy), written from the op
descriptions in dialects/TccOps.td and, for Resize, from the ONNX reference
implementation's algorithm (coordinate transform, edge-padded neighbours,
exclude_outside); they share no code with the C++ lowering.

Inputs are random-looking multiples of 1/16 (exact in f32 and in decimal),
drawn from a seeded generator; never all zeros. Results are printed in one of
three ways:
  exact   f32 results that must match bit for bit (data movement, max, ...),
          printed with 6 significant digits;
  approx  f32 results rounded in the IR to a quantum q before printing:
          q = 10^(floor(log10(max|expected|)) - 3), i.e. 4 significant digits
          of the largest magnitude. The seed search below only accepts inputs
          whose every expected value lies at least 0.02 q away from a rounding
          boundary, so any error below 0.02 q passes (f32 rounding is far
          smaller) and any error above q / 2 fails. Each approx case states
          its q in a comment.
  int     integer and bool results, widened to i64 by tcc.cast, exact.

Regenerate after changing a case (deterministic; standard library only):
    python3 test/integration/Inputs/gen_integration.py
"""

import itertools
import math
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.dirname(HERE)

# --------------------------------------------------------------------------
# Tensors: a shape, a flat row-major list, an element type name.
# --------------------------------------------------------------------------


class T:
    def __init__(self, shape, data, dtype="f32"):
        self.shape = list(shape)
        self.data = list(data)
        self.dtype = dtype
        assert len(self.data) == numel(self.shape), (shape, len(data))

    def at(self, idx):
        return self.data[ravel(idx, self.shape)]


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def ravel(idx, shape):
    f = 0
    for i, s in zip(idx, shape):
        f = f * s + i
    return f


def all_idx(shape):
    return itertools.product(*[range(s) for s in shape])


def from_fn(shape, fn, dtype="f32"):
    return T(shape, [fn(i) for i in all_idx(shape)], dtype)


def is_float(dtype):
    return dtype in ("f16", "bf16", "f32", "f64")


def width(dtype):
    return int(dtype.lstrip("ui")) if dtype != "i1" else 1


def wrap_int(v, dtype):
    """Wraps v into the range of an integer type, like machine arithmetic."""
    if dtype == "i1":
        return v & 1
    w = width(dtype)
    v &= (1 << w) - 1
    if not dtype.startswith("ui") and v >= 1 << (w - 1):
        v -= 1 << w
    return v


def f32(x):
    """Rounds a double to the nearest f32 (inf beyond the range)."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def rand_t(rng, shape, lo=-2.0, hi=2.0, denom=16, dtype="f32", avoid=()):
    """Random multiples of 1/denom in [lo, hi], none in `avoid`."""
    vals = []
    a, b = int(math.ceil(lo * denom)), int(math.floor(hi * denom))
    while len(vals) < numel(shape):
        v = rng.randint(a, b) / denom
        if v not in avoid:
            vals.append(v)
    if all(v == 0 for v in vals):
        vals[0] = 1.0
    return T(shape, vals, dtype)


def rand_int(rng, shape, lo, hi, dtype):
    vals = [rng.randint(lo, hi) for _ in range(numel(shape))]
    if all(v == 0 for v in vals):
        vals[0] = 1
    return T(shape, vals, dtype)


# --------------------------------------------------------------------------
# MLIR text.
# --------------------------------------------------------------------------


def ty(t_or_shape, dtype=None):
    if isinstance(t_or_shape, T):
        shape, dtype = t_or_shape.shape, t_or_shape.dtype
    else:
        shape = t_or_shape
    return "tensor<" + "".join(f"{s}x" for s in shape) + dtype + ">"


def lit_scalar(v, dtype):
    if dtype == "i1":
        return "true" if v else "false"
    if not is_float(dtype):
        return str(int(v))
    if math.isnan(v):
        return "0x7FC00000"
    if math.isinf(v):
        return "0x7F800000" if v > 0 else "0xFF800000"
    s = repr(float(v))
    mant, _, exp = s.partition("e")
    if "." not in mant:
        mant += ".0"
    return mant + ("e" + exp if exp else "")


def lit(t):
    def rec(level, off):
        if level == len(t.shape):
            return lit_scalar(t.data[off], t.dtype)
        step = numel(t.shape[level + 1:])
        return "[" + ", ".join(rec(level + 1, off + i * step)
                               for i in range(t.shape[level])) + "]"
    return f"dense<{rec(0, 0)}> : {ty(t)}"


def arr(name, vals, kind="i64"):
    return f"{name} = array<{kind}: " + ", ".join(
        lit_scalar(v, "f64") if kind == "f64" else str(v) for v in vals) + ">"


def cpp_g(x):
    """How std::cout prints a float (%g, 6 significant digits)."""
    if math.isnan(x):
        return "{{-?}}nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    s = "%g" % x
    return s


# --------------------------------------------------------------------------
# Cases.
# --------------------------------------------------------------------------


class Reject(Exception):
    """The drawn inputs put an expected value too close to a rounding
    boundary; the seed search draws again."""


class Case:
    """One test: `body` (MLIR lines) computes %r0, %r1, ... from the inputs
    %a0, %a1, ...; `results` are (expected tensor, mode) pairs."""

    def __init__(self, name, comment, inputs, body, results):
        self.name, self.comment = name, comment
        self.inputs, self.body, self.results = inputs, body, results
        self.scales = []
        for exp, mode in results:
            self.scales.append(quantum_scale(exp) if mode == "approx" else None)
        for (exp, mode), s in zip(results, self.scales):
            if mode == "approx":
                check_margin(exp, s)


def quantum_scale(t):
    finite = [abs(v) for v in t.data if math.isfinite(v)]
    m = max(finite) if finite else 0.0
    if m == 0:
        return 10 ** 4
    return 10 ** max(0, 3 - math.floor(math.log10(m)))


def check_margin(t, scale):
    for v in t.data:
        if not math.isfinite(v):
            continue
        y = v * scale
        frac = y - math.floor(y)
        if abs(frac - 0.5) < 0.02:
            raise Reject()


def expected_line(t, mode, scale):
    if mode == "int":
        return "[" + ", ".join(str(int(v)) for v in t.data) + "]"
    if mode == "exact":
        return "[" + ", ".join(cpp_g(f32(v)) for v in t.data) + "]"
    out = []
    for v in t.data:
        if not math.isfinite(v):
            out.append(cpp_g(v))
            continue
        k = round(v * scale)
        out.append(cpp_g(f32(k / scale)) if k else "0")
    return "[" + ", ".join(out) + "]"


def flatten(lines, value, t, tmp):
    """Emits the IR that turns `value` (of t's type, widened to i64 for
    integers) into a 1-D dynamic tensor; returns its name and type."""
    et = "f32" if t.dtype == "f32" else "i64"
    v = value
    if et == "i64" and t.dtype != "i64":
        lines.append(f"  %{tmp}w = tcc.cast {v} : {ty(t)} to {ty(t.shape, 'i64')}")
        v = f"%{tmp}w"
    n = numel(t.shape)
    if len(t.shape) == 0:
        lines.append(f"  %{tmp}f = tensor.expand_shape {v} [] output_shape [1]"
                     f" : {ty([], et)} into {ty([1], et)}")
        v = f"%{tmp}f"
    elif len(t.shape) > 1:
        group = ", ".join(str(i) for i in range(len(t.shape)))
        lines.append(f"  %{tmp}f = tensor.collapse_shape {v} [[{group}]]"
                     f" : {ty(t.shape, et)} into {ty([n], et)}")
        v = f"%{tmp}f"
    lines.append(f"  %{tmp}d = tensor.cast {v} : {ty([n], et)} to tensor<?x{et}>")
    return f"%{tmp}d", et


def emit_case(c):
    lines = [f"// {line}" for line in c.comment.split("\n")]
    for i, ((exp, mode), s) in enumerate(zip(c.results, c.scales)):
        if mode == "approx":
            lines.append(f"// Result #{i} is printed rounded to q = {1 / s:g}.")
    for i, (exp, mode) in enumerate(c.results):
        lines.append(f"// CHECK-LABEL: case {c.name} #{i}")
        lines.append("//  CHECK-NEXT: Unranked Memref {{.*}} data =")
        lines.append(f"//  CHECK-NEXT: {expected_line(exp, mode, c.scales[i])}")
    lines.append(f"func.func @{c.name}() {{")
    for i, t in enumerate(c.inputs):
        lines.append(f"  %a{i} = tcc.constant {lit(t)}")
    for b in c.body:
        lines.append("  " + b)
    for i, (exp, mode) in enumerate(c.results):
        v, et = flatten(lines, f"%r{i}", exp, f"p{i}")
        lines.append(f'  vector.print str "case {c.name} #{i}\\n"')
        if et == "i64":
            lines.append(f"  call @show_i64({v}) : (tensor<?xi64>) -> ()")
        elif mode == "exact":
            lines.append(f"  call @show_f32({v}) : (tensor<?xf32>) -> ()")
        else:
            lines.append(f"  %q{i} = arith.constant {float(c.scales[i])!r} : f32")
            lines.append(f"  call @show_rounded_f32({v}, %q{i})"
                         " : (tensor<?xf32>, f32) -> ()")
    lines.append("  return")
    lines.append("}")
    return "\n".join(lines)


PRELUDE = """\
func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI64(memref<*xi64>)

// Prints the values as they are.
func.func @show_f32(%t: tensor<?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?xf32> to memref<?xf32>
  %u = memref.cast %m : memref<?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

// Prints roundeven(x * scale) / scale + 0 (no -0) for each value.
func.func @show_rounded_f32(%t: tensor<?xf32>, %scale: f32) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %t, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%t : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.mulf %x, %scale : f32
    %r = math.roundeven %m : f32
    %d = arith.divf %r, %scale : f32
    %p = arith.addf %d, %zero : f32
    linalg.yield %p : f32
  } -> tensor<?xf32>
  call @show_f32(%q) : (tensor<?xf32>) -> ()
  return
}

func.func @show_i64(%t: tensor<?xi64>) {
  %m = bufferization.to_buffer %t : tensor<?xi64> to memref<?xi64>
  %u = memref.cast %m : memref<?xi64> to memref<*xi64>
  call @printMemrefI64(%u) : (memref<*xi64>) -> ()
  return
}
"""


def build(fn, name):
    """Runs a case builder with successive seeds until its approx results
    keep their distance from the rounding boundaries."""
    for seed in range(5000):
        try:
            return fn(random.Random(f"{name}/{seed}"))
        except Reject:
            continue
    raise RuntimeError(f"no seed found for {name}")


def write_file(fname, title, cases):
    parts = [
        f"// {title}",
        "//",
        "// Generated by Inputs/gen_integration.py (oracle and tolerances are",
        "// described there); edit the script, not this file.",
        "//",
        "// RUN: tcc-opt %s %tcc_lower_to_llvm \\",
        "// RUN: | mlir-runner -e main -entry-point-result=void %mlir_runner_libs \\",
        "// RUN: | FileCheck %s",
        "",
        PRELUDE,
    ]
    for c in cases:
        parts.append(emit_case(c))
        parts.append("")
    parts.append("func.func @main() {")
    for c in cases:
        parts.append(f"  call @{c.name}() : () -> ()")
    parts.append("  return")
    parts.append("}")
    with open(os.path.join(OUT_DIR, fname), "w") as f:
        f.write("\n".join(parts) + "\n")


# --------------------------------------------------------------------------
# Registry: builder functions grouped by output file.
# --------------------------------------------------------------------------

FILES = {}


def case(fname):
    def register(fn):
        FILES.setdefault(fname, []).append(fn)
        return fn
    return register


def unary_case(name, comment, op, x, fn, mode, attrs="", out_dtype=None):
    res = T(x.shape, [fn(v) for v in x.data], out_dtype or x.dtype)
    a = f" {attrs}" if attrs else ""
    return Case(name, comment, [x], [f"%r0 = tcc.{op} %a0{a} : {ty(x)}"],
                [(res, mode)])


def binary_case(name, comment, op, x, y, fn, mode):
    res = T(x.shape, [fn(a, b) for a, b in zip(x.data, y.data)], x.dtype)
    return Case(name, comment, [x, y], [f"%r0 = tcc.{op} %a0, %a1 : {ty(x)}"],
                [(res, mode)])


# ==========================================================================
# Elementwise
# ==========================================================================

EW = "elementwise.mlir"


def sigmoid(x):
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


def softplus(x):
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def sign(x):
    # Both zeros give +0 (tcc.sign's folder agrees).
    return x if math.isnan(x) else (1.0 if x > 0 else (-1.0 if x < 0 else 0.0))


APPROX_UNARY = [
    ("exp", "exp", math.exp, (-3, 3)),
    ("tanh", "tanh", math.tanh, (-3, 3)),
    ("erf", "erf", math.erf, (-2.5, 2.5)),
    ("sin", "sin", math.sin, (-4, 4)),
    ("cos", "cos", math.cos, (-4, 4)),
    ("tan", "tan", math.tan, (-1.4, 1.4)),
    ("asin", "asin", math.asin, (-0.99, 0.99)),
    ("acos", "acos", math.acos, (-0.99, 0.99)),
    ("atan", "atan", math.atan, (-6, 6)),
    ("sinh", "sinh", math.sinh, (-4, 4)),
    ("cosh", "cosh", math.cosh, (-4, 4)),
    ("asinh", "asinh", math.asinh, (-6, 6)),
    ("acosh", "acosh", math.acosh, (1.01, 6)),
    ("atanh", "atanh", math.atanh, (-0.99, 0.99)),
    ("log", "log", math.log, (0.0625, 6)),
    ("sqrt", "sqrt", math.sqrt, (0.0625, 6)),
    ("rsqrt", "rsqrt", lambda v: 1 / math.sqrt(v), (0.0625, 6)),
    ("reciprocal", "reciprocal", lambda v: 1 / v, (0.25, 6)),
]

for _name, _op, _fn, (_lo, _hi) in APPROX_UNARY:
    def _mk(rng, name=_name, op=_op, fn=_fn, lo=_lo, hi=_hi):
        return unary_case(f"{name}_f32", f"Tests that tcc.{op} computes {name} of each element.",
                          op, rand_t(rng, [2, 4], lo, hi), fn, "approx")
    _mk.__name__ = _name
    case(EW)(_mk)


@case(EW)
def sigmoid_wide(rng):
    # Large |x| checks the stable form: 1 for x = 30, exp(x) for x = -30.
    x = rand_t(rng, [6], -4, 4)
    x.data[0], x.data[1] = 30.0, -30.0
    return unary_case("sigmoid_wide", "Tests that tcc.sigmoid is exact at both tails (x = +-30) and between.",
                      "sigmoid", x, sigmoid, "approx")


@case(EW)
def sigmoid_tail(rng):
    x = T([2], [-30.0, -20.0])
    f = T([2], [1e13, 1e9])
    res = T([2], [sigmoid(v) * k for v, k in zip(x.data, f.data)])
    # Scaled by 1e13 and 1e9 in the IR, so that the tiny values are printed
    # with 4 significant digits: a naive 1 - 1/(1+e^-x) form would print 0.
    c = Case("sigmoid_tail", "Tests that tcc.sigmoid keeps relative precision for large negative x.",
             [x, f],
             ["%s = tcc.sigmoid %a0 : tensor<2xf32>",
              "%r0 = tcc.mul %s, %a1 : tensor<2xf32>"], [(res, "approx")])
    return c


@case(EW)
def softplus_wide(rng):
    x = rand_t(rng, [6], -4, 4)
    x.data[0], x.data[1] = 40.0, -40.0
    return unary_case("softplus_wide", "Tests that tcc.softplus is max(x,0) + log1p(exp(-|x|)), finite at +-40.",
                      "softplus", x, softplus, "approx")


@case(EW)
def gelu_exact(rng):
    return unary_case("gelu_exact", "Tests that tcc.gelu is x * Phi(x) with erf.", "gelu",
                      rand_t(rng, [8], -3, 3),
                      lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))), "approx")


@case(EW)
def gelu_tanh(rng):
    def f(v):
        return 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
    return unary_case("gelu_tanh", "Tests the tanh approximation of tcc.gelu.", "gelu",
                      rand_t(rng, [8], -3, 3), f, "approx", "{approximate = true}")


@case(EW)
def elu(rng):
    return unary_case("elu", "Tests tcc.elu with alpha 0.5 on both signs.", "elu",
                      rand_t(rng, [8], -3, 3),
                      lambda v: v if v > 0 else 0.5 * math.expm1(v), "approx",
                      "{alpha = 0.5 : f64}")


@case(EW)
def leaky_relu(rng):
    return unary_case("leaky_relu", "Tests tcc.leaky_relu with alpha 0.125 (exact in f32).", "leaky_relu",
                      rand_t(rng, [8], -3, 3), lambda v: v if v >= 0 else 0.125 * v,
                      "exact", "{alpha = 0.125 : f64}")


@case(EW)
def exact_unary(rng):
    # Halves exercise round's ties-to-even; NaN checks propagation.
    x = T([10], [0.5, 1.5, 2.5, -0.5, -2.5, -1.75, 3.25, 0.0, -0.0, math.nan])
    def integral(fn):
        # floor / ceil / round of a float: NaN stays, a zero result keeps the
        # input's sign (ceil(-0.5) = -0).
        def g(v):
            if math.isnan(v):
                return v
            r = float(fn(v))
            return math.copysign(0.0, v) if r == 0 else r
        return g
    cases = []
    for op, fn in [("neg", lambda v: -v), ("abs", abs), ("sign", sign),
                   ("floor", integral(math.floor)), ("ceil", integral(math.ceil)),
                   ("round", integral(round)),
                   ("relu", lambda v: v if (v > 0 or math.isnan(v)) else 0.0)]:
        cases.append((op, [fn(v) for v in x.data]))
    body = [f"%r{i} = tcc.{op} %a0 : {ty(x)}" for i, (op, _) in enumerate(cases)]
    res = [(T(x.shape, vals), "exact") for _, vals in cases]
    return Case("exact_unary", "Tests neg, abs, sign, floor, ceil, round (half to even) and relu\n"
                "on ties, signed zeros and NaN (relu(NaN) = NaN, sign(NaN) = NaN).",
                [x], body, res)


@case(EW)
def clamp(rng):
    x = rand_t(rng, [8], -3, 3)
    x.data[0] = math.nan
    res = T(x.shape, [v if math.isnan(v) else min(max(v, -1.0), 0.5) for v in x.data])
    return Case("clamp", "Tests tcc.clamp to [-1, 0.5]; NaN stays NaN.", [x],
                [f"%r0 = tcc.clamp %a0 {{min = -1.0 : f64, max = 0.5 : f64}} : {ty(x)}"],
                [(res, "exact")])


@case(EW)
def binary_float(rng):
    x, y = rand_t(rng, [2, 3], -3, 3), rand_t(rng, [2, 3], -3, 3, avoid=(0.0,))
    ops = [("add", lambda a, b: a + b), ("sub", lambda a, b: a - b),
           ("mul", lambda a, b: a * b), ("div", lambda a, b: a / b)]
    body = [f"%r{i} = tcc.{op} %a0, %a1 : {ty(x)}" for i, (op, _) in enumerate(ops)]
    res = [(T(x.shape, [f(a, b) for a, b in zip(x.data, y.data)]), "approx")
           for _, f in ops]
    return Case("binary_float", "Tests add, sub, mul and div of f32 tensors.", [x, y], body, res)


@case(EW)
def pow_float(rng):
    x, y = rand_t(rng, [6], 0.25, 3), rand_t(rng, [6], -2, 2)
    return binary_case("pow_float", "Tests tcc.pow with positive bases and mixed exponents.",
                       "pow", x, y, math.pow, "approx")


@case(EW)
def max_min_nan(rng):
    x = T([5], [1.0, -2.0, math.nan, 0.5, 3.0])
    y = T([5], [2.0, -3.0, 1.0, math.nan, 3.0])

    def mx(a, b):
        return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)

    def mn(a, b):
        return math.nan if math.isnan(a) or math.isnan(b) else min(a, b)
    return Case("max_min_nan", "Tests that tcc.max and tcc.min propagate NaN from either side.",
                [x, y], [f"%r0 = tcc.max %a0, %a1 : {ty(x)}", f"%r1 = tcc.min %a0, %a1 : {ty(x)}"],
                [(T([5], [mx(a, b) for a, b in zip(x.data, y.data)]), "exact"),
                 (T([5], [mn(a, b) for a, b in zip(x.data, y.data)]), "exact")])


@case(EW)
def compare_float(rng):
    x = T([5], [1.0, 2.0, math.nan, 3.0, -1.0])
    y = T([5], [1.0, 1.0, 1.0, math.nan, 0.0])
    preds = [("eq", lambda a, b: a == b), ("ne", lambda a, b: not (a == b)),
             ("lt", lambda a, b: a < b), ("le", lambda a, b: a <= b),
             ("gt", lambda a, b: a > b), ("ge", lambda a, b: a >= b)]
    body = [f"%r{i} = tcc.compare {p}, %a0, %a1 : {ty(x)}" for i, (p, _) in enumerate(preds)]
    res = [(T([5], [int(f(a, b)) for a, b in zip(x.data, y.data)], "i1"), "int")
           for _, f in preds]
    return Case("compare_float", "Tests the six float comparisons; NaN is unordered: only ne holds.",
                [x, y], body, res)


@case(EW)
def select_and_logic(rng):
    c = T([6], [1, 0, 1, 1, 0, 0], "i1")
    d = T([6], [1, 1, 0, 1, 0, 1], "i1")
    x, y = rand_t(rng, [6]), rand_t(rng, [6])
    return Case("select_and_logic", "Tests tcc.select and the boolean ops and, or, xor, not.",
                [c, d, x, y],
                ["%r0 = tcc.select %a0, %a2, %a3 : tensor<6xi1>, tensor<6xf32>",
                 "%r1 = tcc.and %a0, %a1 : tensor<6xi1>",
                 "%r2 = tcc.or %a0, %a1 : tensor<6xi1>",
                 "%r3 = tcc.xor %a0, %a1 : tensor<6xi1>",
                 "%r4 = tcc.not %a0 : tensor<6xi1>"],
                [(T([6], [a if k else b for k, a, b in zip(c.data, x.data, y.data)]), "exact"),
                 (T([6], [a & b for a, b in zip(c.data, d.data)], "i1"), "int"),
                 (T([6], [a | b for a, b in zip(c.data, d.data)], "i1"), "int"),
                 (T([6], [a ^ b for a, b in zip(c.data, d.data)], "i1"), "int"),
                 (T([6], [1 - a for a in c.data], "i1"), "int")])


@case(EW)
def cast_float_to_int(rng):
    x = T([8], [-2.75, -0.5, 0.5, 2.75, -7.0, 100.25, -100.875, 3.0])
    return Case("cast_float_to_int", "Tests that float to int casts truncate toward zero, negatives included.",
                [x], [f"%r0 = tcc.cast %a0 : {ty(x)} to tensor<8xi32>"],
                [(T([8], [math.trunc(v) for v in x.data], "i32"), "int")])


@case(EW)
def cast_misc(rng):
    f = T([5], [0.0, -0.0, 2.5, math.nan, -1.0])
    u = T([4], [200, 0, 255, 7], "ui8")
    s = T([4], [-56, 0, 127, -128], "i8")
    big = T([4], [300, -1, 255, 256], "i32")
    fu = T([4], [0.5, 200.75, 255.0, 3.99])
    h = T([4], [1.0009765625, 3.14159, -65504.0, 0.1])

    def to_f16(v):
        return struct.unpack("e", struct.pack("e", v))[0]
    return Case("cast_misc", "Tests casts: float to bool is x != 0 (NaN is true), ui8 and i8 widen with\n"
                "their signedness, i32 to i8 truncates bits, ui8 to f32, f32 to ui8, and\n"
                "f32 -> f16 -> f32 rounds to nearest even.",
                [f, u, s, big, fu, h],
                ["%r0 = tcc.cast %a0 : tensor<5xf32> to tensor<5xi1>",
                 "%r1 = tcc.cast %a1 : tensor<4xui8> to tensor<4xi32>",
                 "%r2 = tcc.cast %a2 : tensor<4xi8> to tensor<4xi32>",
                 "%r3 = tcc.cast %a3 : tensor<4xi32> to tensor<4xi8>",
                 "%r4 = tcc.cast %a1 : tensor<4xui8> to tensor<4xf32>",
                 "%r5 = tcc.cast %a4 : tensor<4xf32> to tensor<4xui8>",
                 "%h = tcc.cast %a5 : tensor<4xf32> to tensor<4xf16>",
                 "%r6 = tcc.cast %h : tensor<4xf16> to tensor<4xf32>"],
                [(T([5], [int(not (v == 0)) for v in f.data], "i1"), "int"),
                 (T([4], u.data, "i32"), "int"),
                 (T([4], s.data, "i32"), "int"),
                 (T([4], [wrap_int(v, "i8") for v in big.data], "i8"), "int"),
                 (T([4], [float(v) for v in u.data]), "exact"),
                 (T([4], [math.trunc(v) for v in fu.data], "ui8"), "int"),
                 (T([4], [to_f16(v) for v in h.data]), "exact")])


def trunc_div(a, b):
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


@case(EW)
def unsigned_ops(rng):
    x = T([6], [200, 7, 255, 100, 0, 130], "ui8")
    y = T([6], [7, 200, 16, 100, 3, 0], "ui8")
    return Case("unsigned_ops", "Tests that ui8 keeps unsigned semantics after the signless conversion:\n"
                "division (200 / 7 = 28, not -56 / 7), x / 0 = 0, comparison, max, min.",
                [x, y],
                [f"%r0 = tcc.div %a0, %a1 : {ty(x)}",
                 f"%r1 = tcc.compare lt, %a0, %a1 : {ty(x)}",
                 f"%r2 = tcc.max %a0, %a1 : {ty(x)}",
                 f"%r3 = tcc.min %a0, %a1 : {ty(x)}",
                 f"%r4 = tcc.add %a0, %a1 : {ty(x)}"],
                [(T([6], [trunc_div(a, b) for a, b in zip(x.data, y.data)], "ui8"), "int"),
                 (T([6], [int(a < b) for a, b in zip(x.data, y.data)], "i1"), "int"),
                 (T([6], [max(a, b) for a, b in zip(x.data, y.data)], "ui8"), "int"),
                 (T([6], [min(a, b) for a, b in zip(x.data, y.data)], "ui8"), "int"),
                 (T([6], [wrap_int(a + b, "ui8") for a, b in zip(x.data, y.data)], "ui8"), "int")])


def int_pow(a, e, dtype):
    if e < 0:
        return 1 if a == 1 else ((-1 if e % 2 else 1) if a == -1 else 0)
    return wrap_int(a ** e, dtype)


@case(EW)
def signed_int_ops(rng):
    x = T([8], [-7, 7, -7, 9, -128, 5, 3, -1], "i8")
    y = T([8], [2, -2, -2, 0, -1, 3, 4, -3], "i8")
    return Case("signed_int_ops", "Tests i8 division truncating toward zero, x / 0 = 0, INT_MIN / -1 wrapping,\n"
                "pow (wrapping, negative exponents), abs, sign and relu.",
                [x, y],
                [f"%r0 = tcc.div %a0, %a1 : {ty(x)}",
                 f"%r1 = tcc.pow %a0, %a1 : {ty(x)}",
                 f"%r2 = tcc.abs %a0 : {ty(x)}",
                 f"%r3 = tcc.sign %a1 : {ty(x)}",
                 f"%r4 = tcc.relu %a0 : {ty(x)}",
                 f"%r5 = tcc.clamp %a0 {{min = -6.5 : f64, max = 4.5 : f64}} : {ty(x)}"],
                [(T([8], [wrap_int(trunc_div(a, b), "i8") for a, b in zip(x.data, y.data)], "i8"), "int"),
                 (T([8], [int_pow(a, b, "i8") for a, b in zip(x.data, y.data)], "i8"), "int"),
                 (T([8], [wrap_int(abs(a), "i8") for a in x.data], "i8"), "int"),
                 (T([8], [(a > 0) - (a < 0) for a in y.data], "i8"), "int"),
                 (T([8], [max(a, 0) for a in x.data], "i8"), "int"),
                 (T([8], [min(max(a, -6), 4) for a in x.data], "i8"), "int")])


# ==========================================================================
# Data movement
# ==========================================================================

DM = "data-movement.mlir"


@case(DM)
def broadcast(rng):
    x = rand_t(rng, [2, 1])
    res = from_fn([3, 2, 4], lambda i: x.at([i[1], 0]))
    return Case("broadcast", "Tests tcc.broadcast_in_dim expanding a size-1 dimension and adding one.",
                [x], ["%r0 = tcc.broadcast_in_dim %a0, dims = [1, 2] : tensor<2x1xf32> -> tensor<3x2x4xf32>"],
                [(res, "exact")])


@case(DM)
def reshape_transpose(rng):
    x = rand_t(rng, [2, 3, 4])
    flat = x.data
    res0 = T([4, 6], flat)
    res1 = from_fn([4, 2, 3], lambda i: x.at([i[1], i[2], i[0]]))
    return Case("reshape_transpose", "Tests tcc.reshape (2x3x4 -> 4x6, no single reassociation) and\n"
                "tcc.transpose with perm [2, 0, 1].", [x],
                ["%r0 = tcc.reshape %a0 : tensor<2x3x4xf32> -> tensor<4x6xf32>",
                 "%r1 = tcc.transpose %a0, perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>"],
                [(res0, "exact"), (res1, "exact")])


@case(DM)
def concat(rng):
    a, b, c = rand_t(rng, [2, 1]), rand_t(rng, [2, 3]), rand_t(rng, [2, 2])
    res = from_fn([2, 6], lambda i: a.at([i[0], i[1]]) if i[1] < 1 else
                  (b.at([i[0], i[1] - 1]) if i[1] < 4 else c.at([i[0], i[1] - 4])))
    return Case("concat", "Tests tcc.concat of three tensors along axis 1.", [a, b, c],
                ["%r0 = tcc.concat %a0, %a1, %a2 {axis = 1 : i64} : "
                 "(tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>"],
                [(res, "exact")])


@case(DM)
def slice_strides(rng):
    x = rand_t(rng, [4, 7])
    neg = from_fn([2, 3], lambda i: x.at([3 - 2 * i[0], 6 - 3 * i[1]]))
    pos = from_fn([2, 3], lambda i: x.at([1 + 2 * i[0], 0 + 2 * i[1]]))
    mixed = from_fn([4, 2], lambda i: x.at([3 - i[0], 1 + 4 * i[1]]))
    return Case("slice_strides", "Tests tcc.slice with negative strides on both dimensions, positive\n"
                "strides, and a reversal combined with a positive stride.", [x],
                ["%r0 = tcc.slice %a0, start = [3, 6], stride = [-2, -3] : tensor<4x7xf32> -> tensor<2x3xf32>",
                 "%r1 = tcc.slice %a0, start = [1, 0], stride = [2, 2] : tensor<4x7xf32> -> tensor<2x3xf32>",
                 "%r2 = tcc.slice %a0, start = [3, 1], stride = [-1, 4] : tensor<4x7xf32> -> tensor<4x2xf32>"],
                [(neg, "exact"), (pos, "exact"), (mixed, "exact")])


def pad_src(i, n, mode):
    if mode == "edge":
        return min(max(i, 0), n - 1)
    if mode == "wrap":
        return i % n
    # reflect, numpy style (also for pads wider than n - 1)
    if n == 1:
        return 0
    p = 2 * (n - 1)
    m = i % p
    return m if m < n else p - m


@case(DM)
def pad_modes(rng):
    x = rand_t(rng, [2, 3])
    low, high = [1, 2], [2, 4]
    out = [2 + 3, 3 + 6]
    res = []
    for mode in ["reflect", "edge", "wrap"]:
        res.append((from_fn(out, lambda i, mode=mode: x.at(
            [pad_src(i[0] - low[0], 2, mode), pad_src(i[1] - low[1], 3, mode)])), "exact"))
    const = from_fn(out, lambda i: x.at([i[0] - 1, i[1] - 2])
                    if 0 <= i[0] - 1 < 2 and 0 <= i[1] - 2 < 3 else 1.5)
    res.append((const, "exact"))
    body = [f"%r{k} = tcc.pad %a0, low = [1, 2], high = [2, 4] {{mode = {m} : i32}} : "
            "tensor<2x3xf32> -> tensor<5x9xf32>" for k, m in enumerate([1, 2, 3])]
    body.append("%r3 = tcc.pad %a0, low = [1, 2], high = [2, 4] {value = 1.5 : f64} : "
                "tensor<2x3xf32> -> tensor<5x9xf32>")
    return Case("pad_modes", "Tests tcc.pad in reflect, edge, wrap and constant mode; the pads are\n"
                "wider than the input (4 > 3 - 1), which reflect handles periodically.",
                [x], body, res)


@case(DM)
def gather(rng):
    x = rand_t(rng, [3, 4])
    idx = T([2, 2], [0, -1, 2, -3], "i64")
    res = from_fn([3, 2, 2], lambda i: x.at([i[0], idx.at([i[1], i[2]]) % 4]))
    idx0 = T([2], [-1, 1], "i32")
    res0 = from_fn([2, 4], lambda i: x.at([idx0.data[i[0]] % 3, i[1]]))
    return Case("gather", "Tests tcc.gather along axis 1 with 2-D indices, negative ones included\n"
                "(-1 is the last), and along axis 0 with i32 indices.", [x, idx, idx0],
                ["%r0 = tcc.gather %a0, %a1 {axis = 1 : i64} : (tensor<3x4xf32>, tensor<2x2xi64>) -> tensor<3x2x2xf32>",
                 "%r1 = tcc.gather %a0, %a2 {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2xi32>) -> tensor<2x4xf32>"],
                [(res, "exact"), (res0, "exact")])


def clamp_index(i, n):
    """The lowering's rule for indices ONNX leaves undefined: wrap a
    negative index once, then clamp into [0, n - 1]."""
    if i < 0:
        i += n
    return min(max(i, 0), n - 1)


@case(DM)
def gather_out_of_range(rng):
    x = rand_t(rng, [4, 2])
    idx = T([4], [7, -9, 4, -5], "i64")
    res = from_fn([4, 2], lambda i: x.at([clamp_index(idx.data[i[0]], 4), i[1]]))
    upd = rand_t(rng, [4])
    sc = list(x.data)
    for k in range(4):
        sc[clamp_index(idx.data[k], 4) * 2 + 1] = upd.data[k]
    return Case("gather_out_of_range", "Tests the documented rule for out-of-range indices (undefined in ONNX):\n"
                "wrap a negative index once, then clamp, for gather and scatter_elements.",
                [x, idx, T([4, 1], idx.data, "i64"), T([4, 1], upd.data)],
                ["%r0 = tcc.gather %a0, %a1 {axis = 0 : i64} : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<4x2xf32>",
                 "%s = tcc.slice %a0, start = [0, 1], stride = [1, 1] : tensor<4x2xf32> -> tensor<4x1xf32>",
                 "%t = tcc.scatter_elements %s, %a2, %a3 {axis = 0 : i64} : "
                 "tensor<4x1xf32>, tensor<4x1xi64>, tensor<4x1xf32>",
                 "%r1 = tcc.concat %a0, %t {axis = 1 : i64} : (tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>"],
                [(res, "exact"),
                 (from_fn([4, 3], lambda i: x.at(i) if i[1] < 2 else sc[i[0] * 2 + 1]), "exact")])


@case(DM)
def gather_elements(rng):
    x = rand_t(rng, [3, 4])
    idx = T([3, 2], [0, 3, -1, 2, 1, -4], "i64")
    res = from_fn([3, 2], lambda i: x.at([i[0], idx.at(i) % 4]))
    return Case("gather_elements", "Tests tcc.gather_elements along axis 1 with negative indices.",
                [x, idx], ["%r0 = tcc.gather_elements %a0, %a1 {axis = 1 : i64} : "
                           "(tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>"],
                [(res, "exact")])


def scatter_elements_ref(x, idx, upd, axis, red):
    out = list(x.data)
    for i in all_idx(idx.shape):
        j = list(i)
        j[axis] = idx.at(i) % x.shape[axis]
        f = ravel(j, x.shape)
        u = upd.at(i)
        out[f] = {"none": u, "add": out[f] + u, "mul": out[f] * u,
                  "max": max(out[f], u), "min": min(out[f], u)}[red]
    return T(x.shape, out, x.dtype)


@case(DM)
def scatter_elements(rng):
    x = rand_t(rng, [3, 3])
    idx = T([2, 3], [1, 0, 2, 1, -1, 2], "i64")
    upd = rand_t(rng, [2, 3])
    return Case("scatter_elements", "Tests tcc.scatter_elements along axis 0 with duplicate targets:\n"
                "reduction add sums both updates, reduction none keeps the later one.",
                [x, idx, upd],
                ["%r0 = tcc.scatter_elements %a0, %a1, %a2 {axis = 0 : i64, reduction = 1 : i32} : "
                 "tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>",
                 "%r1 = tcc.scatter_elements %a0, %a1, %a2 {axis = 0 : i64} : "
                 "tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>",
                 "%r2 = tcc.scatter_elements %a0, %a1, %a2 {axis = 0 : i64, reduction = 3 : i32} : "
                 "tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>"],
                [(scatter_elements_ref(x, idx, upd, 0, "add"), "exact"),
                 (scatter_elements_ref(x, idx, upd, 0, "none"), "exact"),
                 (scatter_elements_ref(x, idx, upd, 0, "max"), "exact")])


@case(DM)
def scatter_nd(rng):
    x = rand_t(rng, [4, 3])
    idx = T([3, 1], [2, 0, 2], "i64")
    upd = rand_t(rng, [3, 3])
    none = list(x.data)
    mul = list(x.data)
    for k in range(3):
        r = idx.data[k]
        for c in range(3):
            none[r * 3 + c] = upd.at([k, c])
            mul[r * 3 + c] *= upd.at([k, c])
    idx2 = T([2, 2], [3, 1, -1, 1], "i64")
    upd2 = T([2], [0.25, 0.5])
    add = list(x.data)
    for k in range(2):
        add[(idx2.at([k, 0]) % 4) * 3 + idx2.at([k, 1])] += upd2.data[k]
    return Case("scatter_nd", "Tests tcc.scatter_nd writing rows (the later duplicate wins), multiplying\n"
                "rows, and adding at full index tuples with a negative index twice.",
                [x, idx, upd, idx2, upd2],
                ["%r0 = tcc.scatter_nd %a0, %a1, %a2 : tensor<4x3xf32>, tensor<3x1xi64>, tensor<3x3xf32>",
                 "%r1 = tcc.scatter_nd %a0, %a1, %a2 {reduction = 2 : i32} : "
                 "tensor<4x3xf32>, tensor<3x1xi64>, tensor<3x3xf32>",
                 "%r2 = tcc.scatter_nd %a0, %a3, %a4 {reduction = 1 : i32} : "
                 "tensor<4x3xf32>, tensor<2x2xi64>, tensor<2xf32>"],
                [(T([4, 3], none), "exact"), (T([4, 3], mul), "exact"), (T([4, 3], add), "exact")])


# ==========================================================================
# Reductions, arg-reductions, cumsum
# ==========================================================================

RED = "reductions.mlir"


def reduce_ref(x, axes, fn, keep):
    out_shape = [1 if d in axes else s for d, s in enumerate(x.shape)]
    groups = {}
    for i in all_idx(x.shape):
        o = tuple(0 if d in axes else v for d, v in enumerate(i))
        groups.setdefault(o, []).append(x.at(i))
    res = from_fn(out_shape, lambda i: fn(groups[tuple(i)]), x.dtype)
    if not keep:
        res.shape = [s for d, s in enumerate(x.shape) if d not in axes]
    return res


def nanmax(v):
    return math.nan if any(math.isnan(a) for a in v) else max(v)


@case(RED)
def reduce_float(rng):
    x = rand_t(rng, [2, 3, 4], -2, 2)
    return Case("reduce_float", "Tests reduce_sum over axes [0, 2] keeping them, reduce_mean over axis 1,\n"
                "reduce_prod, reduce_min, and an empty axes list (the identity).", [x],
                ["%r0 = tcc.reduce_sum %a0 {axes = array<i64: 0, 2>, keepdims = true} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>",
                 "%r1 = tcc.reduce_mean %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2x4xf32>",
                 "%r2 = tcc.reduce_prod %a0 {axes = array<i64: 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2x3xf32>",
                 "%r3 = tcc.reduce_min %a0 {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<f32>",
                 "%r4 = tcc.reduce_max %a0 {axes = array<i64>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>"],
                [(reduce_ref(x, [0, 2], sum, True), "approx"),
                 (reduce_ref(x, [1], lambda v: sum(v) / len(v), False), "approx"),
                 (reduce_ref(x, [2], math.prod, False), "approx"),
                 (reduce_ref(x, [0, 1, 2], min, False), "exact"),
                 (x, "exact")])


@case(RED)
def reduce_max_nan(rng):
    x = rand_t(rng, [3, 4])
    x.data[5] = math.nan
    return Case("reduce_max_nan", "Tests that reduce_max propagates NaN to its row only.", [x],
                ["%r0 = tcc.reduce_max %a0 {axes = array<i64: 1>, keepdims = false} : tensor<3x4xf32> -> tensor<3xf32>"],
                [(reduce_ref(x, [1], nanmax, False), "exact")])


@case(RED)
def reduce_int(rng):
    x = T([2, 3], [-7, 2, 4, 5, -1, -5], "i32")
    u = T([2, 3], [250, 3, 1, 7, 200, 100], "ui8")
    return Case("reduce_int", "Tests integer reduce_mean (truncating toward zero: -1/3 = 0, -1/2 = 0),\n"
                "and ui8 reduce_max / reduce_min comparing unsigned.", [x, u],
                ["%r0 = tcc.reduce_mean %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x3xi32> -> tensor<2xi32>",
                 "%r1 = tcc.reduce_mean %a0 {axes = array<i64: 0>, keepdims = true} : tensor<2x3xi32> -> tensor<1x3xi32>",
                 "%r2 = tcc.reduce_max %a1 {axes = array<i64: 1>, keepdims = false} : tensor<2x3xui8> -> tensor<2xui8>",
                 "%r3 = tcc.reduce_min %a1 {axes = array<i64: 0>, keepdims = false} : tensor<2x3xui8> -> tensor<3xui8>"],
                [(reduce_ref(x, [1], lambda v: trunc_div(sum(v), len(v)), False), "int"),
                 (reduce_ref(x, [0], lambda v: trunc_div(sum(v), len(v)), True), "int"),
                 (reduce_ref(u, [1], max, False), "int"),
                 (reduce_ref(u, [0], min, False), "int")])


def argext(vals, is_max, last):
    """numpy semantics (the first NaN wins), ties first or last."""
    best = None
    for i, v in enumerate(vals):
        if best is None:
            best = i
            continue
        b = vals[best]
        if math.isnan(b):
            if math.isnan(v) and last:
                best = i
            continue
        if math.isnan(v):
            best = i
        elif (v > b if is_max else v < b) or (v == b and last):
            best = i
    return best


def arg_ref(x, axis, is_max, last, keep):
    out_shape = [1 if d == axis else s for d, s in enumerate(x.shape)]

    def fn(i):
        vals = []
        for k in range(x.shape[axis]):
            j = list(i)
            j[axis] = k
            vals.append(x.at(j))
        return argext(vals, is_max, last)
    res = from_fn(out_shape, fn, "i64")
    if not keep:
        res.shape = [s for d, s in enumerate(x.shape) if d != axis]
    return res


@case(RED)
def argmax_ties(rng):
    x = T([3, 5], [1.0, 3.0, 3.0, -1.0, 3.0,
                   2.0, math.nan, 5.0, math.nan, 0.0,
                   -2.0, -2.0, -4.0, -4.0, 0.5])
    return Case("argmax_ties", "Tests argmax / argmin ties (first, or last with select_last_index) and NaN\n"
                "(the first NaN wins, as numpy).", [x],
                ["%r0 = tcc.argmax %a0 {axis = 1 : i64, keepdims = false} : tensor<3x5xf32> -> tensor<3xi64>",
                 "%r1 = tcc.argmax %a0 {axis = 1 : i64, keepdims = true, select_last_index = true} : tensor<3x5xf32> -> tensor<3x1xi64>",
                 "%r2 = tcc.argmin %a0 {axis = 1 : i64, keepdims = false} : tensor<3x5xf32> -> tensor<3xi64>",
                 "%r3 = tcc.argmin %a0 {axis = 1 : i64, keepdims = false, select_last_index = true} : tensor<3x5xf32> -> tensor<3xi64>",
                 "%r4 = tcc.argmax %a0 {axis = 0 : i64, keepdims = false} : tensor<3x5xf32> -> tensor<5xi64>"],
                [(arg_ref(x, 1, True, False, False), "int"),
                 (arg_ref(x, 1, True, True, True), "int"),
                 (arg_ref(x, 1, False, False, False), "int"),
                 (arg_ref(x, 1, False, True, False), "int"),
                 (arg_ref(x, 0, True, False, False), "int")])


@case(RED)
def argmax_int(rng):
    x = T([2, 4], [200, 7, 200, 100, 3, 255, 0, 255], "ui8")
    return Case("argmax_int", "Tests argmax / argmin of ui8 (unsigned order, first ties).", [x],
                ["%r0 = tcc.argmax %a0 {axis = 1 : i64, keepdims = false} : tensor<2x4xui8> -> tensor<2xi64>",
                 "%r1 = tcc.argmin %a0 {axis = 1 : i64, keepdims = false} : tensor<2x4xui8> -> tensor<2xi64>"],
                [(arg_ref(x, 1, True, False, False), "int"),
                 (arg_ref(x, 1, False, False, False), "int")])


def cumsum_ref(x, axis, exclusive, reverse):
    def fn(i):
        n = x.shape[axis]
        total = 0.0
        ks = range(i[axis], n) if reverse else range(0, i[axis] + 1)
        for k in ks:
            if exclusive and k == i[axis]:
                continue
            j = list(i)
            j[axis] = k
            total += x.at(j)
        return total
    return from_fn(x.shape, fn, x.dtype)


@case(RED)
def cumsum(rng):
    x = rand_t(rng, [3, 4])
    xi = T([5], [3, -1, 4, 1, -5], "i64")
    return Case("cumsum", "Tests tcc.cumsum: plain along axis 1, exclusive and reverse along axis 0,\n"
                "exclusive along axis 1, and reverse on i64.", [x, xi],
                ["%r0 = tcc.cumsum %a0 {axis = 1 : i64} : tensor<3x4xf32>",
                 "%r1 = tcc.cumsum %a0 {axis = 0 : i64, exclusive = true, reverse = true} : tensor<3x4xf32>",
                 "%r2 = tcc.cumsum %a0 {axis = 1 : i64, exclusive = true} : tensor<3x4xf32>",
                 "%r3 = tcc.cumsum %a1 {axis = 0 : i64, reverse = true} : tensor<5xi64>"],
                [(cumsum_ref(x, 1, False, False), "exact"),
                 (cumsum_ref(x, 0, True, True), "exact"),
                 (cumsum_ref(x, 1, True, False), "exact"),
                 (cumsum_ref(xi, 0, False, True), "int")])


# ==========================================================================
# Matmul, convolution, pooling
# ==========================================================================

NN = "nn.mlir"


def matmul_ref(a, b):
    r = len(a.shape)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    shape = a.shape[:-1] + [n]

    def fn(i):
        batch = list(i[:-2])
        return sum(a.at(batch + [i[-2], kk]) * b.at(batch + [kk, i[-1]]) for kk in range(k))
    return from_fn(shape, fn, a.dtype)


@case(NN)
def matmul(rng):
    a, b = rand_t(rng, [3, 4]), rand_t(rng, [4, 5])
    a4, b4 = rand_t(rng, [2, 2, 2, 3]), rand_t(rng, [2, 2, 3, 2])
    ai, bi = rand_int(rng, [2, 3], -5, 5, "i32"), rand_int(rng, [3, 2], -5, 5, "i32")
    return Case("matmul", "Tests tcc.matmul in 2-D (linalg.matmul), with two batch dimensions\n"
                "(collapsed into linalg.batch_matmul) and on i32.", [a, b, a4, b4, ai, bi],
                ["%r0 = tcc.matmul %a0, %a1 : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>",
                 "%r1 = tcc.matmul %a2, %a3 : (tensor<2x2x2x3xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x2x2xf32>",
                 "%r2 = tcc.matmul %a4, %a5 : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>"],
                [(matmul_ref(a, b), "approx"), (matmul_ref(a4, b4), "approx"),
                 (matmul_ref(ai, bi), "int")])


def conv_out(d, k, s, dil, pl, ph):
    return (d + pl + ph - dil * (k - 1) - 1) // s + 1


def conv_ref(x, w, strides, dils, pl, ph, group):
    n, c = x.shape[:2]
    m = w.shape[0]
    sp = len(x.shape) - 2
    cg, mg = c // group, m // group
    ks = w.shape[2:]
    outs = [conv_out(x.shape[2 + i], ks[i], strides[i], dils[i], pl[i], ph[i]) for i in range(sp)]

    def fn(i):
        nn, mm = i[0], i[1]
        g = mm // mg
        o = i[2:]
        total = 0.0
        for cc in range(cg):
            for kk in all_idx(ks):
                pos = [o[j] * strides[j] + kk[j] * dils[j] - pl[j] for j in range(sp)]
                if all(0 <= pos[j] < x.shape[2 + j] for j in range(sp)):
                    total += x.at([nn, g * cg + cc] + pos) * w.at([mm, cc] + list(kk))
        return total
    return from_fn([n, m] + outs, fn)


def conv_case(name, comment, rng, xs, ws, strides, dils, pl, ph, group):
    x, w = rand_t(rng, xs), rand_t(rng, ws)
    res = conv_ref(x, w, strides, dils, pl, ph, group)
    body = [f"%r0 = tcc.conv %a0, %a1 {{{arr('strides', strides)}, {arr('dilations', dils)}, "
            f"{arr('pad_low', pl)}, {arr('pad_high', ph)}, group = {group} : i64}} : "
            f"({ty(x)}, {ty(w)}) -> {ty(res)}"]
    return Case(name, comment, [x, w], body, [(res, "approx")])


@case(NN)
def conv2d_padded(rng):
    return conv_case("conv2d_padded", "Tests a 2-D convolution with padding and stride (linalg.conv_2d_nchw_fchw).",
                     rng, [1, 2, 5, 5], [3, 2, 3, 3], [2, 1], [1, 1], [1, 1], [1, 0], 1)


@case(NN)
def conv2d_grouped(rng):
    return conv_case("conv2d_grouped", "Tests a grouped (2 groups), dilated (2, 1), strided (2, 2), asymmetrically\n"
                     "padded 2-D convolution (linalg.conv_2d_ngchw_gfchw).",
                     rng, [2, 4, 6, 5], [6, 2, 2, 3], [2, 2], [2, 1], [1, 0], [0, 2], 2)


@case(NN)
def conv2d_depthwise(rng):
    return conv_case("conv2d_depthwise", "Tests a depthwise 2-D convolution (linalg.depthwise_conv_2d_nchw_chw).",
                     rng, [1, 3, 4, 4], [3, 1, 2, 2], [1, 1], [1, 1], [0, 1], [1, 0], 3)


@case(NN)
def conv1d_grouped(rng):
    return conv_case("conv1d_grouped", "Tests a grouped, dilated, strided 1-D convolution (linalg.generic).",
                     rng, [1, 4, 9], [4, 2, 3], [2], [2], [2], [1], 2)


@case(NN)
def conv1d_plain(rng):
    return conv_case("conv1d_plain", "Tests a 1-D convolution with dilation (linalg.conv_1d_ncw_fcw).",
                     rng, [2, 2, 7], [3, 2, 2], [1], [3], [0], [2], 1)


@case(NN)
def conv3d(rng):
    return conv_case("conv3d", "Tests a 3-D convolution with stride and padding (linalg.conv_3d_ncdhw_fcdhw).",
                     rng, [1, 2, 3, 4, 3], [2, 2, 2, 2, 2], [1, 2, 1], [1, 1, 1], [0, 1, 0], [1, 0, 1], 1)


@case(NN)
def conv3d_grouped(rng):
    return conv_case("conv3d_grouped", "Tests a grouped 3-D convolution (linalg.generic).",
                     rng, [1, 4, 3, 3, 3], [2, 2, 2, 1, 2], [1, 1, 2], [1, 1, 1], [1, 0, 0], [0, 0, 1], 2)


def conv_transpose_ref(x, w, strides, dils, pl, ph, op, group):
    n, c = x.shape[:2]
    mg = w.shape[1]
    m = mg * group
    cg = c // group
    sp = len(x.shape) - 2
    ks = w.shape[2:]
    outs = [strides[i] * (x.shape[2 + i] - 1) + op[i] + dils[i] * (ks[i] - 1) + 1 - pl[i] - ph[i]
            for i in range(sp)]
    out = [0.0] * numel([n, m] + outs)
    # The definition: every input element scatters its weighted filter.
    for nn in range(n):
        for cc in range(c):
            g = cc // cg
            for i in all_idx(x.shape[2:]):
                for mm in range(mg):
                    for kk in all_idx(ks):
                        pos = [i[j] * strides[j] + kk[j] * dils[j] - pl[j] for j in range(sp)]
                        if all(0 <= pos[j] < outs[j] for j in range(sp)):
                            f = ravel([nn, g * mg + mm] + pos, [n, m] + outs)
                            out[f] += x.at([nn, cc] + list(i)) * w.at([cc, mm] + list(kk))
    return T([n, m] + outs, out)


def conv_transpose_case(name, comment, rng, xs, ws, strides, dils, pl, ph, op, group):
    x, w = rand_t(rng, xs), rand_t(rng, ws)
    res = conv_transpose_ref(x, w, strides, dils, pl, ph, op, group)
    body = [f"%r0 = tcc.conv_transpose %a0, %a1 {{{arr('strides', strides)}, {arr('dilations', dils)}, "
            f"{arr('pad_low', pl)}, {arr('pad_high', ph)}, {arr('output_padding', op)}, "
            f"group = {group} : i64}} : ({ty(x)}, {ty(w)}) -> {ty(res)}"]
    return Case(name, comment, [x, w], body, [(res, "approx")])


@case(NN)
def conv_transpose_1d(rng):
    return conv_transpose_case(
        "conv_transpose_1d", "Tests a grouped 1-D transposed convolution with stride 2, pad_low 1 and\n"
        "output_padding 1, against the scatter definition.",
        rng, [1, 4, 5], [4, 3, 3], [2], [1], [1], [0], [1], 2)


@case(NN)
def conv_transpose_2d(rng):
    return conv_transpose_case(
        "conv_transpose_2d", "Tests a 2-D transposed convolution with strides (2, 3), dilations (2, 1),\n"
        "pads and output_padding on both dimensions.",
        rng, [1, 2, 3, 2], [2, 3, 2, 3], [2, 3], [2, 1], [1, 0], [2, 1], [1, 2], 1)


def pool_out(d, k, s, dil, pl, ph, ceil):
    eff = dil * (k - 1) + 1
    span = d + pl + ph - eff
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= d + pl:
        o -= 1
    return o


def pool_ref(x, kernel, strides, dils, pl, ph, ceil, kind, include_pad=False):
    sp = len(kernel)
    outs = [pool_out(x.shape[2 + i], kernel[i], strides[i], dils[i], pl[i], ph[i], ceil)
            for i in range(sp)]

    def fn(i):
        vals, count = [], 0
        for kk in all_idx(kernel):
            pos = [i[2 + j] * strides[j] + kk[j] * dils[j] - pl[j] for j in range(sp)]
            inside = all(0 <= pos[j] < x.shape[2 + j] for j in range(sp))
            in_pad = all(-pl[j] <= pos[j] < x.shape[2 + j] + ph[j] for j in range(sp))
            if inside:
                vals.append(x.at(list(i[:2]) + pos))
            if inside or (include_pad and in_pad):
                count += 1
        if kind == "max":
            return max(vals)
        return sum(vals) / count
    return from_fn(list(x.shape[:2]) + outs, fn, x.dtype)


def pool_case(name, comment, rng, op, xs, kernel, strides, dils, pl, ph, ceil,
              include_pad=None, x=None):
    x = x or rand_t(rng, xs)
    res = pool_ref(x, kernel, strides, dils, pl, ph, ceil, "max" if op == "max_pool" else "avg",
                   bool(include_pad))
    attrs = (f"{arr('kernel', kernel)}, {arr('strides', strides)}, {arr('dilations', dils)}, "
             f"{arr('pad_low', pl)}, {arr('pad_high', ph)}, ceil_mode = {str(ceil).lower()}")
    if include_pad is not None:
        attrs += f", count_include_pad = {str(include_pad).lower()}"
    body = [f"%r0 = tcc.{op} %a0 {{{attrs}}} : {ty(x)} -> {ty(res)}"]
    if not is_float(x.dtype):
        mode = "int"
    else:
        mode = "exact" if op == "max_pool" else "approx"
    return Case(name, comment, [x], body, [(res, mode)])


@case(NN)
def max_pool_ceil(rng):
    return pool_case("max_pool_ceil", "Tests a 2-D max pool with ceil_mode and padding; padding never wins\n"
                     "(-inf).", rng, "max_pool", [1, 2, 6, 7], [3, 2], [2, 2], [1, 1], [1, 0], [1, 0], True,
                     x=rand_t(rng, [1, 2, 6, 7], -4, -1))


@case(NN)
def max_pool_1d_dilated(rng):
    return pool_case("max_pool_1d_dilated", "Tests a dilated 1-D max pool (linalg.pooling_ncw_max).",
                     rng, "max_pool", [2, 1, 9], [3], [2], [2], [0], [0], False)


@case(NN)
def max_pool_3d(rng):
    return pool_case("max_pool_3d", "Tests a 3-D max pool with ceil_mode (linalg.generic).",
                     rng, "max_pool", [1, 1, 3, 4, 5], [2, 2, 2], [2, 2, 2], [1, 1, 1], [0, 1, 0], [0, 0, 0], True)


@case(NN)
def max_pool_ui8(rng):
    x = rand_int(rng, [1, 1, 4, 4], 0, 255, "ui8")
    return pool_case("max_pool_ui8", "Tests a ui8 max pool, which compares unsigned (values above 127).",
                     rng, "max_pool", [1, 1, 4, 4], [2, 2], [2, 2], [1, 1], [0, 0], [0, 0], False, x=x)


@case(NN)
def avg_pool_ceil_exclude_pad(rng):
    return pool_case("avg_pool_ceil_exclude_pad", "Tests a ceil_mode average pool with padding, dividing by the number of\n"
                     "input elements in each window.", rng, "avg_pool", [1, 2, 6, 6], [2, 3], [2, 2], [1, 1],
                     [1, 0], [0, 0], True, include_pad=False)


@case(NN)
def avg_pool_ceil_include_pad(rng):
    return pool_case("avg_pool_ceil_include_pad", "Tests a ceil_mode average pool with count_include_pad: the divisor counts\n"
                     "the padding but not the part of the last window past pad_high.", rng, "avg_pool",
                     [1, 1, 6, 6], [3, 3], [2, 2], [1, 1], [1, 1], [0, 0], True, include_pad=True)


@case(NN)
def avg_pool_1d_dilated(rng):
    return pool_case("avg_pool_1d_dilated", "Tests a dilated, padded 1-D average pool (linalg.pooling_ncw_sum).",
                     rng, "avg_pool", [1, 2, 8], [2], [3], [2], [1], [2], False, include_pad=False)


@case(NN)
def avg_pool_3d(rng):
    return pool_case("avg_pool_3d", "Tests a 3-D average pool with count_include_pad (linalg.generic).",
                     rng, "avg_pool", [1, 1, 3, 3, 4], [2, 2, 2], [1, 2, 2], [1, 1, 1], [1, 0, 1], [0, 1, 1],
                     False, include_pad=True)


# ==========================================================================
# Softmax, normalization, loss, dropout
# ==========================================================================

NORM = "normalization.mlir"


def softmax_ref(x, axis, log):
    def fn(i):
        row = []
        for k in range(x.shape[axis]):
            j = list(i)
            j[axis] = k
            row.append(x.at(j))
        m = max(row)
        s = sum(math.exp(v - m) for v in row)
        v = x.at(i)
        return (v - m) - math.log(s) if log else math.exp(v - m) / s
    return from_fn(x.shape, fn)


@case(NORM)
def softmax(rng):
    x = rand_t(rng, [2, 3, 4], -3, 3)
    x.data[0] = 80.0  # exp(80) overflows f32 without the max subtraction
    return Case("softmax", "Tests softmax along the middle axis (with a value of 80, which overflows\n"
                "exp without the max subtraction) and log_softmax along the last axis.", [x],
                ["%r0 = tcc.softmax %a0 {axis = 1 : i64} : tensor<2x3x4xf32>",
                 "%r1 = tcc.log_softmax %a0 {axis = 2 : i64} : tensor<2x3x4xf32>"],
                [(softmax_ref(x, 1, False), "approx"), (softmax_ref(x, 2, True), "approx")])


def moments_ref(x, dims):
    groups = {}
    for i in all_idx(x.shape):
        o = tuple(v for d, v in enumerate(i) if d not in dims)
        groups.setdefault(o, []).append(x.at(i))
    mean = {k: sum(v) / len(v) for k, v in groups.items()}
    var = {k: sum((a - mean[k]) ** 2 for a in v) / len(v) for k, v in groups.items()}
    return mean, var


@case(NORM)
def layer_norm(rng):
    x = rand_t(rng, [2, 3, 4], -3, 3)
    g, b = rand_t(rng, [3, 4]), rand_t(rng, [3, 4])
    eps = 1e-5
    mean, var = moments_ref(x, [1, 2])

    def y(i, bias=True):
        k = (i[0],)
        return (x.at(i) - mean[k]) / math.sqrt(var[k] + eps) * g.at(i[1:]) + (b.at(i[1:]) if bias else 0)
    return Case("layer_norm", "Tests layer_norm over the last two dimensions with and without bias;\n"
                "the mean and 1/sqrt(var + eps) are returned as [2, 1, 1].", [x, g, b],
                ["%r0, %r1, %r2 = tcc.layer_norm %a0, %a1, %a2 {axis = 1 : i64, epsilon = 1.0e-05 : f64} : "
                 "tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32> -> tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>",
                 "%r3, %m, %s = tcc.layer_norm %a0, %a1 {axis = 1 : i64, epsilon = 1.0e-05 : f64} : "
                 "tensor<2x3x4xf32>, tensor<3x4xf32> -> tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>"],
                [(from_fn(x.shape, y), "approx"),
                 (T([2, 1, 1], [mean[(n,)] for n in range(2)]), "approx"),
                 (T([2, 1, 1], [1 / math.sqrt(var[(n,)] + eps) for n in range(2)]), "approx"),
                 (from_fn(x.shape, lambda i: y(i, False)), "approx")])


@case(NORM)
def layer_norm_offset(rng):
    # A large common offset: a one-pass E[x^2] - E[x]^2 would lose the
    # variance to cancellation in f32; the two-pass form keeps it.
    x = rand_t(rng, [2, 8], -1, 1)
    x.data = [v + 1000.0 for v in x.data]
    g = T([8], [1.0] * 8)
    mean, var = moments_ref(x, [1])
    res = from_fn(x.shape, lambda i: (x.at(i) - mean[(i[0],)]) / math.sqrt(var[(i[0],)] + 1e-5))
    return Case("layer_norm_offset", "Tests that layer_norm computes the variance of (x - mean): inputs near\n"
                "1000 with a spread of 1.", [x, g],
                ["%r0, %m, %s = tcc.layer_norm %a0, %a1 {axis = 1 : i64, epsilon = 1.0e-05 : f64} : "
                 "tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>"],
                [(res, "approx")])


@case(NORM)
def batch_norm(rng):
    x = rand_t(rng, [2, 3, 2, 2], -3, 3)
    s, b = rand_t(rng, [3]), rand_t(rng, [3])
    m, v = rand_t(rng, [3], -1, 1), rand_t(rng, [3], 0.25, 2)
    eps = 1e-5
    inf = from_fn(x.shape, lambda i: (x.at(i) - m.data[i[1]]) / math.sqrt(v.data[i[1]] + eps)
                  * s.data[i[1]] + b.data[i[1]])
    mean, var = moments_ref(x, [0, 2, 3])
    train = from_fn(x.shape, lambda i: (x.at(i) - mean[(i[1],)]) / math.sqrt(var[(i[1],)] + eps)
                    * s.data[i[1]] + b.data[i[1]])
    return Case("batch_norm", "Tests batch_norm_inference with given statistics and batch_norm_training,\n"
                "which returns the batch mean and the biased batch variance.", [x, s, b, m, v],
                ["%r0 = tcc.batch_norm_inference %a0, %a1, %a2, %a3, %a4 {epsilon = 1.0e-05 : f64} : "
                 "tensor<2x3x2x2xf32>, tensor<3xf32>",
                 "%r1, %r2, %r3 = tcc.batch_norm_training %a0, %a1, %a2 {epsilon = 1.0e-05 : f64} : "
                 "tensor<2x3x2x2xf32>, tensor<3xf32>"],
                [(inf, "approx"), (train, "approx"),
                 (T([3], [mean[(c,)] for c in range(3)]), "approx"),
                 (T([3], [var[(c,)] for c in range(3)]), "approx")])


def nll_ref(x, t, w, reduction, ignore):
    losses, weights = [], []
    for i in all_idx(t.shape):
        c = t.at(i)
        if ignore is not None and c == ignore:
            losses.append(0.0)
            weights.append(0.0)
            continue
        wt = w.data[c] if w else 1.0
        losses.append(-x.at([i[0], c] + list(i[1:])) * wt)
        weights.append(wt)
    if reduction == "none":
        return T(t.shape, losses)
    if reduction == "sum":
        return T([], [sum(losses)])
    return T([], [sum(losses) / sum(weights)])


@case(NORM)
def nll_loss(rng):
    x = rand_t(rng, [3, 4, 2], -4, -0.0625)
    t = T([3, 2], [1, 3, 0, 2, 2, 1], "i64")
    w = rand_t(rng, [4], 0.25, 2)
    ti = T([4], [2, 0, 3, 0], "i32")
    x2 = rand_t(rng, [4, 5], -4, -0.0625)
    x2.data[5] = -math.inf  # x2[1, 0]: the ignored target's log-probability
    return Case("nll_loss", "Tests nll_loss: mean with class weights and ignore_index (the mean divides\n"
                "by the weights of the targets kept), sum, none with a spatial dimension, and\n"
                "an ignored target whose log-probability is -inf (it must not give NaN).",
                [x, t, w, ti, x2],
                ["%r0 = tcc.nll_loss %a0, %a1, %a2 {reduction = 2 : i32, ignore_index = 2 : i64} : "
                 "(tensor<3x4x2xf32>, tensor<3x2xi64>, tensor<4xf32>) -> tensor<f32>",
                 "%r1 = tcc.nll_loss %a0, %a1 {reduction = 1 : i32} : "
                 "(tensor<3x4x2xf32>, tensor<3x2xi64>) -> tensor<f32>",
                 "%r2 = tcc.nll_loss %a0, %a1, %a2 {reduction = 0 : i32} : "
                 "(tensor<3x4x2xf32>, tensor<3x2xi64>, tensor<4xf32>) -> tensor<3x2xf32>",
                 "%r3 = tcc.nll_loss %a4, %a3 {reduction = 2 : i32, ignore_index = 0 : i64} : "
                 "(tensor<4x5xf32>, tensor<4xi32>) -> tensor<f32>"],
                [(nll_ref(x, t, w, "mean", 2), "approx"),
                 (nll_ref(x, t, None, "sum", None), "approx"),
                 (nll_ref(x, t, w, "none", None), "approx"),
                 (nll_ref(x2, ti, None, "mean", 0), "approx")])


@case(NORM)
def dropout(rng):
    x = rand_t(rng, [2, 3])
    return Case("dropout", "Tests that dropout outside training is the identity with an all-true mask.", [x],
                ["%r0, %r1 = tcc.dropout %a0 {ratio = 0.5 : f64, stream = 0 : i64} : tensor<2x3xf32>"],
                [(x, "exact"), (T([2, 3], [1] * 6, "i1"), "int")])


# ==========================================================================
# Resize: the ONNX reference algorithm, interpolating dimension by dimension.
# ==========================================================================

RS = "resize.mlir"
MODES = {"nearest": 0, "linear": 1, "cubic": 2}
COORDS = {"half_pixel": 0, "align_corners": 1, "asymmetric": 2, "pytorch_half_pixel": 3,
          "tf_crop_and_resize": 4, "half_pixel_symmetric": 5}
NEAREST = {"round_prefer_floor": 0, "round_prefer_ceil": 1, "floor": 2, "ceil": 3}


def resize_coeffs(mode, ratio, nearest, a):
    if mode == "nearest":
        if ratio == int(ratio):
            return [0.0, 1.0]
        up = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5,
              "floor": False, "ceil": True}[nearest]
        return [0.0, 1.0] if up else [1.0, 0.0]
    if mode == "linear":
        return [1 - ratio, ratio]
    r, s = ratio, 1 - ratio
    return [((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a]


def interp_1d(data, scale, out_size, x, p, roi):
    n_in = len(data)
    out_w = scale * n_in
    cm = p["coord"]
    if cm == "align_corners":
        xo = 0.0 if out_w == 1 else x * (n_in - 1) / (out_w - 1)
    elif cm == "asymmetric":
        xo = x / scale
    elif cm == "tf_crop_and_resize":
        xo = ((roi[1] - roi[0]) * (n_in - 1) / 2 if out_w == 1
              else x * (roi[1] - roi[0]) * (n_in - 1) / (out_w - 1))
        xo += roi[0] * (n_in - 1)
        if xo < 0 or xo > n_in - 1:
            return p["extrapolation"]
    elif cm == "pytorch_half_pixel":
        xo = -0.5 if out_w == 1 else (x + 0.5) / scale - 0.5
    elif cm == "half_pixel":
        xo = (x + 0.5) / scale - 0.5
    else:  # half_pixel_symmetric
        adj = out_size / out_w
        xo = (n_in / 2) * (1 - adj) + (x + 0.5) / scale - 0.5
    ratio = 1.0 if xo == math.floor(xo) else xo - math.floor(xo)
    coeffs = resize_coeffs(p["mode"], ratio, p["nearest"], p["a"])
    n = len(coeffs)
    pad = (n + 1) // 2
    padded = [data[0]] * pad + list(data) + [data[-1]] * pad
    xp = xo + pad
    idx = sorted(sorted(range(len(padded)), key=lambda i: (abs(xp - i), i))[:n])
    points = [padded[i] for i in idx]
    idx = [i - pad for i in idx]
    if p["exclude"]:
        coeffs = [0.0 if (i < 0 or i >= n_in) else c for i, c in zip(idx, coeffs)]
        s = sum(coeffs)
        coeffs = [c / s for c in coeffs]
    return sum(c * v for c, v in zip(coeffs, points))


def interp_nd(data, shape, scales, outs, x, p, roi):
    r = len(shape)
    if r == 1:
        return interp_1d(data, scales[0], outs[0], x[0], p, [roi[0], roi[1]])
    step = numel(shape[1:])
    inner_roi = roi[1:r] + roi[r + 1:]
    rows = [interp_nd(data[i * step:(i + 1) * step], shape[1:], scales[1:], outs[1:], x[1:], p,
                      inner_roi) for i in range(shape[0])]
    return interp_1d(rows, scales[0], outs[0], x[0], p, [roi[0], roi[r]])


def resize_case(name, comment, x, scales, mode="nearest", coord="half_pixel",
                nearest="round_prefer_floor", a=-0.75, exclude=False, extrapolation=0.0,
                roi=None, sizes=None):
    r = len(x.shape)
    outs = sizes or [int(math.floor(d * s)) for d, s in zip(x.shape, scales)]
    p = {"mode": mode, "coord": coord, "nearest": nearest, "a": a, "exclude": exclude,
         "extrapolation": extrapolation}
    full_roi = roi or ([0.0] * r + [1.0] * r)
    res = from_fn(outs, lambda i: interp_nd(x.data, x.shape, scales, outs, list(i), p, full_roi),
                  x.dtype)
    attrs = [arr("scales", scales, "f64"), f"mode = {MODES[mode]} : i32",
             f"coordinate_mode = {COORDS[coord]} : i32", f"nearest_mode = {NEAREST[nearest]} : i32",
             f"cubic_coeff_a = {lit_scalar(a, 'f64')} : f64",
             f"exclude_outside = {str(exclude).lower()}",
             f"extrapolation_value = {lit_scalar(extrapolation, 'f64')} : f64"]
    if roi:
        attrs.append(arr("roi", roi, "f64"))
    body = [f"%r0 = tcc.resize %a0 {{{', '.join(attrs)}}} : {ty(x)} -> {ty(res)}"]
    if is_float(x.dtype):
        mode_ = "exact" if mode == "nearest" else "approx"
    else:
        mode_ = "int"
    if not is_float(x.dtype) and mode != "nearest":
        # The reference's astype truncates; the lowering clamps, then truncates.
        res.data = [math.trunc(v) for v in res.data]
    return Case(name, comment, [x], body, [(res, mode_)])


@case(RS)
def resize_linear_half_pixel(rng):
    return resize_case("resize_linear_half_pixel", "Tests linear resize with half_pixel coordinates, upsampling 2x3 -> 4x5\n"
                       "(scales 2 and 5/3), the edges clamped.", rand_t(rng, [1, 1, 2, 3]),
                       [1.0, 1.0, 2.0, 5 / 3], "linear", "half_pixel")


@case(RS)
def resize_nearest_asymmetric(rng):
    return resize_case("resize_nearest_asymmetric", "Tests nearest resize with asymmetric coordinates and floor rounding,\n"
                       "upsampling by 2 and downsampling by 0.6.", rand_t(rng, [1, 2, 3, 5]),
                       [1.0, 1.0, 2.0, 0.6], "nearest", "asymmetric", "floor")


@case(RS)
def resize_nearest_round_prefer_ceil(rng):
    return resize_case("resize_nearest_round_prefer_ceil", "Tests nearest resize with half_pixel coordinates and round_prefer_ceil on\n"
                       "exact halves (scale 4 puts coordinates on .5 boundaries).", rand_t(rng, [1, 1, 2, 2]),
                       [1.0, 1.0, 4.0, 3.0], "nearest", "half_pixel", "round_prefer_ceil")


@case(RS)
def resize_linear_align_corners(rng):
    return resize_case("resize_linear_align_corners", "Tests linear resize with align_corners, upsampling and downsampling.",
                       rand_t(rng, [1, 1, 3, 4]), [1.0, 1.0, 5 / 3, 0.5], "linear", "align_corners")


@case(RS)
def resize_linear_pytorch_half_pixel(rng):
    return resize_case("resize_linear_pytorch_half_pixel", "Tests linear resize with pytorch_half_pixel, downsampling to size 1 in one\n"
                       "dimension (coordinate -0.5).", rand_t(rng, [1, 1, 4, 4]),
                       [1.0, 1.0, 0.25, 0.75], "linear", "pytorch_half_pixel")


@case(RS)
def resize_cubic(rng):
    return resize_case("resize_cubic", "Tests cubic resize (a = -0.75) with half_pixel coordinates, upsampling.",
                       rand_t(rng, [1, 1, 3, 3]), [1.0, 1.0, 2.0, 1.5], "cubic", "half_pixel")


@case(RS)
def resize_cubic_exclude_outside(rng):
    return resize_case("resize_cubic_exclude_outside", "Tests cubic resize with a = -0.5 and exclude_outside (outside taps get\n"
                       "weight 0, the rest renormalized), asymmetric coordinates.", rand_t(rng, [1, 1, 4, 4]),
                       [1.0, 1.0, 1.5, 0.75], "cubic", "asymmetric", a=-0.5, exclude=True)


@case(RS)
def resize_tf_crop_and_resize(rng):
    return resize_case("resize_tf_crop_and_resize", "Tests tf_crop_and_resize with a roi that reaches outside the input:\n"
                       "those outputs take extrapolation_value 10.", rand_t(rng, [1, 1, 4, 4]),
                       [1.0, 1.0, 0.75, 1.25], "linear", "tf_crop_and_resize",
                       extrapolation=10.0, roi=[0.0, 0.0, 0.4, -0.3, 1.0, 1.0, 1.2, 0.7])


@case(RS)
def resize_half_pixel_symmetric(rng):
    return resize_case("resize_half_pixel_symmetric", "Tests linear resize with half_pixel_symmetric and a non-integer output\n"
                       "width (scale 1.7 of 3 = 5.1 -> 5).", rand_t(rng, [1, 1, 2, 3]),
                       [1.0, 1.0, 1.5, 1.7], "linear", "half_pixel_symmetric")


@case(RS)
def resize_nearest_int(rng):
    x = rand_int(rng, [1, 1, 2, 3], 0, 255, "ui8")
    return resize_case("resize_nearest_int", "Tests nearest resize of ui8 data (round_prefer_floor, half_pixel).",
                       x, [1.0, 1.0, 1.5, 2.0], "nearest", "half_pixel")


# --------------------------------------------------------------------------

TITLES = {
    EW: "Numeric tests of the elementwise tcc ops, lowered by --tcc-lower-to-linalg.",
    DM: "Numeric tests of the tcc data movement ops (broadcast, reshape, slice, pad, gather, scatter).",
    RED: "Numeric tests of the tcc reductions, arg-reductions and cumsum.",
    NN: "Numeric tests of tcc matmul, convolutions and pooling.",
    NORM: "Numeric tests of softmax, layer / batch norm, nll_loss and dropout.",
    RS: "Numeric tests of tcc.resize against the ONNX reference algorithm.",
}


def main():
    only = sys.argv[1:]
    for fname, builders in FILES.items():
        if only and fname not in only:
            continue
        cases = [build(fn, f"{fname}/{fn.__name__}") for fn in builders]
        write_file(fname, TITLES[fname], cases)
        print(f"wrote {fname}: {len(cases)} cases")


if __name__ == "__main__":
    main()
