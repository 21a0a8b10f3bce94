#!/usr/bin/env python3
"""dense_residual.py - a residual MLP block and data for
test/e2e/matmul-epilogue.test (standard library only).

  dense_residual.py model OUT.onnxtxt   x [B, 4, 8] -> Reshape [4B, 8] ->
      Gemm (w1, b1) -> Relu -> Reshape [B, 4, 16] -> MatMul (w2) -> Add (b2)
      -> Add (x) -> MatMul (w3) -> Add (b3): out [B, 4, 8]; seeded random
      weights and biases (never zero).
  dense_residual.py data DIR N SEED     DIR/x.npy and DIR/y.npy (the MSE
      target), N x 4 x 8 float32, uniform in [-1, 1).
  dense_residual.py same A.jsonl B.jsonl RTOL   every step's loss of two
      training runs agrees to RTOL (relative); prints 'SAME: N losses ...'.
"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npy_io import write_npy  # noqa: E402

D, H, T = 8, 16, 4


def fmt(values):
    return '{' + ', '.join('%.6f' % v for v in values) + '}'


def model(path, seed=1):
    rng = random.Random(seed)

    def uniform(n, scale):
        return [rng.uniform(-scale, scale) for _ in range(n)]

    lines = [
        '<ir_version: 8, opset_import: ["" : 17]>',
        'dense_residual (float[B, %d, %d] x) => (float[B, %d, %d] out)' % (T, D, T, D),
        '<',
        '  float[%d, %d] w1 = %s,' % (D, H, fmt(uniform(D * H, 0.5))),
        '  float[%d] b1 = %s,' % (H, fmt(uniform(H, 0.5))),
        '  float[%d, %d] w2 = %s,' % (H, D, fmt(uniform(H * D, 0.3))),
        '  float[%d] b2 = %s,' % (D, fmt(uniform(D, 0.5))),
        '  float[%d, %d] w3 = %s,' % (D, D, fmt(uniform(D * D, 0.3))),
        '  float[%d] b3 = %s,' % (D, fmt(uniform(D, 0.5))),
        '  int64[2] rows = {-1, %d},' % D,
        '  int64[3] tokens = {-1, %d, %d}' % (T, H),
        '>',
        '{',
        '  x2 = Reshape(x, rows)',
        '  h = Gemm(x2, w1, b1)',
        '  r = Relu(h)',
        '  r3 = Reshape(r, tokens)',
        '  m = MatMul(r3, w2)',
        '  a = Add(m, b2)',
        '  s = Add(x, a)',
        '  o = MatMul(s, w3)',
        '  out = Add(o, b3)',
        '}',
    ]
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


def data(directory, n, seed):
    rng = random.Random(seed)
    os.makedirs(directory, exist_ok=True)
    for name in ('x', 'y'):
        write_npy(os.path.join(directory, name + '.npy'), '<f4', [n, T, D],
                  [rng.uniform(-1, 1) for _ in range(n * T * D)])


def same(a, b, rtol):
    la = [json.loads(line)['loss'] for line in open(a)]
    lb = [json.loads(line)['loss'] for line in open(b)]
    if len(la) != len(lb) or not la:
        print('MISMATCH: %d and %d steps' % (len(la), len(lb)))
        return 1
    worst = 0.0
    for step, (x, y) in enumerate(zip(la, lb), 1):
        err = abs(x - y) / max(abs(y), 1e-30)
        worst = max(worst, err)
        if err > rtol:
            print('MISMATCH at step %d: %r vs %r' % (step, x, y))
            return 1
    print('SAME: %d losses within %g (worst %.1e)' % (len(la), rtol, worst))
    return 0


if __name__ == '__main__':
    if sys.argv[1] == 'model':
        model(sys.argv[2])
    elif sys.argv[1] == 'data':
        data(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1] == 'same':
        sys.exit(same(sys.argv[2], sys.argv[3], float(sys.argv[4])))
    else:
        sys.exit('usage: see the docstring')
