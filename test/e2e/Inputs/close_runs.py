#!/usr/bin/env python3
"""close_runs.py A.jsonl B.jsonl A.safetensors B.safetensors TOL - prints
CLOSE when two training runs agree: every step's loss and grad_norm within TOL
relative, and every f32 tensor of the saved files within TOL of the largest
magnitude of that tensor in B; else the first difference. Standard library
only (any Python 3)."""
import array
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import same_tensors  # noqa: E402


def metrics(path):
    return [(r['loss'], r['grad_norm']) for r in map(json.loads, open(path)) if 'loss' in r]


def tensors(path):
    """{name: array('f')} of the F32 tensors of a safetensors file."""
    out = {}
    for name, (dtype, _, data) in same_tensors.tensors(path).items():
        if dtype == 'F32':
            out[name] = array.array('f')
            out[name].frombytes(data)
    return out


def main():
    tol = float(sys.argv[5])
    ma, mb = metrics(sys.argv[1]), metrics(sys.argv[2])
    if len(ma) != len(mb) or not ma:
        print('DIFFERENT: %d and %d steps' % (len(ma), len(mb)))
        return
    worst = 0.0
    for step, (a, b) in enumerate(zip(ma, mb), 1):
        for what, x, y in (('loss', a[0], b[0]), ('grad_norm', a[1], b[1])):
            err = abs(x - y) / max(abs(y), 1e-30)
            worst = max(worst, err)
            if not err <= tol:
                print('DIFFERENT: step %d %s %.9g vs %.9g' % (step, what, x, y))
                return
    ta, tb = tensors(sys.argv[3]), tensors(sys.argv[4])
    if sorted(ta) != sorted(tb):
        print('DIFFERENT: tensors', sorted(set(ta) ^ set(tb)))
        return
    for name in sorted(ta):
        scale = max(max(abs(v) for v in tb[name]), 1e-30)
        err = max(abs(x - y) for x, y in zip(ta[name], tb[name])) / scale
        worst = max(worst, err)
        if not err <= tol:
            print('DIFFERENT: %s (%.2e)' % (name, err))
            return
    print('CLOSE: %d steps, %d tensors, worst %.1e' % (len(ma), len(ta), worst))


if __name__ == '__main__':
    main()
