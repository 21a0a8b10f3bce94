#!/usr/bin/env python3
"""infer_bench.py - tcc-compiled inference against onnxruntime, one process.

For each model it
  1. compiles the ONNX file with `tcc MODEL -o OUT.so` and times that
     (wall clock of the tcc process: parsing, optimization, LLVM codegen and
     linking);
  2. loads OUT.so into libtcc_runtime through ctypes (bench/tcc_runtime.py)
     and creates a session with num_threads = --threads;
  3. creates an onnxruntime InferenceSession on the same ONNX file with the
     CPU execution provider, intra_op_num_threads = --threads,
     inter_op_num_threads = 1, sequential execution and every graph
     optimization enabled (ORT_ENABLE_ALL);
  4. feeds both the same random inputs (fixed seed; floats uniform in
     [-1, 1), integers in [0, 4), booleans random) and checks that their
     outputs agree (rtol 1e-3, atol 1e-4; the largest absolute difference is
     printed, a mismatch is reported loudly and the run goes on);
  5. times both, interleaved (below), and reports median, p10 and p90.

What one timed iteration is
  tcc: tcc_session_set_input for every input (a copy into the session's
       arena), tcc_session_run(session, "infer"), tcc_session_copy_output
       for every output into a preallocated numpy array.
  ORT: session.run(None, feeds): binding the numpy inputs, the run, and
       returning the outputs as numpy arrays.
  Both therefore include getting the inputs in and the outputs out, as an
  application has to. Both are driven from the same Python loop, so each
  carries a few microseconds of interpreter and binding overhead; that only
  matters for the smallest models (tens of microseconds).

Interleaving
  After --warmup untimed iterations of each engine, the --iters timed
  iterations of each are taken in blocks of --block: a block of tcc, then a
  block of ORT, then tcc again, and so on, so that slow phases of a noisy
  machine hit both engines. Before each block the benchmark sleeps 0.25 s so
  that the other engine's spinning worker threads have gone idle. Each block
  starts with one untimed iteration,
  which absorbs the switch from the other engine (its data in the caches,
  ORT's worker threads spinning for a moment after a run).

Ratio = ORT median / tcc median: above 1 means tcc is faster.

Cores used = the process's CPU time (every thread) over the wall time of an
engine's timed blocks: ~1.0 means that engine computed on one core whatever
--threads says; up to --threads when all its threads were busy (ORT's
workers spin while they wait for work, which counts as busy). Shown as "-"
when the engine's timed blocks took under 0.2 s in all, too short for the
process CPU clock.

Models: the generated MLP and CNN of bench/models.py, and a few ONNX backend
test models from /usr/share/libonnx-testdata/data (--backend-tests). A model
that tcc cannot compile or run is reported as such, with tcc's first error
line, and the benchmark goes on.

Exit status: 0 when every model compiled, ran and matched ORT; 1 otherwise
(the table is printed either way); 2 for a usage error (e.g. no tcc found).

Usage:
    bench/run.sh [options]                  (sets up bench/.venv first)
    bench/.venv/bin/python bench/infer_bench.py [options]
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import models  # noqa: E402  (bench/models.py)
from tcc_runtime import TccError, TccRuntime  # noqa: E402

try:
    import onnxruntime as ort
except ImportError:  # pragma: no cover - reported in main()
    ort = None
else:
    # Errors only: hide ORT's warnings (e.g. "opset 6 model" for old backend test models).
    ort.set_default_logger_severity(3)

DEFAULT_DATA = "/usr/share/libonnx-testdata/data"
# Backend test models with the most compute among those tcc compiles; the
# last one is tiny on purpose: it shows the fixed per-call overhead.
DEFAULT_BACKEND_TESTS = [
    "pytorch-operator/test_operator_conv",  # Conv 16->13 3x3 on [20,16,50,40]
    "pytorch-converted/test_MaxPool2d_stride_padding_dilation",  # [1,1,1000,1000]
    "node/test_averagepool_3d_default",  # AveragePool 2x2x2 on [1,3,32,32,32]
    "pytorch-converted/test_ConvTranspose2d",  # [1,3,7,6]: overhead-bound
]
RTOL, ATOL = 1e-3, 1e-4
# Pause before each block: longer than libomp's default spin time (200 ms).
SPIN_SETTLE_S = 0.25

# Cores used is only reported for an engine whose timed blocks took this long.
MIN_CORES_WALL_NS = 200_000_000


# --- Locating tcc and its runtime. -------------------------------------------


def die(message):
    """Ends the run for a usage or setup error (exit status 2)."""
    print(f"infer_bench: {message}", file=sys.stderr)
    sys.exit(2)


def find_tools(args):
    """(tcc path, libtcc_runtime path), from --tcc / --runtime-lib, else from
    the build folder in either layout: BUILD/bin/tcc + BUILD/lib/libtcc_runtime.so
    (a CMake build tree) or BUILD/tcc + BUILD/libtcc_runtime.so (a flat copy)."""
    build = args.build_dir or os.environ.get("TCC_BUILD_DIR") or os.path.join(ROOT, "build")

    def pick(override, candidates, what):
        if override:
            if not os.path.isfile(override):
                die(f"{what} {override} does not exist")
            return os.path.abspath(override)
        for c in candidates:
            if os.path.isfile(c):
                return os.path.abspath(c)
        die(
            f"no {what} in {build} (looked for {', '.join(candidates)}); "
            f"build tcc, or pass --build-dir / TCC_BUILD_DIR, or --tcc / --runtime-lib"
        )

    tcc = pick(args.tcc, [os.path.join(build, "bin", "tcc"), os.path.join(build, "tcc")], "tcc")
    lib = pick(
        args.runtime_lib,
        [os.path.join(build, "lib", "libtcc_runtime.so"), os.path.join(build, "libtcc_runtime.so")],
        "libtcc_runtime.so",
    )
    return tcc, lib


# --- One model. ------------------------------------------------------------


def compile_model(tcc, model_path, out_so):
    """Runs tcc; returns (seconds, None) or (seconds, first error line)."""
    start = time.perf_counter()
    proc = subprocess.run([tcc, model_path, "-o", out_so], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        error = next((line for line in lines if "error" in line), lines[0] if lines else "")
        return seconds, f"tcc exited with status {proc.returncode}: {error.strip()}"
    return seconds, None


def random_inputs(tensors, seed):
    """{name: array} for the artifact's input tensors, drawn from SEED."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for t in tensors:
        if t.dtype is None:
            raise TccError(f"input {t.name} has a dtype (code {t.dtype_code}) numpy cannot hold")
        if t.dtype.kind == "f":
            a = rng.uniform(-1.0, 1.0, t.shape)
        elif t.dtype.kind == "b":
            a = rng.integers(0, 2, t.shape)
        else:
            a = rng.integers(0, 4, t.shape)
        feeds[t.name] = np.ascontiguousarray(a.astype(t.dtype))
    return feeds


