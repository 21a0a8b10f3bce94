#!/usr/bin/env bash
# bench/gpu/run.sh - every GPU check of tcc in one go, on the GPU machine:
# training parity of the CUDA artifacts (against the CPU curves and against
# PyTorch on the same GPU) and training throughput against PyTorch eager and
# torch.compile. Runs from the repository root with the machine's python3
# (torch, numpy; onnx when present); downloads nothing. Needs
# bench/gpu/bundle/ from bench/gpu/prepare.sh (a carried path).
#
# Stages, each under its own timeout inside one time budget (--budget,
# default 270 s), in order of importance:
#   env         nvidia-smi -L, versions, TCC_CUDA_LIB_PATH
#   selftest    bundle/bin/tcc-cuda-selftest, when the bundle has it
#   parity      tcc-run of each parity artifact for 50 steps; PyTorch on the
#               same device from the ONNX initializers; max relative
#               per-step loss error <= 1e-3 against both
#   throughput  tcc-run of gpt2s and resnet18 (5 warm-up + 30 steps), PyTorch
#               eager, tcc-run with TCC_CUDA_TF32=1, torch.compile (its
#               compile capped at 120 s); PyTorch TF32 off, then on
#   report      the table; results.json
# Output: $OUT (default bench/gpu/gpu-out): run.log (everything printed),
# results.json, details.tar.gz (every log, metrics and timing file).
# Exit status: 0 iff every parity check passed (2: no bundle).
#
# Usage: bash bench/gpu/run.sh [--cpu-dry-run] [--budget SECONDS]
#   --cpu-dry-run  check the plumbing here: the bundle of
#                  prepare.sh --target=cpu, PyTorch on the CPU (Debian's
#                  /usr/bin/python3), no nvidia-smi, few throughput steps
#   --budget S     seconds for the whole run (default 270)
# Environment: OUT, PYTHON (default /opt/torch/.venv/bin/python3 if present,
# else python3; /usr/bin/python3 in the dry run).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2

DRY=0
BUDGET=270
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cpu-dry-run) DRY=1 ;;
    --budget=*) BUDGET=${1#--budget=} ;;
    --budget) BUDGET=$2; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

B=bench/gpu/bundle
M=$B/manifest.json
OUT=${OUT:-bench/gpu/gpu-out}
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tcc-gpu.XXXXXX")
exec > >(tee "$OUT/run.log") 2>&1
TEE_PID=$!

if [[ $DRY == 1 ]]; then
  PY=${PYTHON:-/usr/bin/python3}
  DEVICE=cpu
  WARMUP=1 STEPS=3
  export GPU_BENCH_DEVICE=cpu GPU_BENCH_DRY_RUN=1
  # Debian's torch on OpenBLAS rather than the reference BLAS (as bench/train.sh).
  if [[ -e /usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3 ]]; then
    export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
elif [[ -z ${PYTHON:-} && -x /opt/torch/.venv/bin/python3 ]]; then
  PY=/opt/torch/.venv/bin/python3
  DEVICE=cuda
  WARMUP=5 STEPS=30
else
  PY=${PYTHON:-python3}
  DEVICE=cuda
  WARMUP=5 STEPS=30
fi
GB=(bench/gpu/gpu_bench.py)

say() { printf '\n== %s (t=%ds)\n' "$*" "$SECONDS"; }
# budget CAP [RESERVE]: a stage's timeout: CAP seconds, less when the run's
# budget (minus RESERVE for what must still follow) has less left; 0: skip
# (never pass 0 to timeout: it means no limit).
budget() {
  local left=$(( BUDGET - SECONDS - ${2:-15} ))
  (( left < 5 )) && left=0
  echo $(( left < $1 ? left : $1 ))
}
# within CAP RESERVE CMD...: CMD under timeout $(budget CAP RESERVE), or
# status 124 without running it when nothing is left.
within() {
  local t
  t=$(budget "$1" "$2")
  shift 2
  if (( t == 0 )); then
    echo "skipped (time budget): $*"
    return 124
  fi
  timeout "$t" "$@"
}

# --- env ------------------------------------------------------------------------
say "env"
if [[ ! -f $M ]]; then
  echo "run.sh: $M not found: run bench/gpu/prepare.sh on the build machine and carry $B" >&2
  exit 2
