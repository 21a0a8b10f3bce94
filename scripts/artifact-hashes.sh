#!/usr/bin/env bash
# Compiles a fixed set of models (the parity models with both optimizers,
# CPU and CUDA targets, two zoo models) and prints the SHA-256 of every
# artifact and weights file, one line each. For refactorings that must not
# change the output: run it before and after, then diff the two lists.
#
#   scripts/artifact-hashes.sh [TCC] > before.txt
#
# The artifact's fingerprint hashes tcc's command line, so every compile runs
# in a scratch folder on a copy of its model under the same relative path.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
TCC=$(realpath "${1:-build/bin/tcc}")
work=$(mktemp -d /tmp/tcc-hashes.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/models/{mlp,cnn_bn,gpt,lstm,resnet18}
for m in mlp cnn_bn gpt; do cp "test/parity/$m/model.onnx" "$work/models/$m/"; done
for m in lstm resnet18; do
  cp "test/zoo/$m/model.onnx" "$work/models/$m/"
  # The zoo keeps weights as seeds; check_zoo.py's way of regenerating them.
  /usr/bin/python3 -c "import json, sys; sys.path.insert(0, '$REPO/test/zoo'); import zoo_common as z
z.write_weights(json.load(open('$REPO/test/zoo/$m/ref.json'))['weights'], '$work/models/$m/' + z.WEIGHTS_FILE)"
done
cd "$work"
# A compile cache of its own, empty: every artifact is compiled, none reused.
export TCC_CACHE_DIR="$work/cache"
compile() { # NAME MODEL FLAGS...
  local name=$1 model=$2
  shift 2
  "$TCC" "models/$model/model.onnx" -o "$name.so" "$@" 2>/dev/null || { echo "$name: compile failed"; return; }
  sha256sum "$name.so" "$name.safetensors"
}
compile mlp-sgd mlp --batch=16 --loss=cross_entropy --optimizer=sgd --momentum=0.9
compile mlp-adamw mlp --batch=16 --loss=cross_entropy --optimizer=adamw --grad-clip=1
compile cnn-sgd cnn_bn --batch=16 --loss=cross_entropy --optimizer=sgd --momentum=0.9 --weight-decay=5e-4
compile cnn-adamw cnn_bn --batch=16 --loss=cross_entropy --optimizer=adamw
compile gpt-sgd gpt --batch=16 --loss=cross_entropy --optimizer=sgd --momentum=0.9 --nesterov
compile gpt-adamw gpt --batch=16 --loss=cross_entropy --optimizer=adamw --grad-accum=2
compile gpt-infer gpt --batch=16 --mode=infer
compile mlp-cuda mlp --batch=16 --loss=cross_entropy --optimizer=adamw --target=cuda
compile cnn-cuda cnn_bn --batch=16 --loss=cross_entropy --optimizer=sgd --momentum=0.9 --target=cuda:sm_80
compile gpt-cuda gpt --batch=16 --loss=cross_entropy --optimizer=adam --target=cuda
compile lstm lstm --loss=cross_entropy --optimizer=adam
compile resnet18 resnet18 --loss=cross_entropy --optimizer=sgd --momentum=0.9 --weight-decay=0.0005
