#!/usr/bin/env bash
# The Python package's tests: installs the package into a venv (build/python-venv)
# the way a user does, `pip install .`, but with its CMake pointed at the tree
# that scripts/build.sh built (TCC_PREBUILT_DIR), so only the nanobind module
# is compiled, then runs pytest on python/tests. CTest runs this (`python`).
#
#   scripts/python-tests.sh [BUILD_DIR] [PYTEST ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
BUILD=$(cd "${1:-build}" && pwd)
shift || true
VENV="$BUILD/python-venv"
PYTHON=${PYTHON:-python3}
if [[ ! -x "$VENV/bin/python" ]]; then
  "$PYTHON" -m venv "$VENV"
fi
# Build requirements are installed once (no build isolation: no download per
# run); pip's cache serves them after the first time.
"$VENV/bin/pip" install -q --disable-pip-version-check scikit-build-core nanobind numpy pytest
install() {
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-build-isolation "$REPO" \
    -Ccmake.define.TCC_PREBUILT_DIR="$BUILD" -Cbuild-dir="$BUILD/python-module" \
    -Ccmake.define.CMAKE_C_COMPILER=clang-22 -Ccmake.define.CMAKE_CXX_COMPILER=clang++-22 \
    -Ccmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache
}
install
# Twice (2026-12-02, after the runtime was rebuilt) the wheel built in the
# reused build folder came without tcc/_tcc*.so, for a reason not yet found;
# then the build folder is started afresh, once, and said so.
if ! ls "$VENV"/lib/python3*/site-packages/tcc/_tcc*.so >/dev/null 2>&1; then
  echo "python-tests: the installed package lacks tcc._tcc; rebuilding $BUILD/python-module" >&2
  rm -rf "$BUILD/python-module"
  install
fi
# From outside the checkout, so that `import tcc` is the installed package.
cd "$BUILD"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$REPO/python/tests" "$@"