def ort_session(model_path, threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])


def compare(tcc_outputs, ort_outputs):
    """{'ok', 'max_abs_diff', 'detail'} for the outputs of both engines."""
    ok, worst, detail = True, 0.0, []
    for name, expected in ort_outputs.items():
        got = tcc_outputs.get(name)
        if got is None:
            ok = False
            detail.append(f"{name}: tcc has no such output")
            continue
        if got.shape != expected.shape:
            ok = False
            detail.append(f"{name}: shape {list(got.shape)} vs ORT {list(expected.shape)}")
            continue
        g, e = got.astype(np.float64), expected.astype(np.float64)
        diff = float(np.max(np.abs(g - e))) if g.size else 0.0
        if np.isnan(diff):
            diff = float("inf")
        worst = max(worst, diff)
        if not np.allclose(g, e, rtol=RTOL, atol=ATOL, equal_nan=True):
            ok = False
            bad = int(np.count_nonzero(~np.isclose(g, e, rtol=RTOL, atol=ATOL, equal_nan=True)))
            detail.append(f"{name}: {bad} of {g.size} elements differ (max abs diff {diff:.3g})")
    return {"ok": ok, "max_abs_diff": worst, "detail": detail}


def stats(samples_ns):
    ms = np.asarray(samples_ns, dtype=np.float64) / 1e6
    p10, p50, p90 = np.percentile(ms, [10, 50, 90])
    return {
        "median_ms": float(p50),
        "p10_ms": float(p10),
        "p90_ms": float(p90),
        "min_ms": float(ms.min()),
        "mean_ms": float(ms.mean()),
        "samples": len(ms),
    }