fi
export LD_LIBRARY_PATH=$ROOT/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TCC_CUDA_TF32=0  # parity and the fp32 rows; tcc_time tf32 sets 1
TCC_CUDA_LIB_PATH=$(timeout 20 "$PY" -c '
import glob, os
try:
    import nvidia
    print(":".join(d for p in nvidia.__path__ for d in sorted(glob.glob(os.path.join(p, "*", "lib")))))
except ImportError:
    pass' 2>/dev/null)
export TCC_CUDA_LIB_PATH
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
echo "TCC_CUDA_LIB_PATH=${TCC_CUDA_LIB_PATH:-(none: no nvidia wheels found)}"
if [[ $DRY == 0 ]]; then
  timeout 20 nvidia-smi -L || echo "nvidia-smi failed (rc $?)"
  timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || true
else
  echo "CPU dry run: no nvidia-smi; tcc artifacts for the CPU, PyTorch on the CPU"
fi
timeout 20 "$PY" -c '
import importlib.metadata as md, platform
v = []
for p in ("torch", "jax", "jaxlib", "numpy", "onnx", "onnxruntime"):
    try:
        v.append("%s %s" % (p, md.version(p)))
    except md.PackageNotFoundError:
        v.append("%s -" % p)
print("python %s (%s): %s" % (platform.python_version(), __import__("sys").executable, ", ".join(v)))'
timeout 10 "$B/bin/tcc-run" --version || echo "tcc-run does not start (rc $?)"
echo "manifest: target $("$PY" -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["target"], "commit", m["tcc_commit"], "made", m["created"])' "$M")"
INIT_FLAG=
# (Not `| grep -q`: grep's early exit kills tcc-run with SIGPIPE, and
# pipefail turns that into a miss.)
HELP=$(timeout 10 "$B/bin/tcc-run" --help 2>/dev/null)
if [[ $HELP == *"--init"* ]]; then
  INIT_FLAG=--init=0
fi

# --- selftest ---------------------------------------------------------------------
say "selftest"
SELFTEST="absent"
if [[ $DRY == 1 ]]; then
  SELFTEST="skipped (dry run)"
elif [[ -x $B/bin/tcc-cuda-selftest ]]; then
  if within 30 200 "$B/bin/tcc-cuda-selftest" > "$WORK/selftest.log" 2>&1; then
    SELFTEST="PASS"
  else
    SELFTEST="FAIL (rc $?)"
  fi
  tail -20 "$WORK/selftest.log"
fi
echo "tcc-cuda-selftest: $SELFTEST"
echo "$SELFTEST" > "$WORK/selftest.status"

# --- parity -------------------------------------------------------------------------
say "parity: tcc-run"
while IFS=$'\t' read -r name artifact flags _; do
  if [[ ! -f $artifact ]]; then
    echo "$name: $artifact missing (prepare.sh could not compile it)"
    continue
  fi
  t=$(budget 30 30)  # parity comes first: only the report is reserved
  (( t > 0 )) || { echo "$name: skipped (time budget)"; continue; }
  # shellcheck disable=SC2086  # the flags split on spaces
  timeout "$t" "$B/bin/tcc-run" "$artifact" $flags --metrics "$WORK/$name.tcc.jsonl" > "$WORK/$name.tcc.log" 2>&1
  rc=$?
  echo "$name: rc $rc, $(wc -l < "$WORK/$name.tcc.jsonl" 2>/dev/null || echo 0) steps; $(tail -1 "$WORK/$name.tcc.log")"
done < <("$PY" "${GB[@]}" list "$M" parity)

say "parity: PyTorch on $DEVICE"
within 90 30 "$PY" "${GB[@]}" torch-parity "$M" "$WORK" "$DEVICE" || echo "torch-parity: rc $?"

# --- throughput ------------------------------------------------------------------------
# tcc_time PRECISION CAP RESERVE: tcc-run of every throughput model, timed
# (gpu_bench.py tcc-time); PRECISION tf32 sets TCC_CUDA_TF32=1 (the runtime's
# switch to TF32 tensor cores for fp32 matmuls and convolutions).
tcc_time() {
  local prec=$1 cap=$2 reserve=$3 name artifact flags shipped status t
  while IFS=$'\t' read -r name artifact flags shipped; do
    status=
    if [[ ! -f $artifact ]]; then
      status="$artifact missing"
    elif [[ -z $INIT_FLAG && $shipped == 0 ]]; then
      status="tcc-run has no --init and the weights did not travel"
    fi
    t=$(budget "$cap" "$reserve")
    (( t > 0 )) || status="skipped (time budget)"
    if [[ -n $status ]]; then
      echo "$name $prec: $status"
      echo "$status" > "$WORK/$name.tcc-$prec.status"
      continue
    fi
    # shellcheck disable=SC2086  # the flags split on spaces
    TCC_CUDA_TF32=$([[ $prec == tf32 ]] && echo 1 || echo 0) \
      timeout $(( t + 10 )) "$PY" "${GB[@]}" tcc-time "$WORK/$name.tcc-$prec.json" "$WORK/$name.tcc-$prec.log" \
      "$t" "$WARMUP" -- "$B/bin/tcc-run" "$artifact" $flags --steps $(( WARMUP + STEPS )) $INIT_FLAG \
      --metrics "$WORK/$name.tcc-$prec.jsonl"
    echo "$name $prec: $(grep '^ *[0-9.]* step' "$WORK/$name.tcc-$prec.log" | tail -1)"
  done < <("$PY" "${GB[@]}" list "$M" throughput)
}
say "throughput: tcc-run"
tcc_time fp32 60 60

NAMES=$("$PY" -c 'import json,sys; print(" ".join(t["name"] for t in json.load(open(sys.argv[1]))["throughput"]))' "$M")
# torch_time NAME MODE CAP RESERVE: one PyTorch timing process.
torch_time() {
  local name=$1 mode=$2 t
  t=$(budget "$3" "$4")
  if (( t == 0 )); then
    echo "skipped (time budget)" > "$WORK/$name.torch-$mode.status"
    echo "$name $mode: skipped (time budget)"
    return
  fi
  local log=$WORK/$name.torch-$mode.log rc
  timeout "$t" "$PY" "${GB[@]}" torch-time "$M" "$name" "$mode" "$WORK/$name.torch-$mode.json" \
    $(( t - 5 )) "$WARMUP" "$STEPS" > "$log" 2>&1
  rc=$?
  grep -E '^gpu_bench:' "$log"
  if (( rc == 124 )); then
    if [[ -e $WORK/$name.torch-$mode.json ]]; then
      echo "stopped at ${t}s (after the fp32 run)" > "$WORK/$name.torch-$mode.status"
    elif [[ $mode == compile && $t -ge 120 ]]; then
      echo "compile > 120 s" > "$WORK/$name.torch-$mode.status"
    else
      echo "stopped at ${t}s (time budget)" > "$WORK/$name.torch-$mode.status"
    fi
  elif (( rc != 0 )); then
    tail -5 "$log"
    echo "failed (rc $rc): $(grep -v '^\s*$' "$log" | tail -1 | cut -c1-120)" > "$WORK/$name.torch-$mode.status"
  fi
}
say "throughput: PyTorch eager"
for name in $NAMES; do torch_time "$name" eager 60 30; done
if [[ $DRY == 0 ]]; then
  say "throughput: tcc-run with TCC_CUDA_TF32=1"
  tcc_time tf32 40 60
fi
say "throughput: torch.compile"
# Cheapest model first, so that one long compile cannot starve both.
for name in $("$PY" -c 'import json,sys; print(" ".join(t["name"] for t in sorted(json.load(open(sys.argv[1]))["throughput"], key=lambda t: t["flops_per_step"])))' "$M"); do
  torch_time "$name" compile 140 10
done

if [[ $DRY == 0 ]]; then
  # Where a tcc step's time goes: GPU time per kernel (named after its ONNX
  # node) and per library call, from events around each launch.
  say "throughput: tcc per-kernel profile (TCC_CUDA_PROFILE=1, 3 steps)"
  while IFS=$'\t' read -r name artifact flags shipped; do
    [[ -f $artifact ]] || continue
    t=$(budget 40 20)
    if (( t == 0 )); then echo "$name: profile skipped (time budget)"; continue; fi
    # shellcheck disable=SC2086  # the flags split on spaces
    TCC_CUDA_PROFILE=1 timeout "$t" "$B/bin/tcc-run" "$artifact" $flags --steps 3 $INIT_FLAG 2>&1 |
      sed -n '/tcc CUDA profile/,$p' | head -34
  done < <("$PY" "${GB[@]}" list "$M" throughput)
fi

# --- report ----------------------------------------------------------------------------
say "report"
for f in "$WORK"/*.tcc-*.status; do
  [[ -e $f ]] || continue
  n=${f%.status}
  [[ -e $n.json ]] || printf '{"rc": null, "timed_out": false, "steps_done": 0, "step_times_s": [], "status": "%s"}\n' \
    "$(cat "$f")" > "$n.json"
done
timeout 30 "$PY" "${GB[@]}" report "$M" "$WORK"
rc=$?
echo "tcc-cuda-selftest: $SELFTEST"
cp "$WORK/results.json" "$OUT/" 2>/dev/null
tar -czf "$OUT/details.tar.gz" -C "$WORK" . 2>/dev/null
rm -rf "$WORK"
echo "total ${SECONDS}s; logs in $OUT (run.log, results.json, details.tar.gz)"
# Let tee write the last lines before $OUT is collected.
exec >&- 2>&-
wait "$TEE_PID" 2>/dev/null
exit "$rc"
