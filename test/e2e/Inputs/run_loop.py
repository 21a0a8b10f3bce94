#!/usr/bin/env python3
"""Data and oracles for test/e2e/train-run-loop.test. Standard library only.

  run_loop.py data DIR N SEED [flip]
      DIR/x.npy (N x 2 float32: three Gaussian blobs) and DIR/y.npy (N int64
      labels 0..2), deterministic from SEED; with 'flip' every label is
      (class + 1) % 3, so the better a model fits the blobs, the worse its
      loss on these (a validation set whose loss rises).
  run_loop.py same A.jsonl B.jsonl RTOL
      every step's loss and lr in A and B agree to RTOL (relative).
  run_loop.py cyclic METRICS LR MIN_LR HALF
      every step's lr is PyTorch's CyclicLR(mode='triangular', base_lr=MIN_LR,
      max_lr=LR, step_size_up=HALF) at that step (the formula from its docs).
  run_loop.py plateau METRICS LR GAMMA PATIENCE MIN_LR EVERY
      replays ReduceLROnPlateau(mode='min', factor=GAMMA, patience=PATIENCE,
      threshold=1e-4, threshold_mode='rel', cooldown=0, min_lr=MIN_LR, eps=1e-8)
      on the val_loss of every EVERY-th step (or, without val_loss, the mean
      training loss since the previous one) and checks each step's lr; prints
      the steps after which it cut the rate.
  run_loop.py val METRICS PARAMS.safetensors DIR
      the last metrics line's val_loss and val_accuracy are those of the
      fixture model (eval_artifact.c) with the weights W of PARAMS on the full
      batches of 4 in DIR (float64 here; relative 1e-5).
  run_loop.py fails CODE COMMAND...
      runs COMMAND, prints its stderr, and fails unless it exits with CODE.
  run_loop.py stop METRICS KEY PATIENCE MIN_DELTA
      replays early stopping on KEY (val_loss: lower is better, val_accuracy:
      higher) and checks that the run ended where it should; prints the step.
"""
import json
import math
import random
import sys

from npy_io import write_npy


def make_data(out, n, seed, flip):
    rng = random.Random(seed)
    centers = [[2, 0], [-1, 1.7], [-1, -1.7]]
    xs, ys = [], []
    for _ in range(n):
        c = rng.randrange(3)
        ys.append((c + 1) % 3 if flip else c)
        xs += [centers[c][k] + rng.gauss(0, 0.5) for k in range(2)]
    write_npy(out + '/x.npy', '<f4', [n, 2], xs)
    write_npy(out + '/y.npy', '<i8', [n], ys)


def load(path):
    rows = [json.loads(line) for line in open(path)]
    if not rows:
        sys.exit('FAIL: %s is empty' % path)
    return rows


def f32(v):
    """v rounded to float32, as tcc-run sets the rate."""
    import struct
    return struct.unpack('f', struct.pack('f', v))[0]


def close(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-30)


def same(a, b, rtol):
    ra, rb = load(a), load(b)
    if len(ra) != len(rb):
        sys.exit('FAIL: %d steps against %d' % (len(ra), len(rb)))
    for x, y in zip(ra, rb):
        for key in ('loss', 'lr'):
            if not close(x[key], y[key], rtol):
                sys.exit('FAIL: step %d %s %r against %r' % (x['step'], key, x[key], y[key]))
    print('OK: %d steps agree' % len(ra))


def cyclic(path, lr, min_lr, half):
    rows = load(path)
    for r in rows:
        it = r['step'] - 1  # the scheduler's iteration count before the step
        cycle = math.floor(1 + it / (2 * half))
        x = abs(it / half - 2 * cycle + 1)
        want = f32(min_lr + (lr - min_lr) * max(0.0, 1 - x))
        if not close(r['lr'], want, 1e-6):
            sys.exit('FAIL: step %d lr %r, CyclicLR gives %r' % (r['step'], r['lr'], want))
    print('OK: %d rates follow CyclicLR' % len(rows))


