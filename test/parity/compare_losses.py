#!/usr/bin/env python3
"""compare_losses.py A.jsonl B.jsonl TOL: two tcc runs' per-step losses
(tcc-run --metrics) agree within TOL (absolute) at every step, and the
curve falls by at least 30%. Standard library only."""
import json
import sys

a = [json.loads(line)['loss'] for line in open(sys.argv[1])]
b = [json.loads(line)['loss'] for line in open(sys.argv[2])]
tol = float(sys.argv[3])
if len(a) != len(b) or not a:
    print('MISMATCH: %d steps against %d' % (len(a), len(b)))
    sys.exit(1)
worst = max(abs(x - y) for x, y in zip(a, b))
if worst > tol:
    step = max(range(len(a)), key=lambda i: abs(a[i] - b[i])) + 1
    print('MISMATCH at step %d: %r against %r' % (step, a[step - 1], b[step - 1]))
    sys.exit(1)
if b[-1] > 0.7 * b[0]:
    print('NOT LEARNING: loss %.4f -> %.4f' % (b[0], b[-1]))
    sys.exit(1)
print('SAME LOSSES: %d steps within %g (max difference %.1e); loss %.4f -> %.4f'
      % (len(a), tol, worst, b[0], b[-1]))
