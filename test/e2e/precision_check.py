#!/usr/bin/env python3
"""precision_check.py: checks of 16-bit training runs (tcc-run --metrics
files and parameter files) for test/e2e/precision-*.test. Standard library
only.

  losses FP32.jsonl LOW.jsonl   the mean of the last 10 losses of LOW within
                                2% of FP32's, LOW not bitwise FP32's (the
                                precision changed the computation), and both
                                curves falling
  skipped LOW.jsonl K           the first K steps skipped with the scale
                                halving each time, later steps not skipped
                                and the loss falling after them
  same FILE.safetensors FILE2   every tensor bitwise equal
"""
import json
import struct
import sys


def metrics(path):
    return [json.loads(line) for line in open(path)]


def losses(args):
    ref = [m['loss'] for m in metrics(args[0])]
    low = [m['loss'] for m in metrics(args[1])]
    if len(ref) != len(low) or len(ref) < 60:
        sys.exit('MISMATCH: %d and %d steps (at least 60 needed)' % (len(ref), len(low)))
    a, b = sum(ref[-10:]) / 10, sum(low[-10:]) / 10
    rel = abs(b - a) / abs(a)
    print('mean of the last 10: fp32 %.5f, low %.5f (%.2f%%)' % (a, b, 100 * rel))
    if ref == low:
        sys.exit('IDENTICAL: the 16-bit run computed exactly the f32 losses')
    for curve in (ref, low):
        if curve[-1] > 0.8 * curve[0]:
            sys.exit('NOT LEARNING: %.4f -> %.4f' % (curve[0], curve[-1]))
    if rel > 0.02:
        sys.exit('TOO FAR: %.2f%% from fp32' % (100 * rel))
    print('WITHIN 2% OF FP32')


def skipped(args):
    m = metrics(args[0])
    k = int(args[1])
    for i in range(k):
        if m[i]['skipped'] != 1:
            sys.exit('NOT SKIPPED: step %d' % (i + 1))
        # The metrics print f32 values to 9 digits: equal as f32.
        if i and abs(m[i]['loss_scale'] - m[i - 1]['loss_scale'] / 2) > 1e-7 * m[i]['loss_scale']:
            sys.exit('NO BACKOFF: step %d scale %r after %r'
                     % (i + 1, m[i]['loss_scale'], m[i - 1]['loss_scale']))
    done = [x for x in m[k:] if x['skipped'] == 0]
    if len(m) > k and not done:
        sys.exit('NEVER RECOVERED: every step skipped')
    first = next((i for i, x in enumerate(m) if x['skipped'] == 0), None)
    print('skipped %d steps, scale %g -> %g; first finite step %s'
          % (sum(x['skipped'] for x in m), m[0]['loss_scale'], m[-1]['loss_scale'],
             first + 1 if first is not None else 'none'))
    if done and m[-1]['loss'] > 0.8 * m[first]['loss']:
        sys.exit('NOT LEARNING after the skips: %.4f -> %.4f' % (m[first]['loss'], m[-1]['loss']))
    print('OVERFLOW HANDLED')


def tensors(path):
    data = open(path, 'rb').read()
    n = struct.unpack('<Q', data[:8])[0]
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    return {k: body[v['data_offsets'][0]:v['data_offsets'][1]]
            for k, v in header.items() if k != '__metadata__'}


def same(args):
    a, b = tensors(args[0]), tensors(args[1])
    if sorted(a) != sorted(b):
        sys.exit('DIFFERENT NAMES')
    changed = [k for k in a if a[k] != b[k]]
    if changed:
        sys.exit('CHANGED: %s' % ', '.join(sorted(changed)[:5]))
    print('UNTOUCHED: %d tensors bitwise equal' % len(a))


{'losses': losses, 'skipped': skipped, 'same': same}[sys.argv[1]](sys.argv[2:])
