#!/usr/bin/env python3
"""Data and oracle for test/e2e/train-sgd.test. Standard library only.

  train_reference.py dropout-model SRC.onnxtxt DST.onnxtxt RATIO
      writes the MLP with a Dropout(RATIO) between the Relu and the second Gemm.
  train_reference.py data DIR N SEED [K]
      writes DIR/features.npy (N x 4, float32: three Gaussian blobs) and
      DIR/y.npy (N, int64 class labels 0..2; every K-th -100), deterministic
      from SEED.
  train_reference.py check MODEL.onnxtxt DIR METRICS.jsonl BATCH LR STEPS [OPTIMIZER]
      trains examples/mlp.onnxtxt (Gemm -> Relu -> Gemm) in float64 with
      OPTIMIZER (default sgd; 'sgd:momentum=0.9,dampening=0.1,nesterov=0,
      weight_decay=0.01', 'adam:...', 'adamw:...' with beta1, beta2, eps,
      weight_decay, and clip=NORM for global-norm clipping; PyTorch's update
      formulas and defaults, written out here from torch.optim's documentation;
      run options after the optimizer's: smooth=EPS (label smoothing),
      ignore=N (labels N do not count), accum=K (K micro-batches of BATCH per
      step, gradients and losses averaged), freeze=GLOB (parameters not
      trained), dropout=P with seed=S and stream=I (a Dropout after the Relu,
      masks from Philox4x32-10 as tcc.dropout documents);
      each step's grad_norm metric is checked too) and mean cross-entropy on the batches
      tcc-run --no-shuffle
      takes (batch i = samples [i*B, (i+1)*B), wrapping after the last full
      batch), from the initializers in the text model, and compares every
      step's loss with tcc's metrics (relative 1e-4: float32 against float64
      over the run). Prints 'OK: STEPS losses ...' or the first mismatch.
"""
import fnmatch
import json
import math
import random
import re
import sys

from npy_io import read_npy, write_npy

# float32 against float64 over a few dozen steps; the parity bar is 1e-3.
TOLERANCE = 1e-4






M32 = 0xffffffff


def philox(counter, key):
    """Philox4x32-10 (Salmon et al., SC'11): the four output words."""
    c, k = list(counter), list(key)
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & M32, (p0 >> 32) ^ c[3] ^ k[1], p0 & M32]
    return c


def philox_first_word(counter, key):
    return philox(counter, key)[0]


