#!/usr/bin/env bash
# Times every matmul library call of three training steps on oneDNN and on
# BLAS (tcc-gemm-bench; docs/cpu-gemm.md has the results): the parity GPT
# (test/parity/gpt, batch 16), gpt4 (bench/export_train_models.py) and a
# GPT-2-small-shaped GPT at sequence 64, batch 8 (export_gpt2s.py), at 1 and
# 2 threads. Needs a build (build/ or TCC_BUILD_DIR) and Debian's
# python3-torch for the two exports (bench/train_setup.sh installs it).
#
# Usage: bench/gemm/run.sh [OUT_DIR]   (default bench/out/gemm; extra
# tcc-gemm-bench options in GEMM_BENCH_FLAGS, e.g. "--rounds 21")
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${TCC_BUILD_DIR:-$root/build}
out=${1:-$root/bench/out/gemm}
mkdir -p "$out"
tcc="$build/bin/tcc"
/usr/bin/python3 "$root/bench/export_train_models.py" "$out/train" >&2
[[ -f "$out/gpt2s/model.onnx" ]] || /usr/bin/python3 "$here/export_gpt2s.py" "$out/gpt2s" >&2
"$tcc" "$root/test/parity/gpt/model.onnx" --batch=16 --loss=cross_entropy --optimizer=sgd --momentum=0.9 -o "$out/gpt.so"
"$tcc" "$out/train/gpt4/model.onnx" --batch=16 --loss=cross_entropy --optimizer=adamw -o "$out/gpt4.so"
"$tcc" "$out/gpt2s/model.onnx" --batch=8 --loss=cross_entropy --optimizer=adamw -o "$out/gpt2s.so"
uptime
for threads in 1 2; do
  # shellcheck disable=SC2086
  "$build/bin/tcc-gemm-bench" --threads "$threads" ${GEMM_BENCH_FLAGS:-} "$out/gpt.so" "$out/gpt4.so" "$out/gpt2s.so"
done
uptime
