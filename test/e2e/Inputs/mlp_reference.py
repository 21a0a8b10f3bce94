#!/usr/bin/env python3
"""Oracle for test/e2e/mlp-infer.test: evaluates examples/mlp.onnxtxt
(Gemm -> Relu -> Gemm) in float64 with plain Python, straight from the
initializer values in the text model, and compares with tcc's output .npy.
Standard library only. Usage: mlp_reference.py MODEL.onnxtxt INPUT.npy OUTPUT.npy"""
import re
import sys

from npy_io import read_npy




def main():
    text = open(sys.argv[1]).read()

    def init(name):
        m = re.search(name + r"\s*=\s*\{([^}]*)\}", text)
        return [float(v) for v in m.group(1).split(',')]

    w1, b1, w2, b2 = (init(n) for n in ('fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias'))
    (batch, features), x = read_npy(sys.argv[2])
    oshape, got = read_npy(sys.argv[3])
    hidden, classes = len(b1), len(b2)
    assert oshape == (batch, classes), oshape
    worst = 0.0
    for n in range(batch):
        h = [max(0.0, sum(x[n * features + k] * w1[k * hidden + j] for k in range(features)) + b1[j])
             for j in range(hidden)]
        for c in range(classes):
            want = sum(h[j] * w2[j * classes + c] for j in range(hidden)) + b2[c]
            err = abs(got[n * classes + c] - want)
            if err > 1e-5 + 1e-5 * abs(want):
                print('MISMATCH at [%d,%d]: got %r, want %r' % (n, c, got[n * classes + c], want))
                return 1
            worst = max(worst, err)
    print('OK: %d x %d logits within 1e-5 (max abs error %.2e)' % (batch, classes, worst))
    return 0


sys.exit(main())
