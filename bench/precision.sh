#!/usr/bin/env bash
# The mixed-precision table: one training step of gpt4, the GPT-2-small shape
# and zoo resnet18, in tcc fp32 and bf16 and in PyTorch fp32 and autocast-bf16,
# eager and under torch.compile (PyTorch's CNNs in channels_last), with each
# engine's achieved GFLOP/s beside the machine's own fp32 / bf16 GEMM rates,
# at 1 and 2 threads: bench/train_bench.py run once per thread count.
#
#   bench/precision.sh [TRAIN_BENCH ARGS...]
#
# PYTHON names the interpreter: a venv with PyPI's torch 2.x, torchvision and
# numpy (default bench/.venv-torch2/bin/python; bench/README.md says how to
# make it); THREADS the thread counts (default "1 2"). Artifacts go to
# bench/out/train; each table goes to stdout and bench/out/precision-<threads>.json.
# Exit status 1 when any run reported a failure or a loss mismatch (a bf16
# engine's first losses more than 5e-2 from fp32's); every run still runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-$here/.venv-torch2/bin/python}
if [[ ! -x "$PYTHON" ]]; then
  echo "bench/precision.sh: no $PYTHON (a venv with PyPI's torch 2.x: bench/README.md)" >&2
  exit 1
fi
if [[ ! -f "$here/out/train/gpt4/model.onnx" ]]; then
  /usr/bin/python3 "$here/export_train_models.py" "$here/out/train" >/dev/null
fi
mkdir -p "$here/out"
status=0
for threads in ${THREADS:-1 2}; do
  OMP_NUM_THREADS=$threads "$PYTHON" "$here/train_bench.py" --threads "$threads" \
    --models gpt4,gpt2s,resnet18 --flops --channels-last \
    --engines tcc,tcc-bf16,torch,torch-bf16,torch-compile,torch-compile-bf16 \
    --json "$here/out/precision-$threads.json" "$@" || status=1
done
exit $status
