#!/usr/bin/env python3
"""Oracle for test/e2e/vectorized-elementwise.test: evaluates
Inputs/vector_ops.onnxtxt's outputs in float64 with Python's math module and
compares tcc's .npy outputs (|got - want| <= 1e-6 + 1e-6 |want|).
Standard library only. Usage: vector_ops_reference.py X.npy B.npy OUTDIR"""
import math
import os
import sys

from npy_io import read_npy




def main(argv):
    (rows, cols), x = read_npy(argv[1])
    _, b = read_npy(argv[2])
    want = {
        'e': [math.exp(v) for v in x],
        't': [math.tanh(v) for v in x],
        'f': [math.erf(v) for v in x],
        's': [1 / (1 + math.exp(-v)) for v in x],
        'r': [max(0.0, v + b[i % cols]) for i, v in enumerate(x)],
        'l': [math.log(abs(v) + 1) for v in x],
    }
    bad = 0
    for name, values in want.items():
        _, got = read_npy(os.path.join(argv[3], name + '.npy'))
        worst = max(abs(g - w) / (1e-6 + 1e-6 * abs(w)) for g, w in zip(got, values))
        if worst > 1:
            print('MISMATCH in %s: error %.2f x the tolerance' % (name, worst))
            bad += 1
    if not bad:
        print('OK: %d outputs of %d x %d values within 1e-6' % (len(want), rows, cols))
    return 1 if bad else 0


sys.exit(main(sys.argv))
