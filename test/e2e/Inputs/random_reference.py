#!/usr/bin/env python3
"""Model, data and oracle for test/e2e/train-random.test. Standard library only.

  random_reference.py model OUT.onnxtxt
      writes a linear regression (W the one parameter) with the random ops
      current PyTorch exports
      (torch.onnx.export's dynamo exporter): torchvision's stochastic depth
      (RandomUniformLike, Less, Cast: a row kept with probability 0.8 and
      scaled by 1/0.8), torch.randn_like noise (RandomNormalLike) and
      torch.bernoulli (Bernoulli of a constant probability tensor):
        s = x W                      x: [8, 4], W: [4, 3]
        keep = RandomUniformLike(s) < 0.8
        z = s * keep / 0.8 + 0.1 RandomNormalLike(s)
        y_hat = z * Bernoulli(P)     P: [8, 3] constant probabilities
  random_reference.py data DIR X8.npy
      writes DIR/x.npy (16 x 4 float32), DIR/y.npy (16 x 3 float32) and
      X8.npy, the first batch of x (for infer).
  random_reference.py check MODEL.onnxtxt DIR METRICS.jsonl SEED LR STEPS
      trains the model in float64 with SGD (no momentum) and MSE on the
      batches tcc-run --no-shuffle takes, drawing every random number as
      tcc.random documents (Philox4x32-10, key = seed, counter = (element,
      stream = ONNX node index, step index)), and compares each step's loss
      with tcc's metrics (relative 1e-5). Prints 'OK: STEPS losses ...' or the
      first mismatch.
  random_reference.py infer MODEL.onnxtxt X.npy OUT.npy
      checks tcc's infer output in eval mode, the initial W: the stochastic
      depth and Bernoulli masks at their expectations (0.8 and P), the noise
      drawn with seed 0 and counter 0 (the fixed sample of eval_step and
      infer).
"""
import json
import math
import struct
import sys

from npy_io import read_npy, write_npy
from train_reference import M32, philox

TOLERANCE = 1e-5
BATCH, FEATS, OUT = 8, 4, 3
W0 = [0.3, -0.2, 0.5, -0.4, 0.1, 0.25, 0.6, -0.35, -0.15, 0.2, -0.5, 0.45]
P = [0.9, 0.5, 0.25, 0.75, 1.0, 0.6, 0.3, 0.95, 0.8, 0.7, 0.4, 0.85,
     0.55, 0.65, 0.9, 0.2, 0.35, 0.5, 0.45, 0.99, 0.15, 0.6, 0.7, 0.8]
# The ONNX node indices of the random nodes in the model below: their streams.
UNIFORM_STREAM, NORMAL_STREAM, BERNOULLI_STREAM = 3, 8, 11


def f32(v):
    return struct.unpack('<f', struct.pack('<f', v))[0]


def model(path):
    fl = lambda vs: ', '.join('%r' % v for v in vs)
    text = '''<ir_version: 8, opset_import: ["" : 17]>
noisy (float[8, 4] x) => (float[8, 3] y_hat)
<float[4, 3] w = {%s}, float[8, 3] p = {%s}>
{
  survive = Constant<value = float {0.8}>()
  noise = Constant<value = float {0.1}>()
  s = MatMul(x, w)
  u = RandomUniformLike<seed = 5.0>(s)
  keep = Less(u, survive)
  keepf = Cast<to = 1>(keep)
  kept = Mul(s, keepf)
  scaled = Div(kept, survive)
  n = RandomNormalLike<mean = 0.0, scale = 1.0>(s)
  nn = Mul(n, noise)
  z = Add(scaled, nn)
  b = Bernoulli(p)
  y_hat = Mul(z, b)
}
''' % (fl(W0), fl(P))
    with open(path, 'w') as f:
        f.write(text)


def data(d, x8):
    import os
    os.makedirs(d, exist_ok=True)
    rnd = __import__('random').Random(7)
    x = [f32(rnd.uniform(-1, 1)) for _ in range(16 * FEATS)]
    y = [f32(rnd.uniform(-1, 1)) for _ in range(16 * OUT)]
    write_npy(d + '/x.npy', '<f4', (16, FEATS), x)
    write_npy(d + '/y.npy', '<f4', (16, OUT), y)
    write_npy(x8, '<f4', (BATCH, FEATS), x[:BATCH * FEATS])


