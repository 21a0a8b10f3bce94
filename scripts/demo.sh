#!/usr/bin/env bash
# The main job for now: import the example MLP (ONNX text format, symbolic
# batch bound to 8) and print its tcc IR.
set -euo pipefail
cd "$(dirname "$0")/.."
exec build/bin/tcc examples/mlp.onnxtxt --batch=8 --emit=mlir
