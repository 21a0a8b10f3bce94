"""Trains the parity MLP in a fresh process after loading FIRST, and prints
the 50 losses as JSON on stdout.

    python train_after.py FIRST ARTIFACT DATA_DIR [TCC_PATH]

FIRST says what the process holds before tcc creates a session:
  libgomp  GNU's OpenMP runtime in the global scope, as torch loads it;
  openblas Debian's OpenMP OpenBLAS, bound to libgomp (as numpy's can be);
  torch    torch itself, imported first;
  tcc-torch  torch imported after tcc's first session, then used.
With torch, torch's own parallel code runs between the steps, at the thread
count torch set (1; tcc's session runs 2).
TCC_PATH, when given, is appended to sys.path to find the tcc package (an
interpreter with Debian's torch and numpy, tcc from the test's venv)."""

import ctypes
import json
import sys

first, artifact, data_dir = sys.argv[1:4]
if len(sys.argv) > 4:
    sys.path.append(sys.argv[4])

if first == "libgomp":
    ctypes.CDLL("libgomp.so.1", mode=ctypes.RTLD_GLOBAL)
elif first == "openblas":
    ctypes.CDLL("/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0")
elif first == "torch":
    import torch

import numpy as np  # noqa: E402

import tcc  # noqa: E402

art = tcc.load(artifact)
x, y = (np.load(f"{data_dir}/{n}.npy") for n in ("x", "y"))
session = art.session(threads=2)
if first == "tcc-torch":
    import torch
if first in ("torch", "tcc-torch"):
    torch.set_num_threads(1)
batch = art.inputs("train_step")[0].shape[0]
per_epoch = len(y) // batch
losses = []
for step in range(50):
    rows = slice(step % per_epoch * batch, (step % per_epoch + 1) * batch)
    out = session.run("train_step", x=x[rows], y=y[rows], lr=np.float32(0.05))
    losses.append(float(out["loss"]))
    if first in ("torch", "tcc-torch"):
        # torch's own parallel code (at::parallel_for on OpenMP), between
        # tcc's steps (integers, so exact), with its own thread count.
        if torch.get_num_threads() != 1:
            sys.exit("torch runs %d threads after step %d, not its 1"
                     % (torch.get_num_threads(), step))
        t = torch.arange(1 << 20, dtype=torch.int64)
        if not np.array_equal(((t * 3 + step) % 7).numpy(), (t.numpy() * 3 + step) % 7):
            sys.exit("torch's elementwise result is wrong after step %d" % step)
print(json.dumps(losses))
