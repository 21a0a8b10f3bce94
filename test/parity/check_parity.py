#!/usr/bin/env python3
"""check_parity.py METRICS.jsonl REFERENCE.json: compares tcc's per-step
losses with PyTorch's stored curve (scripts/parity/make_references.py):
every step within 1e-3 relative. Standard library only."""
import json
import sys

got = [json.loads(line)['loss'] for line in open(sys.argv[1])]
ref = json.load(open(sys.argv[2]))['losses']
if len(got) != len(ref):
    print('MISMATCH: %d steps, the reference has %d' % (len(got), len(ref)))
    sys.exit(1)
worst = 0.0
for step, (g, r) in enumerate(zip(got, ref), 1):
    err = abs(g - r) / max(abs(r), 1e-12)
    worst = max(worst, err)
    if err > 1e-3:
        print('MISMATCH at step %d: tcc %r, PyTorch %r (relative %.2e)' % (step, g, r, err))
        sys.exit(1)
print('PARITY: %d steps within 1e-3 of PyTorch (max relative %.1e); loss %.4f -> %.4f'
      % (len(got), worst, ref[0], ref[-1]))
