"""step_time.py - median training-step time of tcc artifacts, interleaved.

    /usr/bin/python3 bench/step_time.py A.so B.so ... [--steps 5] [--rounds 3] [--threads 2]

An artifact given as A.so@VAR=VALUE (or A.so@VAR=VALUE@VAR2=VALUE2 ...) is
timed with environment variable VAR set to VALUE while its sessions are
created (TCC_FILTER_LAYOUTS=plain, say: one artifact in two runtime modes,
interleaved).

Each round opens a session per artifact in turn (the parameters that tcc
wrote beside it; random inputs), runs one warm-up train_step,
then times --steps steps one by one; the artifacts take turns round after
round, so that a load that comes and goes (other jobs on a shared machine)
falls on all of them. Prints each artifact's median, min and max wall time
of a step and its median CPU time (the process's, all threads: with
--threads 1 the least noisy measure on a loaded machine), each also over the
first artifact's. Needs numpy and build/lib/libtcc_runtime.so (or --runtime).

--first libgomp loads GNU's OpenMP runtime into the global scope before the
runtime, exactly as torch does; --first torch imports torch itself (Debian's
python3-torch). --torch-op runs one of torch's parallel ops (exp and sum
over 4 Mi floats) before each timed step, timed apart: with --first torch on
torch's libgomp pool, the two pools taking turns; without, torch is imported
after the first session and runs on tcc's libomp (docs/sdk.md)."""
import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tcc_runtime import TccRuntime  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def inputs_of(artifact, rng):
    """Every train_step input: random tokens / labels below 2 (a valid class
    index for any classifier), lr 1e-4 and 0-d counters 1."""
    arrays = {}
    for t in artifact.entry_inputs('train_step'):
        if t.dtype is None:
            raise SystemExit('%s: input %s has no numpy dtype' % (artifact.path, t.name))
        if not t.shape:
            arrays[t.name] = np.array(1e-4 if t.name == 'lr' else 1, t.dtype)
        elif np.issubdtype(t.dtype, np.integer):
            arrays[t.name] = rng.integers(0, 2, t.shape).astype(t.dtype)
        else:
            arrays[t.name] = rng.standard_normal(t.shape).astype(t.dtype)
    return arrays


def time_steps(rt, spec, steps, threads, rng, between=None):
    path, *settings = spec.split('@')
    saved = {}
    for setting in settings:
        name, _, value = setting.partition('=')
        saved.setdefault(name, os.environ.get(name))
        os.environ[name] = value
    try:
        a = rt.load(path)
        s = a.session(num_threads=threads)
    finally:
        for name, value in saved.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value
    with a, s:
        step = s.prepare(inputs_of(a, rng), 'train_step', outputs=[])
        step()
        times = []
        for _ in range(steps):
            if between:
                between()
            t, c = time.perf_counter(), time.process_time()
            step()
            times.append((time.perf_counter() - t, time.process_time() - c))
        return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('artifacts', nargs='+')
    ap.add_argument('--steps', type=int, default=5)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--runtime', default=os.path.join(ROOT, 'build/lib/libtcc_runtime.so'),
                    help='the libtcc_runtime.so to time (another build of it, say)')
    ap.add_argument('--first', choices=['libgomp', 'torch'])
    ap.add_argument('--torch-op', action='store_true')
    args = ap.parse_args()
    between, op_times = None, []
    if args.first == 'libgomp':
        ctypes.CDLL('libgomp.so.1', mode=ctypes.RTLD_GLOBAL)
    elif args.first == 'torch':
        import torch  # noqa: F401
    if args.torch_op:
        def between():
            import torch
            torch.set_num_threads(args.threads)
            t = time.perf_counter()
            torch.exp(torch.ones(1 << 22)).sum()
            op_times.append(time.perf_counter() - t)
    rt = TccRuntime(args.runtime)
    rng = np.random.default_rng(0)
    times = {p: [] for p in args.artifacts}
    for _ in range(args.rounds):
        for p in args.artifacts:
            times[p] += time_steps(rt, p, args.steps, args.threads, rng, between)
    def median(p, k):
        return statistics.median(t[k] for t in times[p])
    base, cpu_base = median(args.artifacts[0], 0), median(args.artifacts[0], 1)
    for p in args.artifacts:
        wall = [t[0] for t in times[p]]
        print('%-32s wall median %8.3f ms (min %8.3f, max %8.3f) %.3fx | cpu median %8.3f ms %.3fx'
              ' | %d steps' % (os.path.basename(p), 1e3 * median(p, 0), 1e3 * min(wall),
                               1e3 * max(wall), median(p, 0) / base, 1e3 * median(p, 1),
                               median(p, 1) / cpu_base, len(wall)))
    if op_times:
        print('torch op between steps: median %.2f ms' % (1e3 * statistics.median(op_times)))


if __name__ == '__main__':
    main()
