"""remat_check.py --tcc TCC --tcc-run TCC_RUN --work DIR --data DATA -- MODEL FLAGS...

Rematerialization end to end, for one model: compiles it without a budget
(A0), with --remat=max (AMAX) and with --memory-budget halfway between the two
(AB, state + the mean of the two arenas); checks that AB's plan (tcc-run
--list: arena + state) fits its budget and is below A0's, that 20 training
steps of A0, AB and AMAX give the same losses and gradient norms (exactly, as
printed: 9 significant digits identify an f32) and the same parameters and
optimizer state to the bit, and that a budget of state + 3/4 of AMAX's arena is refused
with exit 1 and the explanation. With --count OP, also how many more OP ops AMAX's
training step runs than A0's (recomputed ones: matmuls, convolutions). Prints one
line per check. Any Python 3, standard library only."""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_tensors import tensors  # noqa: E402


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def must(cmd):
    rc, out = run(cmd)
    if rc != 0:
        sys.exit('FAILED (%d): %s\n%s' % (rc, ' '.join(cmd), out))
    return out


def plan(args, so):
    out = must([args.tcc_run, so, '--list'])
    arena = int(re.search(r'^arena: (\d+) bytes', out, re.M).group(1))
    state = int(re.search(r'^state: (\d+) bytes', out, re.M).group(1))
    return arena, state


def train(args, so, name):
    metrics = os.path.join(args.work, name + '.jsonl')
    saved = os.path.join(args.work, name + '.safetensors')
    must([args.tcc_run, so, '--data', args.data, '--steps', '20', '--lr', '0.01', '--init', '5',
          '--no-shuffle', '--threads', '2', '--metrics', metrics, '--save', saved])
    rows = [json.loads(line) for line in open(metrics)]
    return [(r['loss'], r['grad_norm']) for r in rows if 'loss' in r], tensors(saved)


def count_ops(args, model, op):
    """The OP ops of the training step in MODEL's imported IR."""
    ir = must([args.tcc] + model + ['--emit=mlir', '-o', '-'])
    body = ir.split('func.func @train_step(')[1].split('\n  func.func ')[0]
    return len(re.findall(r'= %s ' % re.escape(op), body))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tcc', required=True)
    ap.add_argument('--tcc-run', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--data', required=True)
    ap.add_argument('--count', action='append', default=[], metavar='OP')
    ap.add_argument('model', nargs=argparse.REMAINDER)
    args = ap.parse_args()
    model = [a for a in args.model if a != '--']
    so = {k: os.path.join(args.work, k + '.so') for k in ('a0', 'amax', 'ab')}
    must([args.tcc] + model + ['-o', so['a0']])
    must([args.tcc] + model + ['--remat=max', '-o', so['amax']])
    a0, s0 = plan(args, so['a0'])
    amax, smax = plan(args, so['amax'])
    print('PLAN: max recomputation arena %.0f%% of the plain one' % (100.0 * amax / a0))
    if not (amax < a0 and s0 == smax):
        sys.exit('FAILED: --remat=max did not shrink the arena (%d -> %d)' % (a0, amax))
    for op in args.count:
        print('RECOMPUTED %s: %d' % (op, count_ops(args, model + ['--remat=max'], op) -
                                     count_ops(args, model, op)))
    budget = s0 + (a0 + amax) // 2
    report = must([args.tcc] + model + ['--memory-budget=%d' % budget, '-o', so['ab'],
                                        '--report=memory'])
    ab, sb = plan(args, so['ab'])
    print('BUDGET: fits' if ab + sb <= budget < a0 + s0 else
          'BUDGET: FAILED %d + %d > %d' % (ab, sb, budget))
    if 'without recomputation' in report and re.search(r'recomputed \d+ value', report):
        print('REPORT: recomputation shown')
    losses0, params0 = train(args, so['a0'], 'a0')
    for name in ('ab', 'amax'):
        losses, params = train(args, so[name], name)
        same = losses == losses0 and params == params0 and len(losses) == 20
        print('%s: %s' % (name.upper(), 'same losses and parameters' if same else 'DIFFERENT'))
    # Well below --remat=max's plan: --remat=max is not always the smallest
    # plan (a partial recomputation can pack better), so just below it may fit.
    rc, out = run([args.tcc] + model + ['--memory-budget=%d' % (smax + amax * 3 // 4),
                                        '-o', os.path.join(args.work, 'no.so')])
    print('REFUSED: exit %d' % rc)
    print(out.strip())


if __name__ == '__main__':
    main()
