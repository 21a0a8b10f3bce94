#!/usr/bin/env python3
"""Issue 19's table from bench/train_bench.py --json files (standard library only).

  bench/train_table.py ONE_THREAD.json TWO_THREADS.json [...]

One row per model: for each file (a thread count), tcc's median step and the
ratios torch/tcc and torch-compile/tcc (above 1: tcc faster), then the
geometric means; a ratio under the issue's bars is marked: eager < 1.2x with
'<', torch.compile < 1.0x with '!'. Prints markdown.
"""
import json
import math
import sys


def ratio(row, engine):
    eng = row['engines']
    if engine not in eng or 'tcc' not in eng:
        return None
    return eng[engine]['median'] / eng['tcc']['median']


def cell(x, bar, mark):
    if x is None:
        return '-'
    return '%.2f%s' % (x, mark if x < bar else '')


def geomean(xs):
    xs = [x for x in xs if x is not None]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 1
    runs = [json.load(open(path)) for path in argv[1:]]
    models = [r['model'] for r in runs[0]['results']]
    head = ['model']
    for run in runs:
        t = run['args']['threads']
        head += ['tcc ms (%dt)' % t, 'torch/tcc', 'compile/tcc']
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    columns = [[] for _ in range(2 * len(runs))]
    for name in models:
        cells = [name]
        for i, run in enumerate(runs):
            row = next((r for r in run['results'] if r['model'] == name), None)
            if row is None or 'tcc' not in row['engines']:
                cells += ['-', '-', '-']
                continue
            eager, compiled = ratio(row, 'torch'), ratio(row, 'torch-compile')
            columns[2 * i].append(eager)
            columns[2 * i + 1].append(compiled)
            cells += ['%.3f' % row['engines']['tcc']['median'], cell(eager, 1.2, ' <'),
                      cell(compiled, 1.0, ' !')]
        print('| ' + ' | '.join(cells) + ' |')
    cells = ['geometric mean']
    for i in range(len(runs)):
        cells += ['', cell(geomean(columns[2 * i]), 1.5, ' <'), cell(geomean(columns[2 * i + 1]), 1.0, ' !')]
    print('| ' + ' | '.join(cells) + ' |')
    for run in runs:
        print('\nthreads %d: load average %s; %s' % (run['args']['threads'],
                                                   ' '.join('%.2f' % x for x in run['loadavg']),
                                                   ', '.join('%s %s' % kv for kv in run['versions'].items())))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
