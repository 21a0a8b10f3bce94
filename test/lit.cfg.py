# lit configuration for tcc: every .mlir and .onnxtxt under test/ is a test.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "tcc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".test", ".tcc"]
config.excludes = ["unit", "Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tcc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%tcc_src", config.tcc_src_root))
config.substitutions.append(("%onnx_testdata", config.onnx_testdata_dir))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["tcc-opt", "tcc", "tcc-run", "tcc-two-artifacts", "tcc-weight-copies", "tcc-cuda-selftest"], [config.tcc_tools_dir])

if os.path.isdir(config.onnx_testdata_dir):
    config.available_features.add("onnx-testdata")
# Debian's dataset-fashion-mnist (scripts/setup.sh installs it).
if os.path.isdir("/usr/share/datasets/fashion-mnist"):
    config.available_features.add("fashion-mnist")
# Debian's OpenMP OpenBLAS (scripts/setup.sh installs it), the runtime's
# default BLAS for small batched and weight-gradient matmuls.
if os.path.exists("/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0"):
    config.available_features.add("openblas")
# GNU's OpenMP runtime, which torch loads into the global scope: the runtime
# binds its libraries to libomp anyway (test/e2e/openmp-coexist.test).
if os.path.exists("/usr/lib/x86_64-linux-gnu/libgomp.so.1"):
    config.available_features.add("libgomp")
# MKL from PyPI in /opt/tcc/mkl (scripts/setup.sh installs it): the
# runtime's default BLAS when present (docs/cpu-gemm.md).
if os.path.exists("/opt/tcc/mkl/lib/libmkl_rt.so.3"):
    config.available_features.add("mkl")
# The runtime routes 2-D products to MKL only on Intel CPUs (elsewhere MKL
# runs AVX2 kernels that lose to oneDNN's: runtime/cpu/blas.cpp).
# AVX-512 (avx512f, avx512vl, ...): artifacts compiled with --cpu=znver4
# run here (test/e2e/cpu-target.test).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        info = cpuinfo.read().splitlines()
    if any(line.startswith("vendor_id") and "GenuineIntel" in line for line in info):
        config.available_features.add("intel-cpu")
    flags = next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), [])
    if all(f in flags for f in ("avx512f", "avx512vl", "avx512bw", "avx512dq", "avx512cd")):
        config.available_features.add("avx512")
        # AVX512-BF16 too: the x86-64-v4-bf16 code variant runs here.
        if "avx512_bf16" in flags:
            config.available_features.add("avx512bf16")
except OSError:
    pass

# Open MPI's launcher (scripts/setup.sh installs it): the data-parallel
# tests run W ranks of tcc-run on this machine. As root it needs its consent;
# --oversubscribe: more ranks than the cores are fine for a test; the
# shared-memory transport without single-copy (CMA needs ptrace rights that
# containers lack).
import shutil

if shutil.which("mpirun"):
    config.available_features.add("mpi")
    # Each job with a session directory of its own (e2e/Inputs/mpirun.sh).
    config.substitutions.append(("%mpirun", " ".join([
        os.path.join(config.test_source_root, "e2e", "Inputs", "mpirun.sh"), "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
        "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none",
        "-x", "TCC_POISON_ARENA", "-x", "TCC_CACHE_DIR"])))

# A machine with the NVIDIA driver (libcuda.so.1); the tests here check the
# refusal on machines without one, tcc-cuda-selftest checks a GPU.
import ctypes

try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# The runtime's tests run tcc-run on hand-written fixture artifacts, make
# their tensor files with python3 (standard library only), and, as in every
# test build, poison the arena so code that reads unwritten memory sees NaNs.
import sys

config.substitutions.append(("%fixture_dir", config.tcc_fixture_dir))
config.substitutions.append(("%tcc_lib_dir", os.path.join(config.tcc_obj_root, "lib")))
config.substitutions.append(("%tcc_build_dir", config.tcc_obj_root))
config.substitutions.append(("%python", sys.executable))
config.environment["TCC_POISON_ARENA"] = "1"
# tcc's compile cache: one folder for the test run, in the build tree (never
# the user's ~/.cache); scripts/test.sh empties it first, so a run compiles
# for real, and tests that check the cache use folders of their own.
config.environment["TCC_CACHE_DIR"] = os.path.join(config.tcc_obj_root, "test-cache")

# Numeric integration tests (test/integration): %tcc_lower_to_llvm lowers tcc
# through linalg and bufferization to the LLVM dialect for mlir-runner (with
# every convolution and data gradient as a matmul: ..._gemm_convolutions), and
# %mlir_runner_libs names the runner utilities that print memrefs.
_lower_to_llvm = [
    "--one-shot-bufferize=bufferize-function-boundaries",
    "--buffer-deallocation-pipeline",
    # the clones that deallocation inserts (a function returning its argument)
    "--convert-bufferization-to-memref",
    "--convert-linalg-to-loops",
    "--convert-scf-to-cf",
    # after expand-strided-metadata, which emits affine.apply for offsets
    "--expand-strided-metadata",
    "--lower-affine",
    "--finalize-memref-to-llvm",
    # libm first: precise scalar erf, expm1, log1p, tanh, pow, ...
    "--convert-math-to-libm",
    "--convert-math-to-llvm",
    "--convert-vector-to-llvm",
    "--convert-arith-to-llvm",
    "--convert-index-to-llvm",
    "--convert-cf-to-llvm",
    "--convert-func-to-llvm",
    "--reconcile-unrealized-casts",
]
# The longer name first: lit would replace its prefix.
config.substitutions.append(("%tcc_lower_to_llvm_gemm_convolutions", " ".join(
    ["--tcc-lower-to-linalg=gemm-convolutions=1"] + _lower_to_llvm)))
config.substitutions.append(("%tcc_lower_to_llvm", " ".join(
    ["--tcc-lower-to-linalg"] + _lower_to_llvm)))
_llvm_lib_dir = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
config.substitutions.append(("%mlir_runner_libs", "-shared-libs=" + ",".join(
    os.path.join(_llvm_lib_dir, lib)
    for lib in ["libmlir_runner_utils.so", "libmlir_c_runner_utils.so"])))

# The CUDA toolkit's ptxas checks the PTX that --target=cuda emits (no GPU
# needed); tcc itself needs the toolkit's libdevice and ptxas for artifacts.
_cuda = os.environ.get("TCC_CUDA_PATH") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
_ptxas = os.path.join(_cuda, "bin", "ptxas")
if os.access(_ptxas, os.X_OK) and os.path.isfile(
        os.path.join(_cuda, "nvvm", "libdevice", "libdevice.10.bc")):
    config.available_features.add("cuda-toolkit")
    config.substitutions.append(("%ptxas", _ptxas))

# The model zoo (test/zoo) compares tcc's training with PyTorch's stored
# references using numpy: Debian's python3 with python3-numpy (installed by
# scripts/setup.sh), never PyTorch.
config.substitutions.append(("%zoo_python", "/usr/bin/python3"))
