#!/usr/bin/env bash
# The main job: compile the example MLP (ONNX text format, symbolic batch bound
# to 8) ahead of time into build/demo/mlp.so + mlp.safetensors, run it with
# tcc-run on the embedded example data, and print the logits. Uses python3
# (standard library only) to turn the CSV into a .npy file and back.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/demo
mkdir -p "$out"
tensors=test/runtime/Inputs/tensors.py

echo "== tcc IR of examples/mlp.onnxtxt (batch 8)"
build/bin/tcc examples/mlp.onnxtxt --batch=8 --emit=mlir

echo "== compiling to $out/mlp.so"
build/bin/tcc examples/mlp.onnxtxt --batch=8 -o "$out/mlp.so"
build/bin/tcc-run "$out/mlp.so" --list

values=$(grep -v '^#' examples/mlp_features.csv | paste -sd, -)
python3 "$tensors" npy "$out/features.npy" '<f4' 8x4 "$values"
echo "== running on examples/mlp_features.csv"
build/bin/tcc-run "$out/mlp.so" --infer --input features="$out/features.npy" \
  --output-dir "$out/outputs"
python3 "$tensors" dump "$out/outputs/logits.npy"
