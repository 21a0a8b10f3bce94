"""kernel_profile.py - where a training step's time goes, per kernel.

    /usr/bin/python3 bench/kernel_profile.py A.so [B.so ...] [--steps 5] [--threads 1] [--top 25]

Each artifact must be compiled with `tcc --profile` (a span per kernel). It
runs one warm-up train_step on random inputs (as bench/step_time.py makes
them), then --steps timed steps with a kernel observer installed
(tcc_session_set_kernel_observer), and prints the step's time split into
generated kernels (`kernel_N_NODE`; with --group, added up per NODE), and "library calls and host code" (the time between kernels: oneDNN / BLAS
calls, the host schedule). Times are per step, medians over the steps.
Needs numpy and build/lib/libtcc_runtime.so (or --runtime)."""
import argparse
import collections
import ctypes
import os
import re
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from step_time import inputs_of  # noqa: E402
from tcc_runtime import TccRuntime  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OBSERVER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32)


def profile(rt, path, steps, threads, rng, group):
    rt._sig('tcc_session_set_kernel_observer', ctypes.c_int32,
            [ctypes.c_void_p, OBSERVER, ctypes.c_void_p])
    with rt.load(path) as a, a.session(num_threads=threads) as s:
        names = (a.metadata('profile.kernels') or '').split(';')
        if names == ['']:
            raise SystemExit(f'{path}: compiled without --profile (no profile.kernels metadata)')
        groups = [re.sub(r'^kernel_\d+_?', '', n) or n for n in names] if group else names
        spans = collections.defaultdict(float)
        started = {}

        def observe(_user, kernel, end):
            now = time.perf_counter()
            if not 0 <= kernel < len(groups):
                return
            if end:
                spans[groups[kernel]] += now - started.pop(kernel, now)
            else:
                started[kernel] = now

        callback = OBSERVER(observe)
        rt.check(rt.lib.tcc_session_set_kernel_observer(s.handle, callback, None),
                 'tcc_session_set_kernel_observer')
        step = s.prepare(inputs_of(a, rng), 'train_step', outputs=[])
        step()
        per_step, totals = [], []
        for _ in range(steps):
            spans.clear()
            t = time.perf_counter()
            step()
            totals.append(time.perf_counter() - t)
            per_step.append(dict(spans))
        return per_step, totals


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('artifacts', nargs='+')
    ap.add_argument('--steps', type=int, default=5)
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--top', type=int, default=25)
    ap.add_argument('--group', action='store_true',
                    help='add up the kernels of one node (names without their index)')
    ap.add_argument('--runtime', default=os.path.join(ROOT, 'build/lib/libtcc_runtime.so'))
    args = ap.parse_args()
    rt = TccRuntime(args.runtime)
    rng = np.random.default_rng(0)
    for path in args.artifacts:
        per_step, totals = profile(rt, path, args.steps, args.threads, rng, args.group)
        step = statistics.median(totals)
        names = {n for s in per_step for n in s}
        median = {n: statistics.median(s.get(n, 0.0) for s in per_step) for n in names}
        kernels = sum(median.values())
        print(f'{os.path.basename(path)}: step {1e3 * step:.1f} ms, generated kernels '
              f'{1e3 * kernels:.1f} ms ({100 * kernels / step:.1f}%), library calls and host code '
              f'{1e3 * (step - kernels):.1f} ms ({100 * (step - kernels) / step:.1f}%)')
        for name, t in sorted(median.items(), key=lambda kv: -kv[1])[:args.top]:
            print(f'  {1e3 * t:8.2f} ms {100 * t / step:5.1f}%  {name}')


if __name__ == '__main__':
    main()
