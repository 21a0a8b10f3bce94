#!/usr/bin/env bash
# Longer fuzz runs on demand (fuzz/README.md); CTest runs each target briefly.
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS] [LIBFUZZER ARGS...]
#
# TARGET: onnx-import, npy, safetensors, json, checkpoint-metadata,
# tensor-proto, or all (the default; SECONDS each, one after another).
# SECONDS defaults to 600. FUZZ_JOBS=N runs N processes (-fork=N, keeps going
# after a crash). New inputs accumulate in the build tree's corpus, crashes
# land in its artifacts folder; the run's last lines say where.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
TARGETS=(onnx-import npy safetensors json checkpoint-metadata tensor-proto)
target=${1:-all}
seconds=${2:-600}
shift $(($# < 2 ? $# : 2))
jobs=${FUZZ_JOBS:-1}

run() {
  local name=$1 dict= corpus seeds artifacts limits=(-rss_limit_mb=2048)
  shift
  if [[ $name == onnx-import ]]; then
    # The importer keeps one MLIRContext for the whole run: no leak check.
    corpus=build/fuzz/corpus seeds=build/fuzz/seeds artifacts=build/fuzz/artifacts
    dict=fuzz/onnx.dict limits=(-rss_limit_mb=3000 -detect_leaks=0)
  else
    corpus=build/fuzz/runtime/corpus/$name seeds=build/fuzz/runtime/seeds/$name
    artifacts=build/fuzz/runtime/artifacts/$name
    limits+=(-malloc_limit_mb=512 -max_len=8192)
    case $name in
      npy | json) dict=fuzz/$name.dict ;;
      safetensors | checkpoint-metadata) dict=fuzz/safetensors.dict ;;
    esac
  fi
  scripts/build.sh "tcc-$name-fuzzer" >/dev/null
  mkdir -p "$corpus" "$artifacts"
  local fork=()
  ((jobs > 1)) && fork=(-fork="$jobs" -ignore_crashes=1)
  echo "=== $name: ${seconds} s, corpus $corpus, crashes in $artifacts/"
  "build/bin/tcc-$name-fuzzer" -max_total_time="$seconds" -timeout=10 "${limits[@]}" \
    ${dict:+-dict="$dict"} -artifact_prefix="$REPO/$artifacts/" -print_final_stats=1 \
    "${fork[@]}" "$@" "$corpus" "$seeds"
}

if [[ $target == all ]]; then
  for t in "${TARGETS[@]}"; do run "$t" "$@"; done
elif [[ " ${TARGETS[*]} " == *" $target "* ]]; then
  run "$target" "$@"
else
  echo "usage: scripts/fuzz.sh [$(IFS='|'; echo "${TARGETS[*]}")|all] [SECONDS] [LIBFUZZER ARGS...]" >&2
  exit 2
fi
