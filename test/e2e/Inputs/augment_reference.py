#!/usr/bin/env python3
"""The oracle of test/e2e/train-augment.test. Standard library only.

  augment_reference.py model OUT.onnxtxt PIXELS CLASSES
      a linear classifier logits = x W + b (W: PIXELS x CLASSES, b:
      CLASSES), both zero: after one SGD step with rate LR on a batch, W is
      -LR/B sum_s x_s (p - onehot(y_s)) with p = 1/CLASSES, so the weights
      spell out the batch the step saw.
  augment_reference.py check DATA SAVED.safetensors SEED PAD FLIP MEAN STD B LR
      recomputes batch 0 (samples 0..B-1: --no-shuffle) of DATA/x.npy with
      tcc-run's augmentation (Philox4x32-10 keyed by SEED, counter (k = 0,
      0, sample, 'AUGM'): crop offsets word0 % (2 PAD + 1) - PAD and word1,
      flip bit word2 & 1 when FLIP; zero padding; then (x - MEAN) / STD), in
      float64, the step's W and b from it, and compares them with SAVED
      (relative 1e-5 of the largest value).
"""
import struct
import sys

from npy_io import read_npy, read_safetensors
from train_reference import philox

M32 = 0xFFFFFFFF

# Random123's known answers for all four words (train_reference checks the
# first words of these too).
assert philox([0, 0, 0, 0], [0, 0]) == [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
assert philox([M32] * 4, [M32] * 2) == [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]


def write_model(out, pixels, classes):
    zeros = lambda n: ', '.join(['0'] * n)
    with open(out, 'w') as f:
        f.write('<\n  ir_version: 8,\n  opset_import: ["" : 17]\n>\n')
        f.write('linear (float[N, %d] x) => (float[N, %d] logits)\n' % (pixels, classes))
        f.write('<\n  float[%d, %d] W = {%s},\n  float[%d] b = {%s}\n>\n' % (
            pixels, classes, zeros(pixels * classes), classes, zeros(classes)))
        f.write('{\n  logits = Gemm(x, W, b)\n}\n')


def augment(image, side, seed, k, s, pad, flip, mean, std):
    w = philox([k & M32, k >> 32, s, 0x4155474D], [seed & M32, seed >> 32])
    dy = w[0] % (2 * pad + 1) - pad if pad else 0
    dx = w[1] % (2 * pad + 1) - pad if pad else 0
    flipped = flip and (w[2] & 1)
    out = []
    for y in range(side):
        for col in range(side):
            sy, sx = y + dy, (side - 1 - col if flipped else col) + dx
            v = image[sy * side + sx] if 0 <= sy < side and 0 <= sx < side else 0.0
            out.append((v - mean) / std)
    return out


def float_tensors(path):
    return {name: struct.unpack('<%df' % (len(raw) // 4), raw)
            for name, (_, _, raw) in read_safetensors(path).items()}


def check(folder, saved, seed, pad, flip, mean, std, batch, lr):
    shape, xs = read_npy(folder + '/x.npy')
    _, ys = read_npy(folder + '/y.npy')
    pixels = shape[1]
    side = int(round(pixels ** 0.5))
    weights = float_tensors(saved)
    classes = len(weights['b'])
    W = [[0.0] * classes for _ in range(pixels)]
    b = [0.0] * classes
    for s in range(batch):
        x = augment(xs[s * pixels:(s + 1) * pixels], side, seed, 0, s, pad, flip, mean, std)
        for j in range(classes):
            g = (1.0 / classes - (1.0 if ys[s] == j else 0.0)) / batch
            b[j] -= lr * g
            for i in range(pixels):
                W[i][j] -= lr * g * x[i]
    want = [v for row in W for v in row]
    got = weights['W']
    scale = max(abs(v) for v in want)
    worst = max(abs(g - w) for g, w in zip(got, want)) / scale
    worst_b = max(abs(g - w) for g, w in zip(weights['b'], b)) / max(abs(v) for v in b)
    if worst > 1e-5 or worst_b > 1e-5:
        sys.exit('FAIL: the weights differ from the augmented batch\'s step by %.3g (W), %.3g (b)'
                 % (worst, worst_b))
    print('OK: the step saw the augmented batch (W within %.2g, b within %.2g)' % (worst, worst_b))


def main(argv):
    if argv[1] == 'model':
        write_model(argv[2], int(argv[3]), int(argv[4]))
    elif argv[1] == 'check':
        check(argv[2], argv[3], int(argv[4]), int(argv[5]), argv[6] == '1', float(argv[7]),
              float(argv[8]), int(argv[9]), float(argv[10]))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
