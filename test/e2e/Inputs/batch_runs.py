#!/usr/bin/env python3
"""Oracle for test/e2e/evaluate.test and predict.test: a data set cut into
batches that tcc-run runs one at a time (--infer, --entry eval_step), and
what tcc-run evaluate / predict must then report. Standard library only.

  batch_runs.py split IN.npy BATCH PREFIX
      writes PREFIX.K.npy, the K-th BATCH rows of IN.npy (the last one holds
      the remainder); prints the number of pieces.
  batch_runs.py evaluation METRICS.json Y.npy PREFIX RUNS
      the mean over samples of the runs' PREFIX.K/loss.npy (K < RUNS, each
      weighted by its samples; when the runs have a loss) and the accuracy of
      PREFIX.K/logits.npy against Y.npy, against METRICS.json (loss within
      1e-12 relative; counts exact).
  batch_runs.py scale IN.npy FACTOR OUT.npy
      writes IN.npy (float32) times FACTOR.
  batch_runs.py concat OUT.npy NAME PREFIX RUNS
      PREFIX.K/NAME.npy (K < RUNS) concatenated along the first axis must
      equal OUT.npy bit for bit.
"""
import json
import os
import struct
import sys

from npy_io import read_npy, write_raw

ITEM = {'<f4': 4, '<f8': 8, '<i8': 8, '<i4': 4, '|u1': 1}


def raw_npy(path):
    """(descr, shape, header bytes, data bytes) of a .npy file."""
    data = open(path, 'rb').read()
    hlen = struct.unpack('<H', data[8:10])[0]
    header = data[10:10 + hlen].decode('latin1')
    descr = header.split("'descr': '")[1].split("'")[0]
    dims = header.split("'shape': (")[1].split(')')[0]
    shape = [int(d) for d in dims.split(',') if d.strip()]
    return descr, shape, data[:10 + hlen], data[10 + hlen:]


def split(path, batch, prefix):
    descr, shape, _, body = raw_npy(path)
    row = len(body) // shape[0]
    pieces = 0
    for start in range(0, shape[0], batch):
        n = min(batch, shape[0] - start)
        write_raw('%s.%d.npy' % (prefix, pieces), descr, [n] + shape[1:],
                  body[start * row:(start + n) * row])
        pieces += 1
    print(pieces)
    return 0


def evaluation(metrics, ypath, dirs):
    got = json.load(open(metrics))
    _, y = read_npy(ypath)
    has_loss = all(os.path.exists(d + '/loss.npy') for d in dirs)
    if has_loss != ('loss' in got):
        print('MISMATCH: a loss in the runs: %s, in %s: %s' % (has_loss, metrics, 'loss' in got))
        return 1
    loss_sum, samples, correct = 0.0, 0, 0
    for d in dirs:
        (n, classes), z = read_npy(d + '/logits.npy')
        if has_loss:
            loss_sum += read_npy(d + '/loss.npy')[1][0] * n
        for r in range(n):
            row = z[r * classes:(r + 1) * classes]
            correct += row.index(max(row)) == y[samples + r]
        samples += n
    want = {'samples': samples, 'loss': loss_sum / samples, 'correct': correct,
            'counted': samples, 'accuracy': correct / samples}
    for key in ('samples', 'correct', 'counted'):
        if got[key] != want[key]:
            print('MISMATCH: %s %r, by hand %r' % (key, got[key], want[key]))
            return 1
    for key in ('loss', 'accuracy') if has_loss else ('accuracy',):
        if abs(got[key] - want[key]) > 1e-12 * abs(want[key]):
            print('MISMATCH: %s %r, by hand %r' % (key, got[key], want[key]))
            return 1
    print('OK: %d samples in %d runs, %s%d correct'
          % (samples, len(dirs), 'loss %.9g, ' % want['loss'] if has_loss else '', correct))
    return 0


def concat(out, name, dirs):
    descr, shape, _, body = raw_npy(out)
    pieces = [raw_npy('%s/%s.npy' % (d, name)) for d in dirs]
    rows = sum(p[1][0] for p in pieces)
    joined = b''.join(p[3] for p in pieces)
    if shape[0] != rows or any(p[0] != descr or p[1][1:] != shape[1:] for p in pieces):
        print('MISMATCH: %s is %s %r, the runs give %d rows' % (out, descr, shape, rows))
        return 1
    if joined != body:
        print('MISMATCH: %s differs from the %d runs' % (out, len(dirs)))
        return 1
    print('OK: %s: %d rows of %d runs, bitwise' % (name, rows, len(dirs)))
    return 0


def scale(path, factor, out):
    descr, shape, _, body = raw_npy(path)
    values = struct.unpack('<%df' % (len(body) // 4), body)
    write_raw(out, descr, shape, struct.pack('<%df' % len(values), *[v * factor for v in values]))
    return 0


def main():
    command = sys.argv[1]
    if command == 'split':
        return split(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    if command == 'scale':
        return scale(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    dirs = ['%s.%d' % (sys.argv[4], k) for k in range(int(sys.argv[5]))]
    if command == 'evaluation':
        return evaluation(sys.argv[2], sys.argv[3], dirs)
    return concat(sys.argv[2], sys.argv[3], dirs)


sys.exit(main())
