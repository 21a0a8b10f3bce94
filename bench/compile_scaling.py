#!/usr/bin/python3
"""Compile-time scaling of tcc in model size (Debian's /usr/bin/python3,
standard library only; no ONNX package: the models are textual .onnxtxt).

For each case and size n it writes one model, compiles it once to a .so with
the tcc under test, and prints the wall and CPU (user + system) seconds and
the ratios time(n) / time(previous n) of both (x wall, x cpu): with sizes
doubling, about 2 is linear and 4 quadratic. Cases:

  chain        x -> Sigmoid -> Tanh -> Sigmoid -> ... (n nodes), inference
  chain-train  the same after a Mul by one parameter, --loss=mse (train_step,
               eval_step and infer)
  relu         x -> Relu -> Relu -> ... (n nodes), --fusion=none
  wide         n branches Sigmoid(x + c_i) (c_i a parameter) summed by a
               chain of n - 1 Adds, inference

All tensors are float[64]. Usage:

  bench/compile_scaling.py [--tcc build/bin/tcc] [--sizes 1000,2000,4000,8000]
                           [--cases chain,relu,wide,chain-train] [--timeout 900]
                           [--json out.json]

Times are of one machine at one moment (compile in parallel with nothing
else); the test suite never asserts them.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HEADER = '<ir_version: 8, opset_import: ["" : 18]>'


def chain(n, train=False):
    lines, prev, inits = [], "x", []
    if train:
        inits.append("float[1] w = {0.5}")
        lines.append("  x0 = Mul(x, w)")
        prev = "x0"
    for i in range(n):
        op = "Sigmoid" if i % 2 == 0 else "Tanh"
        out = "y" if i == n - 1 else "t%d" % i
        lines.append("  %s = %s(%s)" % (out, op, prev))
        prev = out
    return lines, inits


def relu(n):
    lines, prev = [], "x"
    for i in range(n):
        out = "y" if i == n - 1 else "t%d" % i
        lines.append("  %s = Relu(%s)" % (out, prev))
        prev = out
    return lines, []


def wide(n):
    lines, inits, prev = [], [], None
    for i in range(n):
        inits.append("float[1] c%d = {%.3f}" % (i, (i + 1) * 0.001))
        lines.append("  a%d = Add(x, c%d)" % (i, i))
        lines.append("  b%d = Sigmoid(a%d)" % (i, i))
        if prev is None:
            prev = "b0"
        else:
            out = "y" if i == n - 1 else "s%d" % i
            lines.append("  %s = Add(%s, b%d)" % (out, prev, i))
            prev = out
    return lines, inits


CASES = {
    "chain": (lambda n: chain(n), []),
    "chain-train": (lambda n: chain(n, train=True), ["--loss=mse"]),
    "relu": (relu, ["--fusion=none"]),
    "wide": (wide, []),
}


def model_text(lines, inits):
    text = [HEADER, "g (float[64] x) => (float[64] y)"]
    if inits:
        text.append("<" + ", ".join(inits) + ">")
    return "\n".join(text + ["{"] + lines + ["}"]) + "\n"


def compile_once(tcc, path, flags, out, timeout):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    try:
        p = subprocess.run([tcc, path, "-o", out] + flags, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=timeout)
        status = "ok" if p.returncode == 0 else "exit %d: %s" % (
            p.returncode, p.stderr.strip().splitlines()[-1:] or "")
    except subprocess.TimeoutExpired:
        status = "timeout (%d s)" % timeout
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tcc", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "tcc"))
    ap.add_argument("--sizes", default="1000,2000,4000,8000")
    ap.add_argument("--cases", default="chain,relu,wide,chain-train")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per compile")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = []
    with tempfile.TemporaryDirectory(prefix="tcc-scaling-") as work:
        print("%-12s %6s %9s %9s %6s %6s  %s" % ("case", "n", "wall s", "cpu s", "x wall", "x cpu",
                                                "status"))
        for case in args.cases.split(","):
            build, flags = CASES[case]
            previous = None  # (wall, cpu) of the previous size
            for n in sizes:
                path = os.path.join(work, "%s-%d.onnxtxt" % (case, n))
                with open(path, "w") as f:
                    f.write(model_text(*build(n)))
                out = os.path.join(work, "%s-%d.so" % (case, n))
                wall, cpu, status = compile_once(args.tcc, path, flags, out, args.timeout)
                ok = previous and status == "ok"
                rwall = "%.2f" % (wall / previous[0]) if ok else "-"
                rcpu = "%.2f" % (cpu / previous[1]) if ok else "-"
                print("%-12s %6d %9.1f %9.1f %6s %6s  %s" % (case, n, wall, cpu, rwall, rcpu, status))
                sys.stdout.flush()
                results.append({"case": case, "n": n, "wall_s": round(wall, 2),
                                "cpu_s": round(cpu, 2), "status": status})
                previous = (wall, cpu) if status == "ok" else None
                if status != "ok":
                    break  # larger sizes only take longer
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(r["status"] == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
