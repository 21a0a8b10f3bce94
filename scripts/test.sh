#!/usr/bin/env bash
# Builds everything and runs the whole test suite (lit, GoogleTest, the short
# fuzz run) through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd build
ctest --output-on-failure -j2 "$@"
