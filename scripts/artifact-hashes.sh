#!/usr/bin/env bash
# Compiles a fixed set of models (the parity models with both optimizers,
# CPU and CUDA targets, plus a few zoo models) and prints the SHA-256 of
# every artifact and weights file, one line each. For refactorings that must
# not change the output: run it before and after, then diff the two lists.
#
#   scripts/artifact-hashes.sh [TCC] > before.txt
#
# The .so embeds the fingerprint of the command line; the command lines are
# fixed here, so equal inputs give equal bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
TCC=${1:-build/bin/tcc}
work=$(mktemp -d /tmp/tcc-hashes.XXXXXX)
trap 'rm -rf "$work"' EXIT
compile() { # NAME MODEL FLAGS...
  local name=$1 model=$2
  shift 2
  # Relative paths: the fingerprint hashes the command line.
  (cd "$work" && "$OLDPWD/$TCC" "$OLDPWD/$model" -o "$name.so" "$@" 2>/dev/null) ||
    { echo "$name: compile failed"; return; }
  (cd "$work" && sha256sum "$name.so" "$name.safetensors")
}
compile mlp-sgd test/parity/mlp/model.onnx --loss=cross_entropy --optimizer=sgd --momentum=0.9
compile mlp-adamw test/parity/mlp/model.onnx --loss=cross_entropy --optimizer=adamw --grad-clip=1
compile cnn-sgd test/parity/cnn_bn/model.onnx --loss=cross_entropy --optimizer=sgd --momentum=0.9 --weight-decay=5e-4
compile cnn-adamw test/parity/cnn_bn/model.onnx --loss=cross_entropy --optimizer=adamw
compile gpt-sgd test/parity/gpt/model.onnx --loss=cross_entropy --optimizer=sgd --momentum=0.9 --nesterov
compile gpt-adamw test/parity/gpt/model.onnx --loss=cross_entropy --optimizer=adamw --grad-accum=2
compile gpt-adam-infer test/parity/gpt/model.onnx --mode=infer
compile mlp-cuda test/parity/mlp/model.onnx --loss=cross_entropy --optimizer=adamw --target=cuda
compile cnn-cuda test/parity/cnn_bn/model.onnx --loss=cross_entropy --optimizer=sgd --momentum=0.9 --target=cuda:sm_80
compile gpt-cuda test/parity/gpt/model.onnx --loss=cross_entropy --optimizer=adam --target=cuda
compile lstm test/zoo/lstm/model.onnx --loss=cross_entropy --optimizer=adam
compile resnet18 test/zoo/resnet18/model.onnx --loss=cross_entropy --optimizer=sgd --momentum=0.9 --weight-decay=5e-4
