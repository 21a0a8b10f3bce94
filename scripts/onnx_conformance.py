#!/usr/bin/env python3
"""onnx_conformance.py - how much of the ONNX backend test data tcc imports.

Runs `tcc MODEL --emit=mlir -o /dev/null --batch=1` on every model.onnx of the
ONNX test data (Debian package libonnx-testdata) and sorts each into
"imported" (imported, folded and verified) or a failure with a reason taken
from tcc's first error line. Prints per-directory counts and a histogram of the
reasons; crashes, internal errors and timeouts are always listed one by one.

Needs any python3 (standard library only):

    python3 scripts/onnx_conformance.py [--tcc build/bin/tcc] [--verbose]
                                        [--json results.json] [--real]

Exit status: 0, or 1 when tcc crashed (a signal or an exit status other than 0
and 1), hit an internal error, or timed out on some model.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys

DEFAULT_DATA = "/usr/share/libonnx-testdata/data"
DEFAULT_DIRS = ["node", "pytorch-converted", "pytorch-operator", "simple"]

# Categories that make the script fail and are listed model by model.
FATAL = ("crash", "internal error", "timeout")


# --- A minimal protobuf reader: just enough of ModelProto to tell whether a
# --- value that tcc needs at compile time is computed from a graph input.

from protobuf_wire import fields as _fields, string_field as _string_field, varint as _varint


def read_graph(path):
    """The graph's inputs (without initializers), initializer names and nodes
    as (op_type, inputs, outputs); None when the file does not parse."""
    try:
        with open(path, "rb") as f:
            model = f.read()
        graph = None
        for field, wire, value in _fields(model):
            if field == 7 and wire == 2:  # ModelProto.graph
                graph = value
        if graph is None:
            return None
        inputs, inits, nodes = [], set(), []
        for field, wire, value in _fields(graph):
            if wire != 2:
                continue
            if field == 11:  # GraphProto.input: ValueInfoProto, name = 1
                inputs.append(_string_field(value, 1))
            elif field == 5:  # GraphProto.initializer: TensorProto, name = 8
                inits.add(_string_field(value, 8))
            elif field == 1:  # GraphProto.node: input 1, output 2, op_type 4
                ins, outs, op = [], [], ""
                for f, w, v in _fields(value):
                    if w != 2:
                        continue
                    if f == 1:
                        ins.append(v.decode("utf-8", "replace"))
                    elif f == 2:
                        outs.append(v.decode("utf-8", "replace"))
                    elif f == 4:
                        op = v.decode("utf-8", "replace")
                nodes.append((op, ins, outs))
        return [i for i in inputs if i not in inits], inits, nodes
    except (OSError, ValueError, IndexError):
        return None


def fed_by_graph_input(path, value):
    """Whether `value` is a graph input or is computed from one."""
    graph = read_graph(path)
    if graph is None:
        return None
    inputs, _, nodes = graph
    dynamic = set(inputs)
    changed = True
    while changed:  # nodes may be out of order; iterate to a fixed point
        changed = False
        for _, ins, outs in nodes:
            if any(i in dynamic for i in ins):
                for o in outs:
                    if o and o not in dynamic:
                        dynamic.add(o)
                        changed = True
    return value in dynamic


# --- Running tcc and classifying its answer.

ERROR_RE = re.compile(r"^tcc: (?:internal )?error: (.*)$")


def first_error(stderr):
    for line in stderr.splitlines():
        if line.startswith("tcc: internal error:") or ERROR_RE.match(line):
            return line
    lines = [l for l in stderr.splitlines() if l.strip()]
    return lines[0] if lines else ""


def strip_location(line):
    """`tcc: error: FILE: node 'N': msg` -> ('N', 'msg')."""
    m = ERROR_RE.match(line)
    msg = m.group(1) if m else line
    node = None
    m = re.match(r"^.*?: node '((?:[^']|'(?!: ))*)': (.*)$", msg)
    if m:
        node, msg = m.group(1), m.group(2)
    else:
        m = re.match(r"^\S+?\.(?:onnx|onnxtxt|txt)(?::\d+:\d+)?: (.*)$", msg)
        if m:
            msg = m.group(1)
    return node, msg


def classify(path, returncode, stderr, timed_out):
    """Returns (category, first error line, unsupported operators)."""
    if timed_out:
        return "timeout", "", []
    line = first_error(stderr)
    if returncode == 0:
        return "imported", "", []
    if returncode != 1:
        how = ("signal %d" % -returncode if returncode < 0
               else "exit status %d" % returncode)
        return "crash", ("%s: %s" % (how, line)) if line else how, []
    if line.startswith("tcc: internal error:"):
        return "internal error", line, []
    node, msg = strip_location(line)

    m = re.match(r"^\d+ unsupported operator types?: (.*)$", msg)
    if m:
        ops = re.findall(r"(?:^|, )(\S+)(?: \((?:introduced|removed|domain|operator)"
                         r"[^)]*\))? \(first used by node", m.group(1))
        ops = ops or [m.group(1)]
        return "unsupported operator %s" % ops[0], line, ops
    m = re.search(r"has element type (\S+), which tcc does not support", msg)
    if m:
        return "unsupported element type %s" % m.group(1), line, []
    m = re.search(r"cannot cast to (\S+), which tcc does not support", msg)
    if m:
        return "unsupported element type %s" % m.group(1), line, []
    if re.search(r"dimension \d+ is (?:symbolic|unknown)", msg):
        return "symbolic dimension", line, []
    if "is not a tensor; tcc imports tensors only" in msg:
        return "non-tensor graph value (sequence, map, optional)", line, []
    if "has no shape; tcc compiles static shapes" in msg:
        return "graph value without a shape", line, []
    if re.search(r"uses ONNX opset \d+; tcc supports", msg):
        return "unsupported opset", line, []
    if "is not a valid ONNX" in msg:
        return "unparsable model", line, []
    m = re.search(r"\('([^']*)'\) must be (?:known when compiling|a "
                  r"compile-time constant)", msg)
    if m:
        # Expected while tcc compiles static shapes, when the value comes
        # from a graph input; an importer bug when it does not.
        if fed_by_graph_input(path, m.group(1)):
            return ("shape must be known at compile time "
                    "(graph input feeds a shape operand)"), line, []
        return ("shape must be known at compile time "
                "(computed from constants but not folded)"), line, []
    if "imports no version of the default ONNX operator set" in msg:
        return "no default-domain opset (other domains only)", line, []
    if re.search(r"graph output '.*' is declared with shape", msg):
        return "declared output shape differs from the inferred one", line, []
    if re.search(r"graph output '.*' is declared as .* but computes", msg):
        return "declared output type differs from the inferred one", line, []
    m = re.match(r"^'([\w.]+)' op ", msg)
    if m:
        return "IR verifier: %s" % m.group(1), line, []
    m = re.match(r"^(\w+): ", msg)
    if m:
        return "other (%s)" % m.group(1), line, []
    return "other", line, []


def run_one(tcc, path, timeout, batch):
    cmd = [tcc, path, "--emit=mlir", "-o", os.devnull, "--batch=%d" % batch]
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
        stderr = p.stderr.decode("utf-8", "replace")
        # Most backend models fix their batch: tcc refuses a --batch that
        # binds nothing, so those run without it.
        if p.returncode != 0 and "binds nothing" in stderr:
            p = subprocess.run(cmd[:-1], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=timeout)
            stderr = p.stderr.decode("utf-8", "replace")
        return classify(path, p.returncode, stderr, False)
    except subprocess.TimeoutExpired:
        return classify(path, None, "", True)


def find_models(data, directory):
    root = os.path.join(data, directory)
    models = []
    for dirpath, _, files in os.walk(root):
        if "model.onnx" in files:
            models.append(os.path.join(dirpath, "model.onnx"))
    return sorted(models)


def model_name(data, path):
    return os.path.relpath(os.path.dirname(path), data)


def report(title, results, verbose):
    print("== %s" % title)
    by_dir = collections.OrderedDict()
    for r in results:
        by_dir.setdefault(r["dir"], []).append(r)
    total_ok = total = 0
    for d, rs in by_dir.items():
        ok = sum(r["category"] == "imported" for r in rs)
        total_ok += ok
        total += len(rs)
        print("  %-20s %4d / %4d imported" % (d, ok, len(rs)))
    if len(by_dir) > 1:
        print("  %-20s %4d / %4d imported" % ("all", total_ok, total))
    failures = [r for r in results if r["category"] != "imported"]
    if failures:
        print("\n  failure reasons (models):")
        hist = collections.Counter(r["category"] for r in failures)
        for cat, n in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])):
            print("  %5d  %s" % (n, cat))
        ops = collections.Counter(op for r in failures for op in r["operators"])
        if ops:
            print("\n  unsupported operators (models that use each):")
            for op, n in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0])):
                print("  %5d  %s" % (n, op))
    fatal = [r for r in results if r["category"] in FATAL]
    if fatal:
        print("\n  crashes, internal errors and timeouts:")
        for r in fatal:
            print("    %-16s %s  %s" % (r["category"], r["model"], r["error"]))
    if verbose and failures:
        print("\n  failing models:")
        for r in sorted(failures, key=lambda r: (r["category"], r["model"])):
            print("    %s\n        %s" % (r["model"], r["error"] or r["category"]))
    print()
    return fatal


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tcc", default="build/bin/tcc", help="the tcc binary")
    ap.add_argument("--data", default=DEFAULT_DATA,
                    help="the ONNX test data (default: %(default)s)")
    ap.add_argument("--dirs", nargs="+", default=DEFAULT_DIRS,
                    help="directories of the test data to run")
    ap.add_argument("--real", action="store_true",
                    help="also run data/real (whole networks), reported apart")
    ap.add_argument("--jobs", type=int, default=2, help="parallel tcc runs")
    ap.add_argument("--timeout", type=float, default=30,
                    help="seconds per model (default: %(default)s)")
    ap.add_argument("--batch", type=int, default=1,
                    help="--batch passed to tcc (binds symbolic batch sizes)")
    ap.add_argument("--verbose", action="store_true",
                    help="list every failing model with its first error")
    ap.add_argument("--json", metavar="FILE", help="write all results here")
    args = ap.parse_args()

    if not os.access(args.tcc, os.X_OK):
        sys.exit("onnx_conformance.py: no tcc binary at '%s' (use --tcc)" %
                 args.tcc)
    groups = [("ONNX backend tests", args.dirs)]
    if args.real:
        groups.append(("real networks", ["real"]))

    jobs = []
    for title, dirs in groups:
        for d in dirs:
            for m in find_models(args.data, d):
                jobs.append((title, d, m))

    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_one, os.path.abspath(args.tcc), m,
                               args.timeout, args.batch): (t, d, m)
                   for t, d, m in jobs}
        for fut in concurrent.futures.as_completed(futures):
            title, d, m = futures[fut]
            category, error, ops = fut.result()
            results.append({"group": title, "dir": d,
                            "model": model_name(args.data, m), "path": m,
                            "category": category, "error": error,
                            "operators": ops})
    order = {d: i for i, d in enumerate(args.dirs + ["real"])}
    results.sort(key=lambda r: (order.get(r["dir"], 99), r["model"]))

    fatal = []
    for title, dirs in groups:
        rs = [r for r in results if r["group"] == title]
        if not rs:
            print("== %s\n  no model.onnx under %s\n" %
                  (title, ", ".join(os.path.join(args.data, d) for d in dirs)))
            continue
        fatal += report(title, rs, args.verbose)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tcc": args.tcc, "data": args.data,
                       "results": results}, f, indent=1)
    return 1 if fatal else 0


if __name__ == "__main__":
    sys.exit(main())
