#!/usr/bin/env bash
# Sets up the training benchmark (bench/train_bench.py):
#  1. Debian's python3-torch (1.13, CPU) and python3-venv, with apt when they
#     are missing (PyPI's torch wheel would pull gigabytes of CUDA packages);
#  2. bench/.venv-train: a venv over /usr/bin/python3 with
#     --system-site-packages and the pins of requirements-train.txt (jax),
#     with Debian's numpy held (torch 1.13 needs numpy 1.x);
#  3. OpenBLAS (libopenblas0-openmp) for torch's matmuls: Debian's torch
#     calls the libblas.so.3 alternative, which on a bare system is the
#     reference BLAS (about 17x slower on a 1024^2 matmul here). train.sh
#     points only the benchmark's process at it (LD_LIBRARY_PATH); this
#     script restores the system's previous libblas/liblapack choice after
#     the install, so nothing else on the machine changes. The openmp build
#     runs on the process's one OpenMP pool (libomp) at torch's thread count;
#  4. bench/out/train/gpt4/model.onnx, the 4-layer GPT exported by PyTorch
#     (bench/export_train_models.py; not committed).
# Idempotent: each part is skipped when it is already in place.
# Nothing here is part of the test path (scripts/test.sh).
#
# Usage: bench/train_setup.sh [--force]   (--force: recreate the venv)
set -euo pipefail
cd "$(dirname "$0")"

VENV=.venv-train
REQ=requirements-train.txt
PY=/usr/bin/python3

if [[ "${1:-}" == "--force" ]]; then
  rm -rf "$VENV"
fi

if ! "$PY" -c 'import torch, numpy, venv' 2>/dev/null; then
  echo "bench/train_setup: installing python3-torch and python3-venv with apt" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq python3-torch python3-venv >/dev/null
fi

OPENBLAS_DIR=/usr/lib/x86_64-linux-gnu/openblas-openmp
if [[ ! -e "$OPENBLAS_DIR/libblas.so.3" ]]; then
  echo "bench/train_setup: installing libopenblas0-openmp with apt (for torch's BLAS)" >&2
  declare -A before
  for alt in libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu; do
    before[$alt]=$(readlink "/etc/alternatives/$alt" 2>/dev/null || true)
  done
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq libopenblas0-openmp >/dev/null
  for alt in "${!before[@]}"; do
    if [[ -n "${before[$alt]}" ]]; then
      update-alternatives --quiet --set "$alt" "${before[$alt]}"
    fi
  done
fi

# Prints nothing and succeeds when the venv imports every pinned version.
venv_ok() {
  [[ -x "$VENV/bin/python" ]] || return 1
  "$VENV/bin/python" - "$REQ" <<'PY' 2>/dev/null
import importlib.metadata as md, sys
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line:
        name, _, version = line.partition("==")
        if md.version(name) != version:
            sys.exit(1)
import jax, numpy, torch  # noqa: F401
if not numpy.__version__.startswith("1."):
    sys.exit(1)
PY
}

if ! venv_ok; then
  echo "bench/train_setup: creating $VENV over $($PY --version) with Debian's torch and numpy" >&2
  rm -rf "$VENV"
  "$PY" -m venv --system-site-packages "$VENV"
  # Hold Debian's numpy: a constraint, so pip fails rather than upgrade it.
  numpy_version=$("$PY" -c 'import numpy; print(numpy.__version__)')
  constraints=$(mktemp)
  echo "numpy==$numpy_version" > "$constraints"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -c "$constraints" -r "$REQ"
  rm -f "$constraints"
  venv_ok || { echo "bench/train_setup: $VENV does not import the pinned jax, numpy 1.x and torch" >&2; exit 1; }
fi

"$VENV/bin/python" export_train_models.py out/train >&2

"$VENV/bin/python" - <<'PY' >&2
import sys, numpy, torch, jax, jaxlib
print(f"bench/train_setup: ready: python {sys.version.split()[0]}, numpy {numpy.__version__}, "
      f"torch {torch.__version__}, jax {jax.__version__}, jaxlib {jaxlib.__version__}")
PY