def time_interleaved(steps, warmup, iters, block):
    """Times each callable of STEPS ({engine: fn}) ITERS times, in alternating
    blocks of BLOCK iterations, each block led by one untimed call.

    Returns ({engine: [wall nanoseconds per call]}, {engine: cores used}),
    where cores used is the process's CPU time (all threads) over the wall
    time of that engine's timed blocks: about 1 for single-threaded code,
    up to the thread count when every thread computes (or spins). It is None
    when those blocks took under MIN_CORES_WALL_NS in all: over short
    windows the process CPU clock was seen to run ahead of the threads' own
    CPU times by up to tens of milliseconds on the 2-core VM (it reported 2
    cores for code that ran on one thread)."""
    clock, cpu_clock = time.perf_counter_ns, time.process_time_ns
    for fn in steps.values():
        for _ in range(warmup):
            fn()
    samples = {name: [] for name in steps}
    wall = dict.fromkeys(steps, 0)
    cpu = dict.fromkeys(steps, 0)
    done = 0
    while done < iters:
        n = min(block, iters - done)
        for name, fn in steps.items():
            out = samples[name]
            # Both engines' worker threads spin for a while after a parallel
            # region (libomp: KMP_BLOCKTIME, 200 ms; ORT: its spin policy);
            # let the other engine's go idle so they do not steal cores.
            time.sleep(SPIN_SETTLE_S)
            fn()  # lead-in after the other engine's block
            c0, w0 = cpu_clock(), clock()
            for _ in range(n):
                t0 = clock()
                fn()
                out.append(clock() - t0)
            cpu[name] += cpu_clock() - c0
            wall[name] += clock() - w0
        done += n
    return samples, {name: cpu[name] / wall[name] if wall[name] >= MIN_CORES_WALL_NS else None for name in steps}


def bench_model(result, rt, tcc, args):
    """Compiles, checks and times the model of RESULT (a record with "model"
    and "path"), filling in RESULT as it goes, so that what was measured
    before a failure (or an exception) is kept; returns RESULT."""
    name, model_path = result["model"], result["path"]
    out_so = os.path.join(args.work_dir, "artifacts", f"{name}.so")
    os.makedirs(os.path.dirname(out_so), exist_ok=True)

    result["compile_s"], error = compile_model(tcc, model_path, out_so)
    if error:
        result["error"] = f"tcc compile: {error.replace(model_path + ': ', '')}"
        return result

    try:
        artifact = rt.load(out_so)
    except TccError as e:
        result["error"] = f"tcc load: {e}"
        return result
    with artifact:
        inputs = artifact.inputs
        result["batch"] = inputs[0].shape[0] if inputs and inputs[0].shape else None
        result["inputs"] = {t.name: list(t.shape) for t in inputs}
        result["arena_bytes"], result["state_bytes"] = artifact.arena_size, artifact.state_size
        try:
            feeds = random_inputs(inputs, args.seed)
        except TccError as e:
            result["error"] = f"inputs: {e}"
            return result

        try:
            start = time.perf_counter()
            session = artifact.session(num_threads=args.threads)
            result["tcc_session_s"] = time.perf_counter() - start
        except TccError as e:
            result["error"] = f"tcc session: {e}"
            return result

        with session:
            start = time.perf_counter()
            try:
                ort_sess = ort_session(model_path, args.threads)
            except Exception as e:  # noqa: BLE001 - onnxruntime raises its own exception types
                result["error"] = f"ORT session: {e}"
                return result
            result["ort_session_s"] = time.perf_counter() - start
            ort_names = [o.name for o in ort_sess.get_outputs()]
            ort_inputs = {i.name for i in ort_sess.get_inputs()}
            if ort_inputs != set(feeds):
                result["error"] = f"inputs differ: tcc {sorted(feeds)}, ORT {sorted(ort_inputs)}"
                return result

            # One checked run of each before any timing.
            tcc_out = session.bind(feeds)
            try:
                session.step()
            except TccError as e:
                result["error"] = f"tcc run: {e}"
                return result
            try:
                ort_out = dict(zip(ort_names, ort_sess.run(None, feeds)))
            except Exception as e:  # noqa: BLE001
                result["error"] = f"ORT run: {e}"
                return result
            result["check"] = compare({k: v.copy() for k, v in tcc_out.items()}, ort_out)

            samples, cores = time_interleaved(
                {"tcc": session.step, "ort": lambda: ort_sess.run(None, feeds)},
                args.warmup,
                args.iters,
                args.block,
            )
    result["tcc"] = dict(stats(samples["tcc"]), cores_used=cores["tcc"])
    result["ort"] = dict(stats(samples["ort"]), cores_used=cores["ort"])
    result["ratio"] = result["ort"]["median_ms"] / result["tcc"]["median_ms"]
    return result


