#!/usr/bin/env python3
"""Per-kernel CPU profile of a tcc artifact (standard library only).

  scripts/profile.py MODEL.so [--top N] -- TCC-RUN ARGUMENTS...

MODEL.so must be compiled with `tcc --profile` (every kernel in its own
function kernel_<n>_<node>). Runs `tcc-run MODEL.so ARGUMENTS` under
`perf record` and prints where the time went: each kernel (its OpenMP
parallel body folded in) with its share of all samples, then oneDNN (library
calls), the runtime, the kernel, and the rest. Needs Linux perf.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile


def main(argv):
    if '--' not in argv or len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 1
    split = argv.index('--')
    own, run_args = argv[1:split], argv[split + 1:]
    model = own[0]
    top = int(own[own.index('--top') + 1]) if '--top' in own else 25
    if not shutil.which('perf'):
        print('profile.py: perf is not installed (apt-get install linux-perf)', file=sys.stderr)
        return 1
    here = os.path.dirname(os.path.abspath(__file__))
    tcc_run = os.environ.get('TCC_RUN', os.path.join(here, '..', 'build', 'bin', 'tcc-run'))
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, 'perf.data')
        subprocess.run(['perf', 'record', '-q', '-F', '2999', '-o', data, tcc_run, model]
                       + run_args, check=True, stdout=subprocess.DEVNULL)
        report = subprocess.run(
            ['perf', 'report', '-i', data, '--stdio', '--no-children', '--sort', 'dso,sym',
             '-F', 'overhead,dso,sym'], check=True, capture_output=True, text=True).stdout
    model_dso = os.path.basename(model)
    groups = collections.Counter()
    for line in report.splitlines():
        m = re.match(r'\s*([0-9.]+)%\s+(.+?)\s+\[.\]\s+(.*)$', line)
        if not m:
            continue
        share, dso, sym = float(m.group(1)), m.group(2), m.group(3).strip()
        if dso == model_dso:
            k = re.match(r'(kernel_\d+_\w+?)(\.\.omp_par.*)?$', sym)
            groups[k.group(1) if k else 'generated code outside kernels (' + sym + ')'] += share
        elif 'dnnl' in dso or dso.startswith('[JIT]'):
            groups['oneDNN library calls'] += share
        elif 'libomp' in dso:
            groups['OpenMP runtime (fork, barriers, waiting)'] += share
        elif 'tcc_runtime' in dso or dso == 'tcc-run':
            groups['tcc runtime / tcc-run'] += share
        elif 'kernel' in dso:
            groups['operating system'] += share
        else:
            groups['other: ' + dso] += share
    total = sum(groups.values())
    print('%7s  %s' % ('share', 'where'))
    for name, share in groups.most_common(top):
        print('%6.2f%%  %s' % (share, name))
    rest = total - sum(s for _, s in groups.most_common(top))
    if rest > 0:
        print('%6.2f%%  (%d more entries)' % (rest, len(groups) - top))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
