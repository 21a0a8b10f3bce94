"""image_data.py DIR N FEATURES CLASSES [SEED] - random rows for a classifier:
DIR/x.npy (N x FEATURES float32, uniform in [-1, 1)) and DIR/y.npy (N int64
labels in [0, CLASSES)). Any Python 3, standard library only."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npy_io import write_npy  # noqa: E402


def main():
    out, n, f, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 1)
    os.makedirs(out, exist_ok=True)
    write_npy(os.path.join(out, 'x.npy'), '<f4', [n, f], [rng.uniform(-1, 1) for _ in range(n * f)])
    write_npy(os.path.join(out, 'y.npy'), '<i8', [n], [rng.randrange(c) for _ in range(n)])


if __name__ == '__main__':
    main()
