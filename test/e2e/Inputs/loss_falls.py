#!/usr/bin/env python3
"""loss_falls.py METRICS.jsonl FRACTION: checks that the mean loss of the last
10 steps is at most (1 - FRACTION) times that of the first 10 (a flat or
rising curve fails). Standard library only."""
import json
import sys

losses = [json.loads(line)['loss'] for line in open(sys.argv[1])]
first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
fraction = float(sys.argv[2])
if last > (1 - fraction) * first:
    print('FLAT: loss %.4f -> %.4f, less than %d%% lower' % (first, last, fraction * 100))
    sys.exit(1)
print('FALLS: loss %.4f -> %.4f over %d steps' % (first, last, len(losses)))
