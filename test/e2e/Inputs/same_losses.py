#!/usr/bin/env python3
"""same_losses.py A.jsonl B.jsonl - prints SAME LOSSES when two runs' metrics
hold the same losses, bit for bit, at the same steps (their gradient norms may
differ in the last bits: a sum in another order), else the first difference.
Any Python 3, standard library only."""
import json
import sys


def losses(path):
    return [(r['step'], r['loss']) for r in map(json.loads, open(path)) if 'loss' in r]


def main():
    a, b = losses(sys.argv[1]), losses(sys.argv[2])
    if not a or len(a) != len(b):
        print('DIFFERENT: %d and %d steps' % (len(a), len(b)))
        return 1
    for (step, x), (other, y) in zip(a, b):
        if step != other or x != y:
            print('DIFFERENT at step %d: loss %r against %r' % (step, x, y))
            return 1
    print('SAME LOSSES: %d steps' % len(a))
    return 0


if __name__ == '__main__':
    sys.exit(main())
