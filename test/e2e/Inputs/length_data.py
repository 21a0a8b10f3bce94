"""length_data.py DIR T V LENGTHS... [--seed S] - variable-length token
sequences padded to T for a language model: one sample per LENGTHS entry
(written 'L' or 'LxN' for N samples of length L, in the order given), tokens
uniform in [1, V) up to the length and 0 after, DIR/y.npy the next token of
each position up to the sample's last and the ignored label -100 after (so
the trainer sees length L - 1: the last token is never a target). Any
Python 3, standard library only."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npy_io import write_npy  # noqa: E402


def main(argv):
    seed = 1
    if '--seed' in argv:
        at = argv.index('--seed')
        seed = int(argv[at + 1])
        del argv[at:at + 2]
    out, t, v = argv[1], int(argv[2]), int(argv[3])
    lengths = []
    for spec in argv[4:]:
        length, _, count = spec.partition('x')
        lengths += [int(length)] * int(count or 1)
    rng = random.Random(seed)
    tokens, labels = [], []
    for length in lengths:
        assert 2 <= length <= t, length
        row = [rng.randrange(1, v) for _ in range(length)] + [0] * (t - length)
        tokens += row
        labels += row[1:length] + [-100] * (t - length + 1)
    os.makedirs(out, exist_ok=True)
    write_npy(os.path.join(out, 'tokens.npy'), '<i8', [len(lengths), t], tokens)
    write_npy(os.path.join(out, 'y.npy'), '<i8', [len(lengths), t], labels)


if __name__ == '__main__':
    main(sys.argv)
