"""lm_data.py DIR N T V [SEED] - random token sequences for a language model:
DIR/tokens.npy (N x T int64, uniform in [0, V)) and DIR/y.npy (the next token
of each position; the last wraps to the first). Any Python 3, standard library
only."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npy_io import write_npy  # noqa: E402


def main():
    out, n, t, v = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 1)
    tokens, labels = [], []
    for _ in range(n):
        row = [rng.randrange(v) for _ in range(t)]
        tokens += row
        labels += row[1:] + row[:1]
    os.makedirs(out, exist_ok=True)
    write_npy(os.path.join(out, 'tokens.npy'), '<i8', [n, t], tokens)
    write_npy(os.path.join(out, 'y.npy'), '<i8', [n, t], labels)


if __name__ == '__main__':
    main()
