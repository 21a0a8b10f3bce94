#!/usr/bin/env bash
# bench/gpu/prepare.sh - builds bench/gpu/bundle/, everything the GPU run
# (bench/gpu/run.sh) needs beyond the repository's tracked files: tcc-run,
# libtcc_runtime and libomp, the tcc artifacts, the CPU reference curves, the
# throughput models' data and manifest.json. Runs on the build machine.
#
# Python: Debian's /usr/bin/python3 with python3-torch 1.13 (set PYTHON to
# change it), the interpreter that scripts/parity/make_references.py uses, for
# the ONNX exports of the throughput models (bench/gpu/export_models.py) and
# the manifest (bench/gpu/gpu_bench.py); nothing is downloaded.
#
# Steps:
#  1. bin/tcc-run, lib/libtcc_runtime.so.0, lib/libomp.so.5 (and
#     bin/tcc-cuda-selftest when the build has it) from --build-dir;
#  2. per parity run of test/parity/parity-*.test (mlp, cnn_bn, gpt x sgd,
#     adamw; their flags are read from the tests' RUN lines): the CPU
#     artifact's 50-step curve as ref/<run>.cpu.jsonl, and the artifact for
#     --target as models/<run>.so (+ .safetensors, the initial weights);
#  3. the throughput models (gpt2s, resnet18): exported to ONNX under --work
#     (not in the bundle), compiled for --target into models/<name>.so, their
#     data into data/<name>/; their .safetensors stay behind unless small
#     (tcc-run --init=SEED initializes the parameters on the GPU machine);
#  4. manifest.json: every run's command line, batch, FLOPs per step and
#     PyTorch definition.
# When tcc cannot compile for --target (the CUDA backend is not there yet),
# it says so and builds everything else.
#
# Usage: bench/gpu/prepare.sh [--target=cuda:sm_90|cpu] [--build-dir DIR]
#                             [--small] [--layers N] [--work DIR]
#   --target=T      the target of the bundle's artifacts (default cuda:sm_90);
#                   --target=cpu gives a bundle for run.sh --cpu-dry-run
#   --build-dir DIR tcc's build directory (default /work/main/build)
#   --small         tiny throughput models (for the CPU dry run)
#   --layers N      gpt2s with N layers instead of 12
#   --work DIR      where the ONNX exports and CPU artifacts go
#                   (default bench/gpu/work, ignored by git)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

TARGET=cuda:sm_90
BUILD=/work/main/build
SMALL=0
LAYERS=
WORK=bench/gpu/work
COMPILE_TIMEOUT=${COMPILE_TIMEOUT:-900}  # gpt2s falls back to 6 layers beyond this
PY=${PYTHON:-/usr/bin/python3}
BUNDLE=bench/gpu/bundle
# Debian's torch calls the libblas.so.3 alternative, the reference BLAS on a
# bare system (3 GFLOP/s here): the ONNX export traces a gpt2s forward pass
# (~2.3 TFLOP), so it gets OpenBLAS (bench/train_setup.sh installs it), as
# bench/train.sh does.
OPENBLAS_DIR=/usr/lib/x86_64-linux-gnu/openblas-openmp
PY_ENV=()
[[ -e $OPENBLAS_DIR/libblas.so.3 ]] && PY_ENV=(env "LD_LIBRARY_PATH=$OPENBLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")

while [[ $# -gt 0 ]]; do
  case "$1" in
    --target=*) TARGET=${1#--target=} ;;
    --target) TARGET=$2; shift ;;
    --build-dir=*) BUILD=${1#--build-dir=} ;;
    --build-dir) BUILD=$2; shift ;;
    --small) SMALL=1 ;;
    --layers=*) LAYERS=${1#--layers=} ;;
    --layers) LAYERS=$2; shift ;;
    --work=*) WORK=${1#--work=} ;;
    --work) WORK=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "prepare.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

say() { echo "prepare: $*"; }
TCC=$BUILD/bin/tcc
TCC_RUN=$BUILD/bin/tcc-run
for f in "$TCC" "$TCC_RUN" "$BUILD/lib/libtcc_runtime.so.0"; do
  [[ -e $f ]] || { echo "prepare.sh: $f not found (--build-dir?)" >&2; exit 2; }
done
LIBOMP=$(ldd "$BUILD/lib/libtcc_runtime.so.0" | awk '/libomp\.so\.5/ {print $3}')
[[ -n $LIBOMP ]] || LIBOMP=/usr/lib/llvm-22/lib/libomp.so.5

# --- 1. runtime --------------------------------------------------------------
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE"/{bin,lib,models,ref,data} "$WORK/cpu"
cp "$TCC_RUN" "$BUNDLE/bin/"
cp -L "$BUILD/lib/libtcc_runtime.so.0" "$LIBOMP" "$BUNDLE/lib/"
if [[ -x $BUILD/bin/tcc-cuda-selftest ]]; then
  cp "$BUILD/bin/tcc-cuda-selftest" "$BUNDLE/bin/"
else
  say "no $BUILD/bin/tcc-cuda-selftest in this build: the GPU run skips the self-test"
fi

# --- can tcc compile for the target? -------------------------------------------
CUDA_OK=0
if [[ $TARGET == cpu ]]; then
  say "target cpu: a bundle for bash bench/gpu/run.sh --cpu-dry-run"
elif err=$("$TCC" test/parity/mlp/model.onnx --batch=16 --loss=cross_entropy --target="$TARGET" \
             -o "$WORK/probe.so" 2>&1); then
  CUDA_OK=1
else
  cat <<EOF