# --- Reporting. ------------------------------------------------------------


def fmt_ms(s):
    def f(v):
        return f"{v:.3f}" if v < 10 else f"{v:.2f}" if v < 100 else f"{v:.1f}"

    return f"{f(s['median_ms'])} ({f(s['p10_ms'])}-{f(s['p90_ms'])})"


def table(results):
    """A Markdown table of the results (readable as plain text too)."""
    head = [
        "model",
        "batch",
        "compile s",
        "tcc ms median (p10-p90)",
        "ORT ms median (p10-p90)",
        "ORT/tcc",
        "cores tcc/ORT",
        "outputs agree (or failure)",
    ]
    rows = []
    for r in results:
        if r.get("tcc"):
            check = r["check"]
            agree = f"{'ok' if check['ok'] else 'MISMATCH'} (max diff {check['max_abs_diff']:.1e})"
            rows.append(
                [
                    r["model"],
                    str(r["batch"]),
                    f"{r['compile_s']:.2f}",
                    fmt_ms(r["tcc"]),
                    fmt_ms(r["ort"]),
                    f"{r['ratio']:.3g}",
                    "/".join("-" if c is None else f"{c:.1f}" for c in (r["tcc"]["cores_used"], r["ort"]["cores_used"])),
                    agree,
                ]
            )
        else:
            compile_s = f"{r['compile_s']:.2f}" if r.get("compile_s") is not None else "-"
            batch = str(r["batch"]) if r.get("batch") is not None else "-"
            rows.append([r["model"], batch, compile_s, "-", "-", "-", "-", f"FAILED: {r['error']}"])
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in [head] + rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def machine_info():
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "cpu": cpu,
        "cpus_online": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "loadavg_start": load,
        "platform": platform.platform(),
    }


# --- Main. -----------------------------------------------------------------


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Compares tcc-compiled inference with onnxruntime on the same models, threads and inputs.",
        epilog="What is timed and how: see the docstring at the top of this file, and bench/README.md.",
    )
    tools = parser.add_argument_group("where tcc is")
    tools.add_argument(
        "--build-dir",
        help="tcc build folder: BUILD/bin/tcc + BUILD/lib/libtcc_runtime.so, or a flat folder "
        "with tcc and libtcc_runtime.so (default: $TCC_BUILD_DIR, else build/ at the repository root)",
    )
    tools.add_argument("--tcc", help="the tcc compiler (overrides --build-dir)")
    tools.add_argument("--runtime-lib", help="libtcc_runtime.so (overrides --build-dir)")

    run = parser.add_argument_group("what to run")
    run.add_argument("--threads", type=int, default=2, help="threads for tcc and for ORT's intra-op pool (default: 2)")
    run.add_argument("--iters", type=int, default=50, help="timed iterations per engine and model (default: 50)")
    run.add_argument("--warmup", type=int, default=5, help="untimed iterations per engine first (default: 5)")
    run.add_argument(
        "--block", type=int, default=10, help="timed iterations per block before switching engine (default: 10)"
    )
    run.add_argument("--seed", type=int, default=0, help="seed of the weights and inputs (default: 0)")
    run.add_argument("--mlp-batch", type=int, default=64, help="batch size of the generated MLP (default: 64)")
    run.add_argument("--cnn-batch", type=int, default=32, help="batch size of the generated CNN (default: 32)")
    run.add_argument(
        "--backend-tests",
        default=",".join(DEFAULT_BACKEND_TESTS),
        help="comma-separated SUITE/TEST backend test models under --data-dir; '' for none "
        "(default: %(default)s)",
    )
    run.add_argument("--data-dir", default=DEFAULT_DATA, help="ONNX backend test data (default: %(default)s)")
    run.add_argument("--only", help="run only the models whose name contains this string")

    out = parser.add_argument_group("output")
    out.add_argument(
        "--work-dir",
        default=os.path.join(HERE, "out"),
        help="folder for generated models and compiled artifacts (default: bench/out, ignored by git)",
    )
    out.add_argument("--json", metavar="FILE", help="also write every result and the setup as JSON to FILE")
    args = parser.parse_args(argv)
    if args.threads < 1 or args.iters < 1 or args.warmup < 0 or args.block < 1:
        parser.error("--threads, --iters and --block must be positive, --warmup non-negative")
    return args


