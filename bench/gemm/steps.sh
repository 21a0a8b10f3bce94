#!/usr/bin/env bash
# Training-step times with and without BLAS (docs/cpu-gemm.md): for each
# thread count, REPS rounds of three processes of bench/train_bench.py on the
# parity GPT and gpt4: tcc with its default BLAS, tcc with
# TCC_BLAS_LIBRARY=none, and PyTorch. Separate processes because
# bench/train.sh points torch (and so numpy, which is imported first) at
# OpenBLAS through LD_LIBRARY_PATH: numpy's copy, bound to libgomp, is one
# the runtime does not use, so in one process with torch tcc would run
# without BLAS. The 1-thread runs are pinned to one core. Needs Debian's
# python3-torch and bench/out/train/gpt4 (bench/train_setup.sh).
#
# Usage: bench/gemm/steps.sh [REPS] [OUT_DIR]   (defaults 3, bench/out/gemm/steps)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
reps=${1:-3}
out=${2:-$root/bench/out/gemm/steps}
mkdir -p "$out"
export OPENBLAS_NUM_THREADS=1
cd "$root"
for rep in $(seq "$reps"); do
  for threads in 1 2; do
    pin=()
    [[ $threads == 1 ]] && pin=(taskset -c 0)
    for run in blas none torch; do
      case $run in
        blas) env=(); engine=tcc ;;
        none) env=(TCC_BLAS_LIBRARY=none); engine=tcc ;;
        torch) env=(LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp); engine=torch ;;
      esac
      echo "round $rep, $threads thread(s), $run: load $(cut -d' ' -f1 /proc/loadavg)" >&2
      env "${env[@]}" "${pin[@]}" /usr/bin/python3 bench/train_bench.py --models gpt,gpt4 \
        --engines "$engine" --threads "$threads" --json "$out/$rep-$threads-$run.json" > /dev/null
    done
  done
done
/usr/bin/python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
times = {}
for path in glob.glob(os.path.join(sys.argv[1], '*.json')):
    rep, threads, run = os.path.basename(path)[:-5].split('-')
    for r in json.load(open(path))['results']:
        for engine, v in r['engines'].items():
            times.setdefault((r['model'], threads, run), []).append(v['median'])
print('| model | threads | tcc + BLAS | tcc, no BLAS | torch | no BLAS / BLAS | torch / tcc+BLAS |')
print('|---|---|---|---|---|---|---|')
for model in ('gpt', 'gpt4'):
    for threads in ('1', '2'):
        b, n, t = (statistics.median(times.get((model, threads, r), [float('nan')]))
                   for r in ('blas', 'none', 'torch'))
        print('| %s | %s | %.3f | %.3f | %.3f | %.3f | %.2f |' % (model, threads, b, n, t, n / b, t / b))
PY
