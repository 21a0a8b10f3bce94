#!/usr/bin/env bash
# Length-bucketed against padded training (issue 23), measured, not
# asserted: a byte-level GPT (examples/gpt.tcc, L=2 D=128 H=4, 256
# positions, vocabulary 256, batch 16, AdamW) on the sentences of real text
# (bench/length_data.py: Debian's license texts, one sentence per sample,
# padded to 256) for EPOCHS epochs, compiled once with train_step at
# T = 256 only and once with --length-buckets T=32,64,128,256. Reports the
# compile time, the training wall time, samples/s and the validation loss
# (eval_step at T = 256, the same for both) after the same number of
# epochs. Uses build/bin (TCC_BUILD_DIR to override); python3 with the
# standard library only.
#   bench/buckets.sh [EPOCHS] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TCC_BUILD_DIR:-build}/bin
EPOCHS=${1:-3}
THREADS=${2:-2}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 bench/length_data.py "$T/data" 256
export TCC_CACHE_DIR="$T/cache"
MODEL=(examples/gpt.tcc --batch=16 --dim L=2 --dim D=128 --dim H=4 --dim V=256 --dim P=256)

compile() { # LABEL ARGS...
  local start end
  start=$(date +%s.%N)
  "$BIN/tcc" "${MODEL[@]}" "${@:2}"
  end=$(date +%s.%N)
  printf '%-10s compile %6.1f s\n' "$1" "$(echo "$end - $start" | bc)"
}
compile padded --dim T=256 -o "$T/padded.so"
compile buckets --length-buckets T=32,64,128,256 -o "$T/buckets.so"

samples=$(python3 -c "import struct,re,sys; h=open(sys.argv[1],'rb').read(128).decode('latin1'); print(re.search(r'\((\d+),', h).group(1))" "$T/data/train/tokens.npy")
per_epoch_padded=$((samples / 16))
per_epoch_buckets=$("$BIN/tcc-run" "$T/buckets.so" --data "$T/data/train" --steps 1 --lr 1e-3 \
  --threads "$THREADS" | sed -n 's/.*; \([0-9]*\) batches per epoch/\1/p')
"$BIN/tcc-run" "$T/buckets.so" --data "$T/data/train" --steps 1 --lr 1e-3 --threads "$THREADS" | head -1

run() { # LABEL ARTIFACT STEPS: wall and CPU seconds (the CPU time is the
  # steadier number on a shared machine), samples/s, the losses.
  local start end out cpu
  start=$(date +%s.%N)
  out=$(python3 - "$BIN/tcc-run" "$2" --data "$T/data/train" --val "$T/data/val" --steps "$3" \
    --lr 1e-3 --threads "$THREADS" --seed 1 --log-every "$3" <<'PY'
import resource, subprocess, sys
out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(out + 'cpu %.1f' % (r.ru_utime + r.ru_stime))
PY
)
  end=$(date +%s.%N)
  cpu=$(echo "$out" | sed -n 's/^cpu //p')
  printf '%-10s %5d steps  wall %6.1f s  cpu %6.1f s  %5.0f samples/s  %s  %s\n' "$1" "$3" \
    "$(echo "$end - $start" | bc)" "$cpu" "$(echo "$3 * 16 / ($end - $start)" | bc -l)" \
    "$(echo "$out" | grep -o 'loss [0-9.]* (.* samples of' | tail -1 | sed 's/ (.*//; s/loss/val loss/')" \
    "$(echo "$out" | grep -o 'step [0-9/]* loss [0-9.]*' | tail -1 | sed 's/.* loss/mean train loss/')"
}
echo "== $EPOCHS epochs of $samples sentences, batch 16, $THREADS threads"
run padded "$T/padded.so" $((EPOCHS * per_epoch_padded))
run buckets "$T/buckets.so" $((EPOCHS * per_epoch_buckets))
