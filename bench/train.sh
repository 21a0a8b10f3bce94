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
# torch's BLAS: OpenBLAS (OpenMP build, so it follows torch.set_num_threads
# on the process's one OpenMP pool) instead of the system's libblas.so.3,
# which may be the reference BLAS; see train_setup.sh.
openblas=/usr/lib/x86_64-linux-gnu/openblas-openmp
if [[ -e "$openblas/libblas.so.3" ]]; then
  export LD_LIBRARY_PATH="$openblas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
exec "$here/.venv-train/bin/python" "$here/train_bench.py" "$@"
