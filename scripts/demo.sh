#!/usr/bin/env bash
# The main job: train a classifier ahead-of-time compiled by tcc.
#
# 1. Fashion-MNIST (Debian's dataset-fashion-mnist: 60,000 training and 10,000
#    test images of clothing, 28x28, 10 classes) becomes .npy files, and an
#    MLP (784 -> 128 -> ReLU -> 10, PyTorch's default initialization) is
#    written as an ONNX model (scripts/fashion_mnist.py, standard library).
# 2. tcc compiles the model with --loss=cross_entropy into one shared library
#    holding the inference entry point and the whole training step (forward,
#    loss, generated backward, SGD update in place).
# 3. tcc-run trains it for 3 epochs (batch 64, learning rate 0.1), showing the
#    loss falling, then reports the accuracy on the 10,000 test images.
# 4. The small example MLP (examples/mlp.onnxtxt) runs inference on the
#    embedded example rows (examples/mlp_features.csv).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/demo
mkdir -p "$out"
tensors=test/runtime/Inputs/tensors.py
fashion=/usr/share/datasets/fashion-mnist

echo "== Fashion-MNIST from $fashion"
if [[ ! -f "$out/fashion/test/y.npy" ]]; then
  python3 scripts/fashion_mnist.py data "$fashion" "$out/fashion"
else
  echo "(converted before: $out/fashion)"
fi
python3 scripts/fashion_mnist.py model "$out/fashion_mlp.onnx" --hidden 128 --seed 0

echo "== compiling the training step: $out/fashion_mlp.so"
time build/bin/tcc "$out/fashion_mlp.onnx" --batch=64 --loss=cross_entropy --optimizer=sgd \
  -o "$out/fashion_mlp.so"
build/bin/tcc-run "$out/fashion_mlp.so" --list | sed -n '/^arena/,$p'

echo "== training: 3 epochs of 937 steps, SGD, lr 0.1"
build/bin/tcc-run "$out/fashion_mlp.so" --data "$out/fashion/train" --steps 2811 --lr 0.1 \
  --seed 0 --log-every 250 --metrics "$out/fashion_metrics.jsonl" \
  --save "$out/fashion_mlp.trained.safetensors" --val "$out/fashion/test"

echo "== inference: examples/mlp.onnxtxt on examples/mlp_features.csv"
build/bin/tcc examples/mlp.onnxtxt --batch=8 -o "$out/mlp.so"
values=$(grep -v '^#' examples/mlp_features.csv | paste -sd, -)
python3 "$tensors" npy "$out/features.npy" '<f4' 8x4 "$values"
build/bin/tcc-run "$out/mlp.so" --infer --input features="$out/features.npy" \
  --output-dir "$out/outputs"
python3 "$tensors" dump "$out/outputs/logits.npy"
