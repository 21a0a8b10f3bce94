"""gathernd_batch.py - GatherND with batch_dims > 0 against a reference in
plain Python (the standard library only; Debian's python3).

    gathernd_batch.py make DIR    model.onnxtxt, x.npy, i.npy, j.npy in DIR
    gathernd_batch.py check DIR   DIR/out/y.npy and z.npy against the reference

The model: y = GatherND(x, i, batch_dims=2) with x [2, 3, 4, 5] and i
[2, 3, 2, 2] (each tuple picks one element of its x[b0, b1]), and
z = GatherND(x, j, batch_dims=1) with j [2, 4, 1] (rows of x[b0]); the
indices are random, negative ones among them. Gathering copies values, so
the check is exact."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npy_io import read_npy, write_npy  # noqa: E402

X_SHAPE = (2, 3, 4, 5)
I_SHAPE = (2, 3, 2, 2)
J_SHAPE = (2, 4, 1)

MODEL = """<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3, 4, 5] x, int64[2, 3, 2, 2] i, int64[2, 4, 1] j) => (float[2, 3, 2] y, float[2, 4, 4, 5] z) {
  y = GatherND<batch_dims = 2>(x, i)
  z = GatherND<batch_dims = 1>(x, j)
}
"""


def flat(index, shape):
    out = 0
    for i, d in zip(index, shape):
        out = out * d + i
    return out


def reference(x, i, j):
    y = []
    for b0 in range(2):
        for b1 in range(3):
            for t in range(2):
                at = flat((b0, b1, t, 0), I_SHAPE)
                r, c = i[at] % 4, i[at + 1] % 5
                y.append(x[flat((b0, b1, r, c), X_SHAPE)])
    z = []
    for b0 in range(2):
        for t in range(4):
            row = j[flat((b0, t, 0), J_SHAPE)] % 3
            for r in range(4):
                for c in range(5):
                    z.append(x[flat((b0, row, r, c), X_SHAPE)])
    return y, z


def main():
    mode, d = sys.argv[1], sys.argv[2]
    if mode == 'make':
        rng = random.Random(7)
        with open(os.path.join(d, 'model.onnxtxt'), 'w') as f:
            f.write(MODEL)
        write_npy(os.path.join(d, 'x.npy'), '<f4', X_SHAPE,
                  [rng.uniform(-3, 3) for _ in range(2 * 3 * 4 * 5)])
        write_npy(os.path.join(d, 'i.npy'), '<i8', I_SHAPE,
                  [rng.randint(-4, 3) if k % 2 == 0 else rng.randint(-5, 4) for k in range(24)])
        write_npy(os.path.join(d, 'j.npy'), '<i8', J_SHAPE, [rng.randint(-3, 2) for _ in range(8)])
        return 0
    _, x = read_npy(os.path.join(d, 'x.npy'))
    _, i = read_npy(os.path.join(d, 'i.npy'))
    _, j = read_npy(os.path.join(d, 'j.npy'))
    y_ref, z_ref = reference(x, i, j)
    ys, y = read_npy(os.path.join(d, 'out', 'y.npy'))
    zs, z = read_npy(os.path.join(d, 'out', 'z.npy'))
    ok = ys == (2, 3, 2) and zs == (2, 4, 4, 5) and list(y) == y_ref and list(z) == z_ref
    negatives = sum(v < 0 for v in i) + sum(v < 0 for v in j)
    print('gathernd batch_dims: %s (%d + %d values, %d negative indices)'
          % ('exact' if ok else 'MISMATCH', len(y), len(z), negatives))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
