#!/usr/bin/env bash
# Runs the training-step benchmark (tcc against PyTorch eager and JAX jit):
# sets up bench/.venv-train and the exported models when needed
# (bench/train_setup.sh, idempotent), then bench/train_bench.py with the
# venv's python. Every argument goes to train_bench.py, e.g.
#
#   bench/train.sh                                # build/ of this checkout, 2 threads
#   bench/train.sh --threads 1 --json train.json
#   bench/train.sh --models gpt4 --engines tcc,jax --iters 50
#   TCC_BUILD_DIR=/path/to/build bench/train.sh
#
# bench/train.sh --help lists the options.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/train_setup.sh"
# numpy only prepares batches: keep its OpenBLAS threads from spinning on the
# cores that the engines are timed on.
export OPENBLAS_NUM_THREADS=1
exec "$here/.venv-train/bin/python" "$here/train_bench.py" "$@"
