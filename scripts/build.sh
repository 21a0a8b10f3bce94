#!/usr/bin/env bash
# Configures (once) and builds tcc in build/ with Ninja and ccache.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
# ccache keys on paths relative to the checkout, so a fresh clone elsewhere
# (CI) still hits the cache.
export CCACHE_BASEDIR="$REPO"
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
BUILD_TYPE=${TCC_BUILD_TYPE:-Release}
if [[ ! -f build/build.ninja ]]; then
  cmake -G Ninja -S . -B build \
    -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_CXX_FLAGS="-g0" >/dev/null
fi
ninja -C build "$@"