def plateau(path, lr, gamma, patience, min_lr, every):
    rows = load(path)
    best, bad, window = math.inf, 0, []
    cuts = []
    for r in rows:
        if not close(r['lr'], f32(lr), 1e-6):
            sys.exit('FAIL: step %d lr %r, ReduceLROnPlateau gives %r' % (r['step'], r['lr'], lr))
        window.append(r['loss'])
        if r['step'] % every:
            continue
        metric = r['val_loss'] if 'val_loss' in r else sum(window) / len(window)
        window = []
        if metric < best * (1 - 1e-4):
            best, bad = metric, 0
        else:
            bad += 1
        if bad > patience:
            new = max(lr * gamma, min_lr)
            if lr - new > 1e-8:
                lr = new
                cuts.append(r['step'])
            bad = 0
    print('OK: %d rates follow ReduceLROnPlateau; cut after step(s) %s'
          % (len(rows), ' '.join(map(str, cuts)) or 'none'))


def stop(path, key, patience, min_delta):
    rows = load(path)
    lower = key == 'val_loss'
    best, bad, end = None, 0, None
    for r in rows:
        if key not in r:
            continue
        v = r[key]
        if best is None or (v < best - min_delta if lower else v > best + min_delta):
            best, bad = v, 0
        else:
            bad += 1
            if bad >= patience:
                end = r['step']
                break
    if end is None:
        sys.exit('FAIL: early stopping should not have stopped (ran %d steps)' % rows[-1]['step'])
    if rows[-1]['step'] != end:
        sys.exit('FAIL: the run ended at step %d, early stopping says %d' % (rows[-1]['step'], end))
    print('OK: stopped at step %d' % end)


def read_w(path):
    import struct
    data = open(path, 'rb').read()
    n = struct.unpack('<Q', data[:8])[0]
    header = json.loads(data[8:8 + n])
    begin, end = header['W']['data_offsets']
    return struct.unpack('<6f', data[8 + n + begin:8 + n + end])


def val(path, params, folder):
    from npy_io import read_npy
    w = read_w(params)
    (n, _), x = read_npy(folder + '/x.npy')
    _, y = read_npy(folder + '/y.npy')
    batches = n // 4
    loss, correct = 0.0, 0
    for r in range(batches * 4):
        z = [sum(x[r * 2 + j] * w[j * 3 + c] for j in range(2)) for c in range(3)]
        m = max(z)
        loss += math.log(sum(math.exp(v - m) for v in z)) + m - z[y[r]]
        correct += z.index(m) == y[r]
    want_loss, want_acc = loss / (batches * 4), correct / (batches * 4)
    last = load(path)[-1]
    if not close(last['val_loss'], want_loss, 1e-5):
        sys.exit('FAIL: val_loss %r, expected %r' % (last['val_loss'], want_loss))
    if not close(last['val_accuracy'], want_acc, 1e-9):
        sys.exit('FAIL: val_accuracy %r, expected %r' % (last['val_accuracy'], want_acc))
    print('OK: val_loss %.6f val_accuracy %.4f' % (want_loss, want_acc))


def fails(code, command):
    import subprocess
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sys.stdout.write(done.stderr)
    if done.returncode != code:
        sys.exit('FAIL: exit status %d, expected %d' % (done.returncode, code))
    print('exit status %d' % code)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'data':
        make_data(args[0], int(args[1]), int(args[2]), len(args) > 3 and args[3] == 'flip')
    elif cmd == 'same':
        same(args[0], args[1], float(args[2]))
    elif cmd == 'cyclic':
        cyclic(args[0], float(args[1]), float(args[2]), int(args[3]))
    elif cmd == 'plateau':
        plateau(args[0], float(args[1]), float(args[2]), int(args[3]), float(args[4]),
                int(args[5]))
    elif cmd == 'val':
        val(args[0], args[1], args[2])
    elif cmd == 'fails':
        fails(int(args[0]), args[1:])
    elif cmd == 'stop':
        stop(args[0], args[1], int(args[2]), float(args[3]))
    else:
        sys.exit('unknown command ' + cmd)


if __name__ == '__main__':
    main()
