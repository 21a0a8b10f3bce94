#!/usr/bin/env python3
"""onnx_backend_tests.py - runs the ONNX backend tests through tcc + tcc-run.

Standard library only (any python3 >= 3.6; no numpy, no onnx).

For every test directory under /usr/share/libonnx-testdata/data/{node,
pytorch-converted,pytorch-operator,simple} (model.onnx plus test_data_set_N/
with input_K.pb and output_K.pb) it compiles the model with `tcc`, runs each
data set with `tcc-run --infer`, and compares the .npy outputs with the
expected output_K.pb (rtol 1e-3, atol 1e-7 for floating point, NaN == NaN,
inf == inf; integers and booleans exactly; shapes must match).

When tcc needs a graph input's value at compile time (its error names
`--const-input NAME=FILE`), the model is compiled once per data set with
`--const-input NAME=input_K.pb` for the inputs so named; such tests are the
"constant" variant.

Each test is one of: passed, failed (wrong numbers or shapes), unsupported
(tcc exited with status 1; the reason is its first error line), crash (tcc or
tcc-run exited with another status or a signal), timeout (60 s). tcc-run
exiting with status 1 (it refused to load or run a compiled model) counts as
failed, with its error line as the reason.

The full run (a few minutes on two cores):

    python3 scripts/onnx_backend_tests.py --jobs 2 [--json results.json]

With --cuda-emulation every model is compiled for CUDA with host twins of
its kernels and run on the emulated CUDA device (docs/cuda-codegen.md
"Emulation"): the same numbers from the GPU code's mapping and library
contracts.

CI runs a fixed subset with a floor (ctest -R onnx-backend-subset):

    python3 scripts/onnx_backend_tests.py --subset test/e2e/backend-subset.txt \
        --floor-file test/e2e/backend-floor.txt

Exit status: 1 when any test crashed or timed out, or fewer than the floor
passed; else 0.
"""

import argparse
import collections
import concurrent.futures
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

DEFAULT_DATA = "/usr/share/libonnx-testdata/data"
DEFAULT_SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TIMEOUT = 60
RTOL, ATOL = 1e-3, 1e-7
CATEGORIES = ("passed", "failed", "unsupported", "crash", "timeout")


# --- A minimal protobuf wire-format reader. ---------------------------------

from protobuf_wire import fields as _fields, string_field as _string_field, varint as _varint


def read_model_io(path):
    """(graph inputs that are not initializers, graph outputs), in order."""
    with open(path, "rb") as f:
        model = f.read()
    graph = b""
    for field, wire, value in _fields(model):
        if field == 7 and wire == 2:
            graph = value
    inputs, outputs, inits = [], [], set()
    for field, wire, value in _fields(graph):
        if wire != 2:
            continue
        if field == 11:
            inputs.append(_string_field(value, 1))
        elif field == 12:
            outputs.append(_string_field(value, 1))
        elif field == 5:
            inits.add(_string_field(value, 8))
    return [i for i in inputs if i not in inits], outputs


# --- TensorProto and .npy readers. Values are flat Python lists. -------------

# ONNX data type -> (struct code, item size, kind) where kind is f/i/b.
ONNX_TYPES = {
    1: ("f", 4, "f"), 2: ("B", 1, "i"), 3: ("b", 1, "i"), 4: ("H", 2, "i"),
    5: ("h", 2, "i"), 6: ("i", 4, "i"), 7: ("q", 8, "i"), 9: ("?", 1, "b"),
    10: ("e", 2, "f"), 11: ("d", 8, "f"), 12: ("I", 4, "i"),
    13: ("Q", 8, "i"),
}
ONNX_NAMES = {1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16",
              6: "int32", 7: "int64", 8: "string", 9: "bool", 10: "float16",
              11: "double", 12: "uint32", 13: "uint64", 16: "bfloat16"}


