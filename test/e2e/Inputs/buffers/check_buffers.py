#!/usr/bin/env python3
"""check_buffers.py - oracles of test/e2e/train-buffers.test (standard library
only).

  check_buffers.py losses REFERENCE.json MODEL METRICS.jsonl TOLERANCE
      each step's loss in tcc-run's metrics against PyTorch's fp32 loss of
      that step in REFERENCE.json's MODEL entry: prints the worst relative
      error, PyTorch's own fp32-vs-float64 error for scale, and OK when every
      step is within TOLERANCE, else FAIL with the first step outside.
  check_buffers.py tensors BEFORE.safetensors AFTER.safetensors NAME...
      prints, for each NAME, 'NAME same' when its bytes are equal in both
      files, else 'NAME changed'.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from npy_io import read_safetensors  # noqa: E402


def losses(reference, model, metrics, tolerance):
    ref = json.load(open(reference))[model]
    got = [json.loads(line)['loss'] for line in open(metrics) if line.strip()]
    if len(got) != len(ref['losses']):
        print('FAIL: %d steps, the reference has %d' % (len(got), len(ref['losses'])))
        return
    errors = [abs(a - b) / abs(b) for a, b in zip(got, ref['losses'])]
    print('%s: worst relative error %.1e over %d steps (PyTorch fp32 vs float64: %.1e)' % (
        model, max(errors), len(errors), ref['fp32_vs_float64']))
    bad = [i for i, e in enumerate(errors) if not e <= tolerance]
    if bad:
        i = bad[0]
        print('FAIL: step %d loss %.9g, PyTorch %.9g' % (i + 1, got[i], ref['losses'][i]))
    else:
        print('OK')


def tensors(before, after, names):
    a, b = read_safetensors(before), read_safetensors(after)
    for name in names:
        print(name, 'same' if a[name] == b[name] else 'changed')


if __name__ == '__main__':
    if sys.argv[1] == 'losses':
        losses(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
    else:
        tensors(sys.argv[2], sys.argv[3], sys.argv[4:])