def main(argv=None):
    args = parse_args(argv)
    if ort is None:
        die("onnxruntime is not importable; run bench/run.sh (it sets up bench/.venv)")
    tcc, lib = find_tools(args)
    rt = TccRuntime(lib)
    args.work_dir = os.path.abspath(args.work_dir)

    # The models, in table order.
    generated = models.write_models(
        os.path.join(args.work_dir, "models"), args.mlp_batch, args.cnn_batch, args.seed
    )
    todo = list(generated.items())
    for test in filter(None, (t.strip() for t in args.backend_tests.split(","))):
        todo.append((os.path.basename(test), os.path.join(args.data_dir, test, "model.onnx")))
    if args.only:
        todo = [(n, p) for n, p in todo if args.only in n]

    info = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": machine_info(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "onnxruntime": ort.__version__,
        "tcc": tcc,
        "runtime_lib": lib,
        "runtime_version": rt.version,
        "threads": args.threads,
        "iters": args.iters,
        "warmup": args.warmup,
        "block": args.block,
        "seed": args.seed,
        "rtol": RTOL,
        "atol": ATOL,
    }
    usable = info["machine"]["cpus_usable"]
    print(
        f"tcc {tcc}\nruntime {lib} ({rt.version})\nonnxruntime {ort.__version__}, numpy {np.__version__}, "
        f"python {info['python']}\n{info['machine']['cpu']}, {usable} usable CPUs, "
        f"load average {info['machine']['loadavg_start']}\n"
        f"threads {args.threads}, {args.warmup} warm-up + {args.iters} timed iterations per engine, "
        f"blocks of {args.block}\n",
        flush=True,
    )
    if args.threads > usable:
        print(f"warning: --threads {args.threads} > {usable} usable CPUs: tcc caps at {usable}, ORT does not\n")

    results = []
    for name, path in todo:
        print(f"{name}: ", end="", flush=True)
        r = {"model": name, "path": path, "batch": None, "compile_s": None, "error": None}
        if not os.path.isfile(path):
            r["error"] = f"no such file {path}"
        else:
            try:
                bench_model(r, rt, tcc, args)
            except Exception as e:  # noqa: BLE001 - one model's failure must not end the run
                r["error"] = f"{type(e).__name__}: {e}"
        results.append(r)
        if r.get("tcc"):
            print(
                f"compile {r['compile_s']:.2f} s, tcc {fmt_ms(r['tcc'])} ms, ORT {fmt_ms(r['ort'])} ms, "
                f"ORT/tcc {r['ratio']:.3g}, max abs diff {r['check']['max_abs_diff']:.2e}",
                flush=True,
            )
            if not r["check"]["ok"]:
                print(f"  *** MISMATCH between tcc and ORT: {'; '.join(r['check']['detail'])}", flush=True)
        else:
            print(f"*** FAILED: {r['error']}", flush=True)

    try:
        info["machine"]["loadavg_end"] = os.getloadavg()
    except OSError:
        pass
    print(f"\nload average at the end: {info['machine'].get('loadavg_end')}\n")
    print(table(results))

    failed = [r["model"] for r in results if not r.get("tcc")]
    mismatched = [r["model"] for r in results if r.get("check") and not r["check"]["ok"]]
    if failed:
        print(f"\nFAILED (no timing): {', '.join(failed)}")
    if mismatched:
        print(f"MISMATCH (tcc and ORT outputs differ): {', '.join(mismatched)}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"setup": info, "results": results}, f, indent=2)
            f.write("\n")
        print(f"\nwrote {args.json}")
    return 1 if failed or mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