# The known-answer tests of Random123 for Philox4x32-10.
assert philox_first_word([0, 0, 0, 0], [0, 0]) == 0x6627e8d5
assert philox_first_word([M32] * 4, [M32] * 2) == 0x408f276d
assert philox_first_word([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                         [0xa4093822, 0x299f31d0]) == 0xd16cfe09


def dropout_keep(ratio, seed, counter, stream, index):
    """Whether tcc.dropout keeps element INDEX (row-major) of the step with
    rng = [seed, counter]."""
    word = philox_first_word([index & M32, stream, counter & M32, (counter >> 32) & M32],
                             [seed & M32, (seed >> 32) & M32])
    return (word >> 8) >= math.ceil(ratio * (1 << 24))


def dropout_model(src, dst, ratio):
    text = open(src).read()
    text = text.replace('float[3] fc2_bias', 'float ratio = {%r},\n  float[3] fc2_bias' % ratio)
    text = text.replace('logits = Gemm(a, ', 'd = Dropout(a, ratio)\n  logits = Gemm(d, ')
    open(dst, 'w').write(text)


def make_data(out, n, seed, ignored_every=0):
    rng = random.Random(seed)
    centers = [[1, 1, 0, 0], [-1, 0, 1, 0], [0, -1, 0, 1]]
    xs, ys = [], []
    for i in range(n):
        c = rng.randrange(3)
        ys.append(c)
        xs += [centers[c][k] + rng.gauss(0, 0.6) for k in range(4)]
    # Round through float32, as the file stores them.
    write_npy(out + '/features.npy', '<f4', [n, 4], xs)
    if ignored_every:  # every k-th label is -100 (ignore_index)
        ys = [-100 if i % ignored_every == ignored_every - 1 else v for i, v in enumerate(ys)]
    write_npy(out + '/y.npy', '<i8', [n], ys)


class Optimizer:
    """PyTorch's SGD / Adam / AdamW on lists of float64 parameters."""

    def __init__(self, spec, lr):
        kind, _, args = spec.partition(':')
        self.kind = kind
        self.lr = lr
        o = dict(momentum=0.0, dampening=0.0, nesterov=0.0, beta1=0.9, beta2=0.999, eps=1e-8,
                 weight_decay=0.01 if kind == 'adamw' else 0.0)
        self.clip = 0.0
        for item in filter(None, args.split(',')):
            k, v = item.split('=')
            if k == 'clip':
                self.clip = float(v)
            else:
                o[k] = float(v)
        self.o = o
        self.state = {}
        self.t = 0

    def step(self, params, grads):
        self.t += 1
        o, lr, t = self.o, self.lr, self.t
        for idx, (p, g) in enumerate(zip(params, grads)):
            g = list(g)
            if self.kind == 'sgd':
                if o['weight_decay']:
                    g = [gi + o['weight_decay'] * pi for gi, pi in zip(g, p)]
                if o['momentum']:
                    buf = self.state.get(idx)
                    if buf is None:
                        buf = list(g)
                    else:
                        buf = [o['momentum'] * b + (1 - o['dampening']) * gi for b, gi in zip(buf, g)]
                    self.state[idx] = buf
                    g = ([gi + o['momentum'] * b for gi, b in zip(g, buf)] if o['nesterov'] else buf)
                for i in range(len(p)):
                    p[i] -= lr * g[i]
                continue
            m, v = self.state.get(idx, ([0.0] * len(p), [0.0] * len(p)))
            if self.kind == 'adam' and o['weight_decay']:
                g = [gi + o['weight_decay'] * pi for gi, pi in zip(g, p)]
            if self.kind == 'adamw':
                for i in range(len(p)):
                    p[i] *= 1 - lr * o['weight_decay']
            m = [o['beta1'] * mi + (1 - o['beta1']) * gi for mi, gi in zip(m, g)]
            v = [o['beta2'] * vi + (1 - o['beta2']) * gi * gi for vi, gi in zip(v, g)]
            self.state[idx] = (m, v)
            bc1, bc2 = 1 - o['beta1'] ** t, 1 - o['beta2'] ** t
            for i in range(len(p)):
                p[i] -= lr / bc1 * m[i] / (math.sqrt(v[i] / bc2) + o['eps'])


RUN_OPTIONS = ('smooth', 'ignore', 'accum', 'freeze', 'dropout', 'seed', 'stream')


def check(model, data, metrics, batch, lr, steps, spec='sgd'):
    text = open(model).read()

    def init(name):
        m = re.search(name + r"\s*=\s*\{([^}]*)\}", text)
        return [float(v) for v in m.group(1).split(',')]

    # Run options are not the optimizer's.
    kind, _, args = spec.partition(':')
    run, rest = {}, []
    for item in filter(None, args.split(',')):
        k, _, v = item.partition('=')
        (run.__setitem__(k, v) if k in RUN_OPTIONS else rest.append(item))
    spec = kind + ':' + ','.join(rest)
    smooth = float(run.get('smooth', 0))
    ignore = int(run.get('ignore', -100))
    accum = int(run.get('accum', 1))
    ratio = float(run.get('dropout', 0))
    seed, stream = int(run.get('seed', 0)), int(run.get('stream', 2))
    names = ('fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias')
    trained = [not fnmatch.fnmatchcase(n, run['freeze']) if 'freeze' in run else True
               for n in names]

    w1, b1, w2, b2 = (init(n) for n in names)
    x = read_npy(data + '/features.npy')[1]
    y = read_npy(data + '/y.npy')[1]
    n = len(y)
    got = [json.loads(line) for line in open(metrics)]
    if len(got) != steps:
        print('MISMATCH: %d metric lines for %d steps' % (len(got), steps))
        return 1
    hidden, classes, feats = len(b1), len(b2), 4
    optimizer = Optimizer(spec, lr)
    per_epoch = n // batch
    worst = 0.0
    first, last = None, None
    scale = 1.0 / (1.0 - ratio)
    for step in range(steps):
        gw1 = [0.0] * len(w1)
        gb1 = [0.0] * hidden
        gw2 = [0.0] * len(w2)
        gb2 = [0.0] * classes
        loss = 0.0
        for micro in range(accum):
            index = step * accum + micro
            start = (index % per_epoch) * batch
            counted = max(1, sum(1 for r in range(start, start + batch) if y[r] != ignore))
            micro_loss = 0.0
            for r in range(start, start + batch):
                xr = x[r * feats:(r + 1) * feats]
                s = [sum(xr[k] * w1[k * hidden + j] for k in range(feats)) + b1[j]
                     for j in range(hidden)]
                keep = [not ratio or dropout_keep(ratio, seed, index, stream,
                                                  (r - start) * hidden + j)
                        for j in range(hidden)]
                h = [max(0.0, v) * (scale if ratio else 1.0) if kj else 0.0
                     for v, kj in zip(s, keep)]
                o = [sum(h[j] * w2[j * classes + c] for j in range(hidden)) + b2[c]
                     for c in range(classes)]
                if y[r] == ignore:
                    continue
                m = max(o)
                e = [math.exp(v - m) for v in o]
                z = sum(e)
                lse = m + math.log(z)
                micro_loss += (1 - smooth) * (lse - o[y[r]]) + smooth / classes * sum(
                    lse - v for v in o)
                do = [(e[c] / z - (1 - smooth) * (1.0 if c == y[r] else 0.0) - smooth / classes)
                      / counted / accum for c in range(classes)]
                for c in range(classes):
                    gb2[c] += do[c]
                    for j in range(hidden):
                        gw2[j * classes + c] += h[j] * do[c]
                for j in range(hidden):
                    if s[j] > 0 and keep[j]:
                        d = sum(do[c] * w2[j * classes + c] for c in range(classes))
                        d *= scale if ratio else 1.0
                        gb1[j] += d
                        for k in range(feats):
                            gw1[k * hidden + j] += xr[k] * d
            loss += micro_loss / counted / accum
        mine = got[step]['loss']
        err = abs(mine - loss) / max(abs(loss), 1e-12)
        worst = max(worst, err)
        if err > TOLERANCE:
            print('MISMATCH at step %d: tcc %r, float64 reference %r' % (step + 1, mine, loss))
            return 1
        first = loss if first is None else first
        last = loss
        # The global gradient norm (of the trained parameters), checked
        # against the step's grad_norm output, and PyTorch's clip_grad_norm_
        # when asked for.
        params = [p for p, t in zip([w1, b1, w2, b2], trained) if t]
        grads = [g for g, t in zip([gw1, gb1, gw2, gb2], trained) if t]
        norm = math.sqrt(sum(g * g for gs in grads for g in gs))
        if 'grad_norm' in got[step] and abs(got[step]['grad_norm'] - norm) > 1e-4 * norm:
            print('MISMATCH at step %d: grad_norm %r, float64 reference %r'
                  % (step + 1, got[step]['grad_norm'], norm))
            return 1
        if optimizer.clip:
            coef = min(1.0, optimizer.clip / (norm + 1e-6))
            grads = [[g * coef for g in gs] for gs in grads]
        optimizer.step(params, grads)
    print('OK: %d losses within 1e-4 (max relative error %.1e); loss %.3f -> %.3f'
          % (steps, worst, first, last))
    return 0


if __name__ == '__main__':
    if sys.argv[1] == 'dropout-model':
        dropout_model(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    elif sys.argv[1] == 'data':
        make_data(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), *map(int, sys.argv[5:6]))
    else:
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), float(sys.argv[6]),
                       int(sys.argv[7]), *sys.argv[8:9]))
