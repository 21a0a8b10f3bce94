"""Fixtures shared by the package's tests: the parity MLP (test/parity/mlp)
compiled once, its data, and tcc-run's losses on it, the oracle that a
Python training loop must match exactly."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tcc

PARITY = Path(__file__).resolve().parents[2] / "test" / "parity" / "mlp"


@pytest.fixture(scope="session")
def sgd(tmp_path_factory):
    """The parity MLP compiled for SGD with momentum 0.9."""
    out = tmp_path_factory.mktemp("sgd") / "mlp.so"
    return tcc.compile(PARITY / "model.onnx", out, loss="cross_entropy", optimizer="sgd",
                       momentum=0.9, batch=16)


@pytest.fixture(scope="session")
def data():
    return {n: np.load(PARITY / "data" / f"{n}.npy") for n in ("x", "y")}


@pytest.fixture(scope="session")
def tcc_run_losses(sgd, tmp_path_factory):
    """tcc-run's 50 per-step losses on the parity data (--no-shuffle), as
    float32 (its metrics print 9 digits: each float32 exactly)."""
    metrics = tmp_path_factory.mktemp("run") / "metrics.jsonl"
    subprocess.run([tcc._tool("tcc-run"), sgd.path, "--data", str(PARITY / "data"), "--steps",
                    "50", "--lr", "0.05", "--no-shuffle", "--metrics", str(metrics)],
                   check=True, capture_output=True)
    return np.float32([json.loads(line)["loss"] for line in metrics.read_text().splitlines()])
