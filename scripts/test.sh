#!/usr/bin/env bash
# Builds everything and runs the whole test suite (lit, GoogleTest, the short
# fuzz runs) through CTest.
#
#   scripts/test.sh [CTEST ARGS...]
#   scripts/test.sh --sanitize [--with-zoo] [CTEST ARGS...]
#
# --sanitize configures a second tree, build-sanitize/, in which everything
# (compiler, runtime, tools, unit tests, fixture artifacts) is compiled with
# AddressSanitizer + UndefinedBehaviorSanitizer (UB aborts; leaks are
# reported), builds it and runs the suite there. It covers tcc's own C/C++
# code only: the artifacts that tcc compiles during the tests, and the system
# libraries (LLVM/MLIR, protobuf, ONNX, oneDNN, libomp) are not instrumented;
# the fuzz targets are left out (they are sanitized in every build). The model
# zoo (CTest entry `zoo`, the longest) is excluded unless --with-zoo is given.
# Slow: on 2 cores a cold build takes ~12 min, the suite ~10 min. CI does not
# run it; fuzz/README.md says what it covers.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" != "--sanitize" ]]; then
  scripts/build.sh
  # The tests' compile cache (test/lit.cfg.py) starts empty: the suite
  # compiles for real.
  rm -rf build/test-cache
  cd build
  exec ctest --output-on-failure -j2 "$@"
fi
shift
zoo=0
if [[ "${1:-}" == "--with-zoo" ]]; then
  zoo=1
  shift
fi

REPO="$PWD"
export CCACHE_BASEDIR="$REPO" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
# One shared ASan runtime for the whole process (-shared-libsan): the
# instrumented libtcc_runtime.so and fixture artifacts are linked with
# -z defs, which the static runtime (linked into executables only) would
# leave unresolved. Executables find it through their rpath.
SAN_RT_DIR=$(dirname "$(clang-22 -print-file-name=libclang_rt.asan-x86_64.so)")
SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
SAN_LINK="-fsanitize=address,undefined -shared-libsan -Wl,-rpath,$SAN_RT_DIR"
if [[ ! -f build-sanitize/build.ninja ]]; then
  cmake -G Ninja -S . -B build-sanitize \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_C_FLAGS="$SAN_FLAGS -gline-tables-only" \
    -DCMAKE_CXX_FLAGS="$SAN_FLAGS -gline-tables-only" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_EXE_LINKER_FLAGS="$SAN_LINK" -DCMAKE_SHARED_LINKER_FLAGS="$SAN_LINK" \
    -DCMAKE_MODULE_LINKER_FLAGS="$SAN_LINK" \
    -DTCC_ENABLE_FUZZER=OFF >/dev/null
fi
ninja -C build-sanitize

# Leak checking stays on; scripts/sanitize.supp lists the third-party leaks
# (each with the reason) and nothing of tcc's. CTest and lit pass these
# variables through to every test.
SUPP="$REPO/scripts/sanitize.supp"
# A finding aborts (SIGABRT): a plain exit code 1 would look like an ordinary
# error to `not tcc ...` in lit and to the ONNX backend runner.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:check_initialization_order=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$SUPP:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}"
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}
rm -rf build-sanitize/test-cache
cd build-sanitize
exclude=()
((zoo)) || exclude=(-E '^zoo$')
exec ctest --output-on-failure -j2 "${exclude[@]}" "$@"
