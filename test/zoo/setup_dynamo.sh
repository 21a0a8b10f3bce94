#!/usr/bin/env bash
# Creates the venv of test/zoo/make_zoo_dynamo.py: pyenv's (or PATH's) python3
# with PyPI's torch 2.x and the pins of test/zoo/requirements-dynamo.txt.
# Idempotent: a venv that already imports every pinned version is kept.
# Nothing here is part of the test path.
#
# Usage: test/zoo/setup_dynamo.sh [--force]   (VENV=path to put it elsewhere)
set -euo pipefail
cd "$(dirname "$0")"
VENV=${VENV:-/opt/tcc/zoo-dynamo-venv}
REQ=$PWD/requirements-dynamo.txt

if [[ "${1:-}" == "--force" ]]; then
  rm -rf "$VENV"
fi

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
PY
}

if ! venv_ok; then
  echo "test/zoo/setup_dynamo: creating $VENV with $(python3 --version)" >&2
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQ"
  venv_ok || { echo "test/zoo/setup_dynamo: $VENV does not import the pinned versions" >&2; exit 1; }
fi
echo "test/zoo/setup_dynamo: ready: $VENV" >&2
