#!/usr/bin/env bash
# Compile time: tcc (cold cache, warm cache, a one-flag edit) against
# torch.compile's first training step (cold and warm inductor cache), for the
# model zoo and the GPT-2-small shape, in one invocation on this machine
# (bench/compile_bench.py says what each column is).
#
#   bench/compile.sh [--threads N] [--repeat N] [--models a,b] [--no-torch] [--json OUT]
#
# Sets up bench/.venv-compile once: pyenv's python3 with PyPI's torch 2.5.1,
# torchvision 0.20.1 and transformers 4.46.3 (~3 GB with torch's CUDA
# packages; CPU only is used). Exports the GPT-2-small shape with Debian's
# python3 + transformers 4.36 (bench/export_gpt2_small.py) into
# bench/out/compile/gpt2_small (~500 MB, not committed). Needs build/bin/tcc.
# Not part of the test path.
set -euo pipefail
cd "$(dirname "$0")"
VENV=.venv-compile
if ! "$VENV/bin/python" -c 'import torch, torchvision, transformers, onnx' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q torch==2.5.1 torchvision==0.20.1 transformers==4.46.3 onnx numpy
fi
GPT=out/compile/gpt2_small
if [[ ! -f "$GPT/model.onnx" ]]; then
  /usr/bin/python3 export_gpt2_small.py "$GPT"
fi
exec "$VENV/bin/python" compile_bench.py --tcc ../build/bin/tcc --gpt2-small "$GPT" "$@"
