"""tcc beside another OpenMP runtime in one process (runtime/cpu/openmp_binding.h).

torch (and anything that links libgomp) loads GNU's OpenMP runtime into the
global scope; tcc's runtime binds its own libraries to its libomp anyway.
Each case trains the parity MLP at 2 threads in a fresh process (what is
loaded stays loaded: train_after.py) and must take exactly tcc-run's steps:
equal float32 losses, as in test_tcc.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tcc

HERE = Path(__file__).resolve().parent
PARITY = HERE.parents[1] / "test" / "parity" / "mlp"
WARNING = "tcc: GOMP_parallel resolves to "


def train_after(first, artifact, python=sys.executable, tcc_path=None):
    """Losses and stderr of train_after.py FIRST in a fresh process."""
    cmd = [python, str(HERE / "train_after.py"), first, artifact.path, str(PARITY / "data")]
    if tcc_path:
        cmd.append(tcc_path)
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return np.float32(json.loads(run.stdout)), run.stderr


def test_libgomp_loaded_first(sgd, tcc_run_losses):
    """libgomp global before `import tcc`, exactly as torch loads it: no
    refusal, one warning, tcc-run's losses."""
    losses, stderr = train_after("libgomp", sgd)
    np.testing.assert_array_equal(losses, tcc_run_losses)
    assert stderr.count(WARNING) == 1, stderr


@pytest.mark.skipif(not os.path.exists(
    "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0"),
    reason="Debian's OpenMP OpenBLAS (libopenblas0-openmp) is not installed")
def test_openblas_loaded_first(sgd, tcc_run_losses):
    """An OpenBLAS already loaded and bound to libgomp (libgomp not global):
    tcc loads its own copy, silently."""
    losses, stderr = train_after("openblas", sgd)
    np.testing.assert_array_equal(losses, tcc_run_losses)
    assert WARNING not in stderr, stderr


SYSTEM_PYTHON = "/usr/bin/python3"


def system_torch_missing():
    """Why Debian's torch (python3-torch) cannot run beside this tcc package
    in /usr/bin/python3, or "" when it can (the package's extension is built
    for this Python's version)."""
    if not os.path.exists(SYSTEM_PYTHON):
        return SYSTEM_PYTHON + " does not exist"
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import sys, torch; print(sys.version_info[:2])"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return "torch is not importable by %s (Debian: apt-get install python3-torch)" % SYSTEM_PYTHON
    if probe.stdout.strip() != str(sys.version_info[:2]):
        return "%s is Python %s, tcc's extension was built for %s" % (
            SYSTEM_PYTHON, probe.stdout.strip(), sys.version_info[:2])
    return ""


TORCH_MISSING = system_torch_missing()


@pytest.mark.skipif(bool(TORCH_MISSING), reason=TORCH_MISSING or "torch is present")
@pytest.mark.parametrize("first", ["torch", "tcc-torch"])
def test_with_torch(first, sgd, tcc_run_losses):
    """Debian's torch, imported before tcc (its libgomp global, its oneDNN
    bound to it) or after tcc's first session, and used between the steps:
    torch's results stay right and tcc's losses are tcc-run's."""
    site = str(Path(tcc.__file__).resolve().parents[1])
    losses, stderr = train_after(first, sgd, python=SYSTEM_PYTHON, tcc_path=site)
    np.testing.assert_array_equal(losses, tcc_run_losses)
    assert stderr.count(WARNING) == (1 if first == "torch" else 0), stderr
