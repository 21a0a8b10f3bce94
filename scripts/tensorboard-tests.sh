#!/usr/bin/env bash
# TensorBoard's own reader on tcc-run's event files: a venv
# (BUILD/tensorboard-venv, pyenv's python3 with pip's tensorboard) reads
# what a training run wrote with EventAccumulator and compares it with the
# run's metrics (test/e2e/Inputs/tensorboard_reader.py), also after a kill
# and a resume (the resumed run's steps replace the killed run's). CTest runs
# this (`tensorboard`); it exits 77, which CTest reports as skipped, only
# when PyPI cannot be reached to make the venv.
#
#   scripts/tensorboard-tests.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
BUILD=$(cd "${1:-build}" && pwd)
VENV="$BUILD/tensorboard-venv"
PYTHON=${PYTHON:-python3}
if [[ ! -x "$VENV/bin/tensorboard" ]]; then
  "$PYTHON" -m venv "$VENV"
  if ! "$VENV/bin/pip" install -q --disable-pip-version-check tensorboard; then
    # Only a network failure skips: a package that installs but reads
    # wrongly fails below.
    if ! "$VENV/bin/pip" download -q --no-deps --disable-pip-version-check -d "$(mktemp -d)" \
         six >/dev/null 2>&1; then
      echo "tensorboard-tests: PyPI is unreachable; skipping" >&2
      exit 77
    fi
    exit 1
  fi
fi
export PATH="$BUILD/bin:$PATH"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/train" "$T/val"
"$PYTHON" test/e2e/Inputs/train_reference.py data "$T/train" 96 5
"$PYTHON" test/e2e/Inputs/train_reference.py data "$T/val" 32 6
tcc examples/mlp.onnxtxt --batch=8 --loss=cross_entropy --grad-clip=5 -o "$T/mlp.so"
READER="$VENV/bin/python $REPO/test/e2e/Inputs/tensorboard_reader.py"

# A whole run with validation every 5 steps.
tcc-run "$T/mlp.so" --data "$T/train" --val "$T/val" --eval-every 5 --steps 20 --lr 0.1 \
  --metrics "$T/m.jsonl" --tensorboard "$T/tb" --log-every 20
$READER "$T/tb" "$T/m.jsonl"

# Stopped after 12 steps (the checkpoint is of step 10), resumed to 20: the
# reader sees the resumed run's steps 11-12, as the metrics file does.
tcc-run "$T/mlp.so" --data "$T/train" --val "$T/val" --eval-every 5 --steps 12 --lr 0.1 \
  --metrics "$T/r.jsonl" --tensorboard "$T/tbr" --checkpoint-dir "$T/ck" --save-every 10 \
  --log-every 20 >/dev/null
cp "$T/ck/checkpoint.safetensors" "$T/step10.safetensors"
sleep 1 # the resumed run's event file sorts after the first (seconds in its name)
tcc-run "$T/mlp.so" --data "$T/train" --val "$T/val" --eval-every 5 --steps 20 --lr 0.1 \
  --metrics "$T/r.jsonl" --tensorboard "$T/tbr" --checkpoint-dir "$T/ck2" \
  --resume "$T/step10.safetensors" --log-every 20 >/dev/null
$READER "$T/tbr" "$T/r.jsonl"
