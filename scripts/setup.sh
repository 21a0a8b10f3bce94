#!/usr/bin/env bash
# Installs every system dependency of tcc (idempotent) and builds it.
# Run as root on Debian 12. Usage: scripts/setup.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build ccache git python3
  clang-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools libomp-22-dev
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libdnnl-dev libgtest-dev dataset-fashion-mnist python3-numpy
  # test/frontend/dsl/export.test: onnx's checker on the models tcc export writes
  python3-onnx
  # Boost.CRC (header-only): the CRC-32C of TensorBoard's event files
  libboost-dev
  # Boost.Context: the fibers of the emulated CUDA device (TCC_CUDA_DEVICE=emulated)
  libboost-context-dev
  # the SDK's pkg-config test; venvs and headers for the Python package
  # (scripts/python-tests.sh pip-installs scikit-build-core, nanobind, pytest)
  pkg-config python3-venv python3-dev
  # data-parallel training on CPUs (mpirun; the runtime dlopens libmpi.so.40)
  openmpi-bin libopenmpi-dev
  # the compiler's allocator (tools/tcc/CMakeLists.txt): 12-15% less compile time
  libjemalloc-dev
  # small and weight-gradient matmuls on BLAS (docs/cpu-gemm.md; the runtime
  # dlopens it): the OpenMP build, which runs on the process's one libomp pool
  libopenblas0-openmp
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  # Installing OpenBLAS makes it the system's libblas.so.3 / liblapack.so.3;
  # keep the previous choice, so that nothing else on the machine changes
  # (the runtime loads OpenBLAS by its own path).
  declare -A alternatives
  for alt in libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu; do
    alternatives[$alt]=$(readlink "/etc/alternatives/$alt" 2>/dev/null || true)
  done
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
  for alt in "${!alternatives[@]}"; do
    if [[ -n "${alternatives[$alt]}" ]]; then
      update-alternatives --quiet --set "$alt" "${alternatives[$alt]}"
    fi
  done
else
  echo "setup: all system packages present"
fi

# Intel's MKL from PyPI (the mkl wheel, ~230 MB, in a venv of its own): the
# runtime's default BLAS for 2-D matmuls, loaded with dlopen from
# /opt/tcc/mkl/lib (docs/cpu-gemm.md). Optional: without it matmuls run on
# OpenBLAS and oneDNN, so a failed download only warns.
MKL_VERSION=2026.2.1
if [[ ! -e /opt/tcc/mkl/lib/libmkl_rt.so.3 ]]; then
  echo "setup: installing MKL $MKL_VERSION from PyPI into /opt/tcc/mkl"
  if ! { /usr/bin/python3 -m venv /opt/tcc/mkl &&
         /opt/tcc/mkl/bin/pip install -q --no-deps "mkl==$MKL_VERSION"; }; then
    echo "setup: warning: MKL could not be installed; matmuls will run on OpenBLAS and oneDNN" >&2
  fi
else
  echo "setup: MKL present (/opt/tcc/mkl)"
fi

[[ "${1:-}" == "--no-build" ]] && exit 0
exec scripts/build.sh