def words(seed, counter, stream, index):
    return philox([index & M32, stream, counter & M32, (counter >> 32) & M32], [seed & M32, (seed >> 32) & M32])


def uniform(seed, counter, stream, index):
    return (words(seed, counter, stream, index)[0] >> 8) * 2.0 ** -24


def normal(seed, counter, stream, index):
    w = words(seed, counter, stream, index)
    u1 = ((w[0] >> 8) + 1) * 2.0 ** -24
    u2 = (w[1] >> 8) * 2.0 ** -24
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def forward(x, w, seed, counter, eval_mode=False):
    """y_hat and the per-element factor d y_hat / d s. EVAL_MODE: as
    eval_step and infer run it, the two Bernoulli masks at their
    expectations (0.8, P) and the noise the seed-0 sample."""
    survive = f32(0.8)
    out, factor = [], []
    for r in range(BATCH):
        for c in range(OUT):
            i = r * OUT + c
            s = sum(x[r * FEATS + k] * w[k * OUT + c] for k in range(FEATS))
            keep = 1.0 if uniform(seed, counter, UNIFORM_STREAM, i) < survive else 0.0
            b = 1.0 if uniform(seed, counter, BERNOULLI_STREAM, i) < f32(P[i]) else 0.0
            if eval_mode:
                keep, b = survive, f32(P[i])
            z = s * keep / survive + f32(0.1) * normal(seed, counter, NORMAL_STREAM, i)
            out.append(z * b)
            factor.append(keep / survive * b)
    return out, factor


def check(model_path, d, metrics, seed, lr, steps):
    x_all, y_all = read_npy(d + '/x.npy')[1], read_npy(d + '/y.npy')[1]
    w = [f32(v) for v in W0]
    got = [json.loads(line)['loss'] for line in open(metrics)]
    if len(got) != steps:
        print('FAIL: %d steps in the metrics, expected %d' % (len(got), steps))
        return 1
    per_epoch = 16 // BATCH
    for step in range(steps):
        start = (step % per_epoch) * BATCH
        x = x_all[start * FEATS:(start + BATCH) * FEATS]
        y = y_all[start * OUT:(start + BATCH) * OUT]
        out, factor = forward(x, w, seed, step)
        n = len(out)
        loss = sum((o - t) ** 2 for o, t in zip(out, y)) / n
        if abs(got[step] - loss) > TOLERANCE * abs(loss):
            print('FAIL: step %d: tcc %.9g, reference %.9g' % (step + 1, got[step], loss))
            return 1
        g = [2.0 * (o - t) / n * f for o, t, f in zip(out, y, factor)]
        for k in range(FEATS):
            for c in range(OUT):
                w[k * OUT + c] -= lr * sum(x[r * FEATS + k] * g[r * OUT + c] for r in range(BATCH))
    print('OK: %d losses within %g' % (steps, TOLERANCE))
    return 0


def infer(model_path, x_path, out_path):
    x = read_npy(x_path)[1]
    got = read_npy(out_path)[1]
    want, _ = forward(x, [f32(v) for v in W0], 0, 0, eval_mode=True)
    worst = max(abs(a - b) for a, b in zip(got, want))
    if worst > 1e-5:
        print('FAIL: infer differs from eval mode by %.3g' % worst)
        return 1
    print('OK: infer is eval mode: the masks at their expectations, the noise the seed-0 sample '
          '(max error %.2g)' % worst)
    return 0


def main():
    cmd = sys.argv[1]
    if cmd == 'model':
        model(sys.argv[2])
    elif cmd == 'data':
        data(sys.argv[2], sys.argv[3])
    elif cmd == 'check':
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), float(sys.argv[6]),
                       int(sys.argv[7])))
    elif cmd == 'infer':
        sys.exit(infer(sys.argv[2], sys.argv[3], sys.argv[4]))
    else:
        sys.exit('unknown command ' + cmd)


if __name__ == '__main__':
    main()
