#!/usr/bin/env bash
# Creates bench/.venv, the Python environment of the inference benchmark, and
# installs bench/requirements.txt (numpy, onnx, onnxruntime) into it.
#
# Idempotent: when the venv exists and already imports the pinned versions it
# does nothing. The interpreter is the first `python3` on PATH (pyenv's 3.11
# on the project's machines); set PYTHON=/path/to/python3 to choose another.
#
# Fallback: when PyPI cannot be reached, it says so and builds the venv from
# Debian's /usr/bin/python3 with --system-site-packages, after installing
# python3-numpy, python3-onnx and python3-onnxruntime with apt (when Debian has
# them; it reports any that are missing). Versions then differ from the pins.
#
# Usage: bench/setup.sh [--force]   (--force: delete and recreate the venv)
set -euo pipefail
cd "$(dirname "$0")"

VENV=.venv
REQ=requirements.txt
PYTHON=${PYTHON:-python3}

if [[ "${1:-}" == "--force" ]]; then
  rm -rf "$VENV"
fi

# Prints nothing and succeeds when the venv imports every pinned version.
venv_ok() {
  [[ -x "$VENV/bin/python" ]] || return 1
  "$VENV/bin/python" - "$REQ" <<'PY' 2>/dev/null
import importlib.metadata as md, sys
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, _, version = line.partition("==")
    if md.version(name) != version:
        sys.exit(1)
import numpy, onnx, onnxruntime  # noqa: F401  (importable, not just listed)
PY
}

if venv_ok; then
  echo "bench/setup: $VENV is up to date ($("$VENV/bin/python" --version))"
  exit 0
fi

# Can pip get the packages? (A bounded download of one pinned package.)
pypi_ok() {
  local dir status=0
  dir=$(mktemp -d)
  timeout 60 "$PYTHON" -m pip download --no-deps --quiet \
    -d "$dir" "$(grep -m1 '^onnx==' "$REQ")" >/dev/null 2>&1 || status=$?
  rm -rf "$dir"
  return "$status"
}

if pypi_ok; then
  echo "bench/setup: creating $VENV with $("$PYTHON" --version) ($(command -v "$PYTHON"))"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet -r "$REQ"
else
  echo "bench/setup: PyPI is unreachable; falling back to Debian's python3 and apt packages" >&2
  echo "bench/setup: versions will differ from $REQ" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  for p in python3-venv python3-numpy python3-onnx python3-onnxruntime; do
    if apt-cache show "$p" >/dev/null 2>&1; then
      apt-get install -y -qq "$p" >/dev/null
    else
      echo "bench/setup: Debian has no package $p" >&2
    fi
  done
  rm -rf "$VENV"
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
  if ! "$VENV/bin/python" -c 'import numpy, onnx, onnxruntime'; then
    echo "bench/setup: the fallback venv cannot import numpy, onnx and onnxruntime" >&2
    exit 1
  fi
  echo "bench/setup: $VENV uses Debian's packages (not the pins)"
  exit 0
fi

"$VENV/bin/python" - <<'PY'
import sys, numpy, onnx, onnxruntime
print(f"bench/setup: ready: python {sys.version.split()[0]}, numpy {numpy.__version__}, "
      f"onnx {onnx.__version__}, onnxruntime {onnxruntime.__version__}")
PY
