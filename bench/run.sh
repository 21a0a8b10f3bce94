#!/usr/bin/env bash
# Runs the inference benchmark (tcc against onnxruntime): sets up bench/.venv
# when needed (bench/setup.sh, idempotent), then bench/infer_bench.py with the
# venv's python. Every argument goes to infer_bench.py, e.g.
#
#   bench/run.sh                                  # build/ of this checkout
#   bench/run.sh --build-dir /tmp/tcc-snap --json results.json
#   TCC_BUILD_DIR=/path/to/build bench/run.sh --threads 1
#
# bench/run.sh --help lists the options.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/setup.sh" >&2
# numpy only prepares inputs and compares outputs: keep its OpenBLAS threads
# from spinning on the cores that the two engines are timed on.
export OPENBLAS_NUM_THREADS=1
exec "$here/.venv/bin/python" "$here/infer_bench.py" "$@"
