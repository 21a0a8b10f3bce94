#!/usr/bin/env python3
"""Oracles for test/e2e/train-sweep.test. Standard library only.

  sweep_check.py same-final RESULTS.jsonl TRIAL METRICS.jsonl
      trial TRIAL's final_loss is the last loss of the plain run's METRICS
      (as printed: nine significant digits, so equal floats print equal).
  sweep_check.py grid RESULTS.jsonl KEY=V1,V2,... ...
      the results hold one trial per combination of the values, in order
      (the first key outermost), each with final_loss and steps.
  sweep_check.py halving RESULTS.jsonl STEPS
      prints, per rung, how many trials stopped there, and how many ran
      STEPS steps.
  sweep_check.py random RESULTS.jsonl N KEY=LO:HI ...
      N trials, each KEY within [LO, HI].
"""
import itertools
import json
import sys


def load(path):
    return [json.loads(line) for line in open(path)]


def main(argv):
    kind, results = argv[1], load(argv[2])
    if kind == 'same-final':
        trial = results[int(argv[3])]
        last = load(argv[4])[-1]
        assert trial['final_loss'] == last['loss'], (trial, last)
        print('OK: trial %s final loss %r = the plain run\'s' % (argv[3], trial['final_loss']))
    elif kind == 'grid':
        axes = [(k, [float(v) for v in vs.split(',')]) for k, vs in (a.split('=') for a in argv[3:])]
        combos = list(itertools.product(*[vs for _, vs in axes]))
        assert len(results) == len(combos), (len(results), len(combos))
        for r, combo in zip(results, combos):
            for (key, _), v in zip(axes, combo):
                assert r[key] == v, (r, key, v)
            assert r['final_loss'] is not None and r['steps'] > 0, r
        print('OK: %d trials in grid order' % len(results))
    elif kind == 'halving':
        steps = int(argv[3])
        rungs = {}
        for r in results:
            rungs[r.get('stopped_at_rung', steps)] = rungs.get(r.get('stopped_at_rung', steps), 0) + 1
        print(' '.join('%d:%d' % kv for kv in sorted(rungs.items())))
    elif kind == 'random':
        assert len(results) == int(argv[3]), len(results)
        for a in argv[4:]:
            key, lo_hi = a.split('=')
            lo, hi = (float(x) for x in lo_hi.split(':'))
            for r in results:
                assert lo <= r[key] <= hi, (r, key)
        print('OK: %d draws in range' % len(results))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
