#!/usr/bin/env python3
"""Oracle for test/e2e/partial-batch.test: the float64 loss of
examples/mlp.onnxtxt (Gemm -> Relu -> Gemm, evaluated from the initializer
values in the text model) over every sample of X.npy, against what tcc
computed on a partial batch. Standard library only.

Usage: partial_batch_reference.py ce|mse MODEL.onnxtxt X.npy Y.npy LOSS
  LOSS: a .npy holding eval_step's 0-d loss, a metrics .jsonl whose last
  line's "val_loss" is the validation loss, or tcc-run evaluate's --metrics
  .json with its "loss"."""
import json
import math
import re
import sys

from npy_io import read_npy


def logits(text, x, batch, features):
    def init(name):
        m = re.search(name + r"\s*=\s*\{([^}]*)\}", text)
        return [float(v) for v in m.group(1).split(',')]

    w1, b1, w2, b2 = (init(n) for n in ('fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias'))
    hidden, classes = len(b1), len(b2)
    out = []
    for n in range(batch):
        h = [max(0.0, sum(x[n * features + k] * w1[k * hidden + j] for k in range(features)) + b1[j])
             for j in range(hidden)]
        out.append([sum(h[j] * w2[j * classes + c] for j in range(hidden)) + b2[c]
                    for c in range(classes)])
    return out


def main():
    kind, model, xpath, ypath, losspath = sys.argv[1:6]
    (batch, features), x = read_npy(xpath)
    yshape, y = read_npy(ypath)
    z = logits(open(model).read(), x, batch, features)
    if kind == 'ce':
        total = 0.0
        for n, row in enumerate(z):
            top = max(row)
            lse = top + math.log(sum(math.exp(v - top) for v in row))
            total += lse - row[int(y[n])]
        want = total / batch
    else:
        classes = len(z[0])
        want = sum((z[n][c] - y[n * classes + c]) ** 2
                   for n in range(batch) for c in range(classes)) / (batch * classes)
    if losspath.endswith('.json'):
        got = json.load(open(losspath))['loss']
    elif losspath.endswith('.jsonl'):
        got = json.loads(open(losspath).read().splitlines()[-1])['val_loss']
    else:
        _, values = read_npy(losspath)
        got = values[0]
    err = abs(got - want)
    if err > 1e-5 * abs(want) + 1e-6:
        print('MISMATCH: %s loss over %d samples: got %r, want %r' % (kind, batch, got, want))
        return 1
    print('OK: %s loss over %d samples within 1e-5 (got %.7g, want %.7g)' % (kind, batch, got, want))
    return 0


sys.exit(main())