def _packed(wire, value, code, size):
    """Values of a repeated scalar field: packed (wire 2) or one element."""
    if code in "fd":
        if wire == 2:
            return list(struct.unpack("<%d%s" % (len(value) // size, code),
                                      value))
        return [struct.unpack("<" + code, value)[0]]
    # varint
    if wire == 0:
        return [value]
    out, pos = [], 0
    while pos < len(value):
        v, pos = _varint(value, pos)
        out.append(v)
    return out


def _signed(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def read_tensor(path):
    """(name, onnx data type, dims, flat values) of a TensorProto file."""
    with open(path, "rb") as f:
        buf = f.read()
    dims, dtype, name, raw = [], 1, "", None
    floats, int32s, int64s, doubles, uint64s = [], [], [], [], []
    for field, wire, value in _fields(buf):
        if field == 1:
            dims.extend(_packed(wire, value, "q", 8))
        elif field == 2:
            dtype = value
        elif field == 4:
            floats.extend(_packed(wire, value, "f", 4))
        elif field == 5:
            int32s.extend(_packed(wire, value, "q", 8))
        elif field == 7:
            int64s.extend(_packed(wire, value, "q", 8))
        elif field == 8:
            name = value.decode("utf-8", "replace")
        elif field == 9:
            raw = value
        elif field == 10:
            doubles.extend(_packed(wire, value, "d", 8))
        elif field == 11:
            uint64s.extend(_packed(wire, value, "q", 8))
    dims = [_signed(d, 64) for d in dims]
    if dtype not in ONNX_TYPES:
        raise ValueError("unsupported tensor type %s"
                         % ONNX_NAMES.get(dtype, dtype))
    code, size, _ = ONNX_TYPES[dtype]
    count = 1
    for d in dims:
        count *= d
    if raw is not None:
        values = list(struct.unpack("<%d%s" % (len(raw) // size, code), raw))
    elif dtype == 1:
        values = floats
    elif dtype == 11:
        values = doubles
    elif dtype == 7:
        values = [_signed(v, 64) for v in int64s]
    elif dtype in (12, 13):
        values = uint64s
    elif dtype == 10:
        # float16 bits are stored in int32_data
        values = [struct.unpack("<e", struct.pack("<H", v & 0xFFFF))[0]
                  for v in int32s]
    elif dtype == 9:
        values = [bool(v) for v in int32s]
    elif dtype in (3, 5, 6):
        values = [_signed(v, 32) for v in int32s]
    else:
        values = [v & 0xFFFFFFFF for v in int32s]
    if len(values) != count:
        raise ValueError("%s holds %d values for shape %s"
                         % (path, len(values), dims))
    return name, dtype, dims, values


NPY_TYPES = {"f4": ("f", 4, "f"), "f8": ("d", 8, "f"), "f2": ("e", 2, "f"),
             "i1": ("b", 1, "i"), "i2": ("h", 2, "i"), "i4": ("i", 4, "i"),
             "i8": ("q", 8, "i"), "u1": ("B", 1, "i"), "u2": ("H", 2, "i"),
             "u4": ("I", 4, "i"), "u8": ("Q", 8, "i"), "b1": ("?", 1, "b")}


def read_npy(path):
    """(descr, shape, flat values) of a C-order .npy file."""
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:6] != b"\x93NUMPY":
        raise ValueError("%s is not a .npy file" % path)
    major = buf[6]
    if major == 1:
        hlen, start = struct.unpack("<H", buf[8:10])[0], 10
    else:
        hlen, start = struct.unpack("<I", buf[8:12])[0], 12
    header = buf[start:start + hlen].decode("latin-1")
    descr = re.search(r"'descr':\s*'([^']*)'", header).group(1)
    fortran = re.search(r"'fortran_order':\s*(\w+)", header).group(1)
    shape_s = re.search(r"'shape':\s*\(([^)]*)\)", header).group(1)
    shape = [int(s) for s in shape_s.split(",") if s.strip()]
    if fortran != "False":
        raise ValueError("%s: fortran order" % path)
    key = descr[1:] if descr[0] in "<>|=" else descr
    if key not in NPY_TYPES or descr[0] == ">":
        raise ValueError("%s: unsupported dtype %s" % (path, descr))
    code, size, _ = NPY_TYPES[key]
    data = buf[start + hlen:]
    count = 1
    for d in shape:
        count *= d
    values = list(struct.unpack("<%d%s" % (count, code), data[:count * size]))
    return key, shape, values


# --- Comparison. -------------------------------------------------------------

def compare(expected, actual):
    """None when equal within tolerance, else a short reason."""
    _, dtype, edims, evals = expected
    key, ashape, avals = actual
    kind = ONNX_TYPES[dtype][2]
    akind = NPY_TYPES[key][2]
    if list(edims) != list(ashape):
        return "shape mismatch: expected %s, got %s" % (edims, ashape)
    if kind != akind:
        return "dtype mismatch: expected %s, got %s" % (
            ONNX_NAMES.get(dtype, dtype), key)
    if kind != "f":
        bad = sum(1 for e, a in zip(evals, avals) if e != a)
        if bad:
            i = next(i for i, (e, a) in enumerate(zip(evals, avals)) if e != a)
            return "%d of %d values differ (first at %d: expected %s, got %s)" \
                % (bad, len(evals), i, evals[i], avals[i])
        return None
    bad, max_abs, max_rel = 0, 0.0, 0.0
    for e, a in zip(evals, avals):
        if e == a or (math.isnan(e) and math.isnan(a)):
            continue
        if math.isnan(e) or math.isnan(a) or math.isinf(e) or math.isinf(a):
            bad += 1
            max_abs = max_rel = float("inf")
            continue
        d = abs(e - a)
        if d > ATOL + RTOL * abs(e):
            bad += 1
            max_abs = max(max_abs, d)
            max_rel = max(max_rel, d / abs(e) if e else float("inf"))
    if bad:
        return "%d of %d values off: max abs err %.3g, max rel err %.3g" % (
            bad, len(evals), max_abs, max_rel)
    return None


# --- Running one test. -------------------------------------------------------

def _first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[0].strip() if lines else "(no message)"


def _reason_key(reason):
    """The reason without paths and node names, for the histogram."""
    r = re.sub(r"^tcc(-run)?: error: ", "", reason)
    r = re.sub(r"^\S*model\.onnx: ", "", r)
    r = re.sub(r"^\S*\.(pb|so): ", "", r)
    r = re.sub(r"/tmp/\S*\.so", "M.so", r)
    r = re.sub(r" \(first used by node '[^']*'\)", "", r)
    r = re.sub(r"node '[^']*': ", "", r)
    r = re.sub(r"^test_data_set_\d+: output '[^']*': ", "", r)
    if "values off: max abs err" in r:
        r = "wrong values (beyond rtol 1e-3, atol 1e-7)"
    r = re.sub(r"'[^']*'", "'_'", r)
    r = re.sub(r"\d+", "N", r)
    return r[:140]


def _run(cmd, env=None):
    """(status, combined output); status is 'timeout' on a timeout."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    return p.returncode, p.stdout.decode("utf-8", "replace")


def run_test(args, suite, name):
    tdir = os.path.join(args.data, suite, name)
    result = {"suite": suite, "test": name, "status": None, "reason": "",
              "constant": False}
    try:
        inputs, outputs = read_model_io(os.path.join(tdir, "model.onnx"))
    except (ValueError, OSError) as e:
        result.update(status="unsupported", reason="reading model: %s" % e)
        return result
    sets = sorted((d for d in os.listdir(tdir) if d.startswith("test_data_set")),
                  key=lambda d: int(d.rsplit("_", 1)[1]))
    tmp = tempfile.mkdtemp(prefix="tcc-backend-")
    try:
        consts = []
        compiled = None  # the artifact when it does not depend on the set
        for si, ds in enumerate(sets):
            dpath = os.path.join(tdir, ds)
            in_files = {n: os.path.join(dpath, "input_%d.pb" % k)
                        for k, n in enumerate(inputs)}
            so = os.path.join(tmp, "m%d.so" % si)
            if compiled is None or consts:
                while True:
                    cmd = [args.tcc, os.path.join(tdir, "model.onnx"), "-o", so]
                    if args.cuda_emulation:
                        cmd += ["--target=cuda", "--cuda-emulation"]
                    for c in consts:
                        cmd += ["--const-input", "%s=%s" % (c, in_files[c])]
                    st, out = _run(cmd)
                    if st == 0:
                        break
                    if st == "timeout":
                        result.update(status="timeout", reason="tcc timed out")
                        return result
                    if st != 1:
                        result.update(status="crash", reason="tcc exit %s: %s"
                                      % (st, _first_error(out)))
                        return result
                    wanted = [m for m in re.findall(
                        r"--const-input (\S+?)=FILE", out)
                        if m in in_files and m not in consts]
                    if not wanted:
                        result.update(status="unsupported",
                                      reason=_first_error(out))
                        return result
                    consts.extend(wanted)
                    result["constant"] = True
                compiled = so
            odir = os.path.join(tmp, "out%d" % si)
            cmd = [args.tcc_run, compiled, "--infer", "--output-dir", odir,
                   "--threads", "1"]
            for n in inputs:
                if n not in consts:
                    cmd += ["--input", "%s=%s" % (n, in_files[n])]
            env = None
            if args.cuda_emulation:
                env = dict(os.environ, TCC_CUDA_DEVICE="emulated")
            st, out = _run(cmd, env)
            if st == "timeout":
                result.update(status="timeout", reason="tcc-run timed out")
                return result
            if st == 1:
                # The model compiled but tcc-run refused to load or run it.
                result.update(status="failed", reason=_first_error(out))
                return result
            if st != 0:
                result.update(status="crash", reason="tcc-run exit %s: %s"
                              % (st, _first_error(out)))
                return result
            for k, oname in enumerate(outputs):
                epath = os.path.join(dpath, "output_%d.pb" % k)
                if not os.path.exists(epath):
                    continue
                apath = os.path.join(odir, oname.replace("/", "_") + ".npy")
                if not os.path.exists(apath):
                    result.update(status="failed",
                                  reason="output '%s' not written" % oname)
                    return result
                try:
                    why = compare(read_tensor(epath), read_npy(apath))
                except (ValueError, struct.error) as e:
                    why = "cannot compare: %s" % e
                if why:
                    result.update(status="failed", reason="%s: output '%s': %s"
                                  % (ds, oname, why))
                    return result
        result["status"] = "passed"
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- Driver. -----------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tcc", default=os.path.join(ROOT, "build/bin/tcc"))
    ap.add_argument("--tcc-run", default=os.path.join(ROOT, "build/bin/tcc-run"))
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--suite", action="append",
                    help="suite directory to run (repeatable; default: %s)"
                    % ", ".join(DEFAULT_SUITES))
    ap.add_argument("--filter", help="run only tests whose suite/name matches")
    ap.add_argument("--subset", help="file listing suite/test names to run")
    ap.add_argument("--json", help="write the results as JSON here")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--cuda-emulation", action="store_true",
                    help="compile for CUDA with host twins (--target=cuda --cuda-emulation) "
                         "and run on the emulated device (TCC_CUDA_DEVICE=emulated)")
    ap.add_argument("--floor", type=int, help="exit 1 when fewer pass")
    ap.add_argument("--floor-file", help="file holding the floor")
    args = ap.parse_args()
    # A bare name (lit puts the build's tools on PATH) is looked up there.
    args.tcc = shutil.which(args.tcc) or args.tcc
    args.tcc_run = shutil.which(args.tcc_run) or args.tcc_run
    for tool in (args.tcc, args.tcc_run):
        if not os.access(tool, os.X_OK):
            sys.exit("error: %s is not an executable" % tool)
    floor = args.floor
    if args.floor_file:
        with open(args.floor_file) as f:
            floor = int(f.read().split()[0])

    tests = []
    if args.subset:
        with open(args.subset) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    suite, name = line.split("/", 1)
                    tests.append((suite, name))
        if args.suite:
            tests = [t for t in tests if t[0] in args.suite]
    else:
        for suite in args.suite or DEFAULT_SUITES:
            sdir = os.path.join(args.data, suite)
            if not os.path.isdir(sdir):
                print("warning: %s is missing" % sdir, file=sys.stderr)
                continue
            for name in sorted(os.listdir(sdir)):
                if os.path.exists(os.path.join(sdir, name, "model.onnx")):
                    tests.append((suite, name))
    if args.filter:
        rx = re.compile(args.filter)
        tests = [t for t in tests if rx.search("%s/%s" % t)]
    missing = [t for t in tests
               if not os.path.isdir(os.path.join(args.data, *t))]
    for t in missing:
        print("warning: no test %s/%s" % t, file=sys.stderr)
    tests = [t for t in tests if t not in missing]

    start = time.time()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futs = [pool.submit(run_test, args, s, n) for s, n in tests]
        for fut in futs:
            r = fut.result()
            results.append(r)
            if args.verbose or r["status"] in ("crash", "timeout"):
                print("%-11s %s/%s%s%s" % (
                    r["status"].upper(), r["suite"], r["test"],
                    " (constant)" if r["constant"] else "",
                    ": " + r["reason"] if r["reason"] else ""), flush=True)
    elapsed = time.time() - start

    suites = []
    for r in results:
        if r["suite"] not in suites:
            suites.append(r["suite"])
    print("\n%-20s %6s %6s %6s %11s %5s %7s %8s" % (
        "suite", "total", "passed", "failed", "unsupported", "crash",
        "timeout", "constant"))
    totals = collections.Counter()
    for suite in suites + ["all"]:
        rs = [r for r in results if suite in ("all", r["suite"])]
        c = collections.Counter(r["status"] for r in rs)
        const = sum(1 for r in rs if r["constant"] and r["status"] == "passed")
        print("%-20s %6d %6d %6d %11d %5d %7d %8d" % (
            suite, len(rs), c["passed"], c["failed"], c["unsupported"],
            c["crash"], c["timeout"], const))
        if suite == "all":
            totals = c
    print("(constant: passed tests that fixed an input with --const-input)")
    for status in ("failed", "unsupported"):
        hist = collections.Counter(_reason_key(r["reason"]) for r in results
                                   if r["status"] == status)
        if not hist:
            continue
        print("\n%s reasons:" % status)
        for reason, n in hist.most_common():
            ex = next(r["test"] for r in results if r["status"] == status
                      and _reason_key(r["reason"]) == reason)
            print("  %4d  %s  (e.g. %s)" % (n, reason, ex))
    fails = [r for r in results if r["status"] == "failed"]
    if fails and (args.verbose or len(fails) <= 60):
        print("\nfailed tests:")
        for r in fails:
            print("  %s/%s: %s" % (r["suite"], r["test"], r["reason"]))
    print("\n%d tests in %.1f s" % (len(results), elapsed))

    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    status = 0
    if totals["crash"] or totals["timeout"]:
        print("FAIL: %d crash(es), %d timeout(s)"
              % (totals["crash"], totals["timeout"]))
        status = 1
    if floor is not None:
        if totals["passed"] < floor:
            print("FAIL: %d passed, below the floor of %d"
                  % (totals["passed"], floor))
            status = 1
        else:
            print("%d passed (floor %d)" % (totals["passed"], floor))
    return status


if __name__ == "__main__":
    sys.exit(main())
