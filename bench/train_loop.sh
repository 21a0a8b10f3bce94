#!/usr/bin/env bash
# The training loop's own costs, measured (not asserted): on a Fashion-MNIST
# CNN (scripts/fashion_mnist.py --arch cnn, the first 4,096 images),
#  1. data workers and augmentation: samples/s of 200 steps with no
#     augmentation, and with crop + flip + normalize on 0, 1 and 2 workers
#     (--threads 1 leaves a core to the workers on this 2-core machine);
#  2. a 6-trial sweep (3 rates x 2 weight decays) from one compile against
#     compiling an artifact per trial (what a sweep costs without runtime
#     hyperparameters), wall time of each.
# Uses build/bin (TCC_BUILD_DIR to override) and Debian's
# dataset-fashion-mnist; python3 with the standard library only.
#   bench/train_loop.sh [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TCC_BUILD_DIR:-build}/bin
STEPS=${1:-200}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 scripts/fashion_mnist.py data /usr/share/datasets/fashion-mnist "$T/data" --limit 4096 >/dev/null
python3 scripts/fashion_mnist.py model "$T/cnn.onnx" --arch cnn --seed 1
export TCC_CACHE_DIR="$T/cache"
"$BIN/tcc" "$T/cnn.onnx" --batch=32 --loss=cross_entropy --optimizer=adamw -o "$T/cnn.so"
AUG="--random-crop 2 --flip --normalize 0.286/0.353 --image-shape 1x28x28"

run() { # LABEL ARGS...: the last progress line's samples/s
  local label=$1
  shift
  local line
  line=$("$BIN/tcc-run" "$T/cnn.so" --data "$T/data/train" --steps "$STEPS" --lr 1e-3 \
    --threads 1 --log-every "$STEPS" "$@" | tail -1)
  printf '%-36s %s\n' "$label" "$(echo "$line" | grep -o '[0-9]* samples/s.*' | sed 's/ eta [0-9:]*//')"
}
echo "== data workers ($STEPS steps, batch 32, --threads 1)"
run "no augmentation"
run "augmented, 0 workers" $AUG --workers 0
run "augmented, 1 worker" $AUG --workers 1
run "augmented, 2 workers" $AUG --workers 2

echo "== a 6-trial sweep of 100 steps"
start=$(date +%s.%N)
"$BIN/tcc-run" sweep "$T/cnn.so" --data "$T/data/train" --steps 100 --lr 1e-3,3e-3,1e-2 \
  --weight-decay 0,0.1 --jobs 2 --out "$T/sweep.jsonl" >/dev/null
sweep=$(echo "$(date +%s.%N) - $start" | bc)
start=$(date +%s.%N)
for lr in 1e-3 3e-3 1e-2; do
  for wd in 0 0.1; do
    rm -rf "$T/cache"
    "$BIN/tcc" "$T/cnn.onnx" --batch=32 --loss=cross_entropy --optimizer=adamw \
      --weight-decay=$wd -o "$T/trial.so"
    "$BIN/tcc-run" "$T/trial.so" --data "$T/data/train" --steps 100 --lr $lr --threads 1 \
      --log-every 100 >/dev/null
  done
done
separate=$(echo "$(date +%s.%N) - $start" | bc)
printf 'one compile, tcc-run sweep --jobs 2:   %.1f s\n' "$sweep"
printf 'a compile per trial, one at a time:    %.1f s\n' "$separate"