prepare: ***********************************************************************
prepare: tcc cannot compile for --target=$TARGET yet:
prepare:   $err
prepare: The bundle gets everything else (runtime, CPU reference curves, data,
prepare: manifest) but NO models/*.so: run.sh will report the tcc runs as missing.
prepare: Rerun this script once the CUDA backend is in the build.
prepare: ***********************************************************************
EOF
fi
can_compile() { [[ $TARGET == cpu || $CUDA_OK == 1 ]]; }

# --- 2. parity: CPU reference curves and the target's artifacts ---------------------
while IFS=$'\t' read -r name model opt cflags rflags; do
  # shellcheck disable=SC2086  # the flag lists split on spaces
  "$TCC" "test/parity/$model/model.onnx" $cflags -o "$WORK/cpu/$name.so"
  # shellcheck disable=SC2086
  "$TCC_RUN" "$WORK/cpu/$name.so" $rflags --metrics "$BUNDLE/ref/$name.cpu.jsonl" > "$WORK/cpu/$name.log"
  if ! "$PY" test/parity/check_parity.py "$BUNDLE/ref/$name.cpu.jsonl" "test/parity/$model/$opt.json" \
       > "$WORK/cpu/$name.parity"; then
    say "WARNING: the CPU curve of $name is off PyTorch's stored curve: $(cat "$WORK/cpu/$name.parity")"
  fi
  if [[ $TARGET == cpu ]]; then
    cp "$WORK/cpu/$name.so" "$WORK/cpu/$name.safetensors" "$BUNDLE/models/"
  elif can_compile; then
    # shellcheck disable=SC2086
    "$TCC" "test/parity/$model/model.onnx" $cflags --target="$TARGET" -o "$BUNDLE/models/$name.so"
  fi
  say "parity $name: $(cat "$WORK/cpu/$name.parity")"
done < <("$PY" bench/gpu/gpu_bench.py parity-configs)

# --- 3. throughput models ------------------------------------------------------------
MODELS=$WORK/models
[[ $SMALL == 1 ]] && MODELS=$WORK/models-small
export_models() {
  local extra=()
  [[ $SMALL == 1 ]] && extra+=(--small)
  [[ -n $1 ]] && extra+=(--layers "$1")
  "${PY_ENV[@]}" "$PY" bench/gpu/export_models.py "$MODELS" "${extra[@]}"
}
export_models "$LAYERS"

# compile NAME OPTIMIZER: tcc for the target into $WORK/$NAME/, timed; prints
# the seconds, or '-' when it failed.
compile() {
  local name=$1 opt=$2 flags=(--loss=cross_entropy "--optimizer=$2") t0 t1
  [[ $opt == sgd ]] && flags+=(--momentum=0.9)
  rm -rf "${WORK:?}/$name"
  mkdir -p "$WORK/$name"
  t0=$(date +%s.%N)
  if /usr/bin/time -f '%M' -o "$WORK/$name/maxrss_kb" timeout "$COMPILE_TIMEOUT" \
       "$TCC" "$MODELS/$name/model.onnx" "${flags[@]}" --target="$TARGET" -o "$WORK/$name/$name.so" \
       > "$WORK/$name/compile.log" 2>&1; then
    t1=$(date +%s.%N)
    printf "%.1f\n" "$(echo "$t1 - $t0" | bc)"
  else
    echo -
  fi
}

TPUT=()
for spec in gpt2s:adamw:3e-4 resnet18:sgd:0.01; do
  IFS=: read -r name opt lr <<< "$spec"
  mkdir -p "$BUNDLE/data/$name"
  cp "$MODELS/$name/data/"*.npy "$BUNDLE/data/$name/"
  secs=-
  if can_compile; then
    say "compiling $name for $TARGET ($(du -h "$MODELS/$name/model.onnx" | cut -f1) ONNX) ..."
    secs=$(compile "$name" "$opt")
    if [[ $secs == - && $name == gpt2s && -z $LAYERS && $SMALL == 0 ]]; then
      say "gpt2s with 12 layers did not compile within ${COMPILE_TIMEOUT}s ($(tail -1 "$WORK/$name/compile.log")); falling back to 6 layers"
      export_models 6
      secs=$(compile "$name" "$opt")
    fi
    if [[ $secs == - ]]; then
      say "FAILED to compile $name: $(tail -3 "$WORK/$name/compile.log")"
    else
      say "compiled $name in ${secs}s (max RSS $(( $(cat "$WORK/$name/maxrss_kb") / 1024 )) MiB)"
      cp "$WORK/$name/$name.so" "$BUNDLE/models/"
    fi
  fi
  # Small weights travel; big ones are initialized there (tcc-run --init).
  shipped=0
  if [[ $secs != - && -e $WORK/$name/$name.safetensors && $(stat -c %s "$WORK/$name/$name.safetensors") -lt $((16 << 20)) ]]; then
    cp "$WORK/$name/$name.safetensors" "$BUNDLE/models/"
    shipped=1
  fi
  TPUT+=("$name:$opt:$lr:$secs:$shipped")
done

# --- 4. manifest --------------------------------------------------------------------
"$PY" bench/gpu/gpu_bench.py manifest "$BUNDLE" "$MODELS" "$TARGET" "$CUDA_OK" "${TPUT[@]}"

size=$(du -sm "$BUNDLE" | cut -f1)
say "bundle: $BUNDLE, ${size} MiB ($(du -sh "$BUNDLE"/* | tr '\t' ' ' | paste -sd, -))"
if (( size > 40 )); then
  say "WARNING: the bundle is over 40 MiB; the carried paths may hold 64 MiB in all"
fi
if [[ $TARGET != cpu && $CUDA_OK == 0 ]]; then
  say "done WITHOUT CUDA artifacts (tcc --target=$TARGET failed, see above)"
else
  say "done; on the GPU machine: bash bench/gpu/run.sh (carry $BUNDLE)"
fi
