#!/usr/bin/python3
"""make_bf16_reference.py - PyTorch's own bf16 drift on the zoo (test/zoo/bf16.json).

How far PyTorch's mixed precision (torch.autocast('cpu', torch.bfloat16)
around the forward and the loss, fp32 parameters and optimizer) moves a
zoo model's 30-step run from its fp32 run, at the learning rate that
check_zoo.py --precision uses (ref.json's, a tenth of it where PyTorch's fp32
run leaves float64 early), from ref.json's initial weights, on the batches
tcc-run --no-shuffle reads. A 16-bit run of a chaotic one (batch norm, a few
batches memorized) drifts from fp32 however it rounds; check_zoo.py holds
tcc's bf16 run to 5% of its fp32 run or to twice PyTorch's own drift, whichever is
larger (a model whose autocast this PyTorch cannot run records the error
instead, and is held to 5%). A chaotic model's drift is itself a random
variable: one run's value depends on its rounding, so for a model whose
loss horizon ends before its last step the drift is measured from STARTS
starts, ref.json's weights and copies of them times (1 + 1e-7 z) (z
standard normal, seeds 1, 2, ...): `fp32_last10_starts` and
`bf16_last10_starts` hold each start's mean of the last 10 losses, and
`drift_starts` the drift between their means, which check_zoo.py holds tcc
to (it trains from the same starts). Run with Debian's python3 (python3-torch 1.13) from the repository
root:

    /usr/bin/python3 test/zoo/make_bf16_reference.py [MODEL ...]   (default: all)

The dynamo_* models (make_zoo_dynamo.py) need PyTorch 2.x: run those with the
dynamo generator's venv (test/zoo/setup_dynamo.sh), e.g.

    /opt/tcc/zoo-dynamo-venv/bin/python test/zoo/make_bf16_reference.py dynamo_resnet18
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, 'bench'))
import train_bench as tb  # noqa: E402
import zoo_common as zc  # noqa: E402

OUT = os.path.join(HERE, 'bf16.json')


def precision_lr(ref):
    """check_zoo.py --precision's learning rate for REF."""
    lr = float(ref['run_flags'][ref['run_flags'].index('--lr') + 1])
    return lr / 10 if ref.get('loss_horizon', ref['steps']) < ref['steps'] else lr


def last10_drift(low, fp32):
    return zc.drift_of_means([zc.last10(low)], [zc.last10(fp32)])


STARTS = 4  # a chaotic model's starts: ref.json's weights and 3 perturbed copies


def start_weights(weights, seed):
    """Start SEED: WEIGHTS (seed 0), else their f32 tensors times (1 + 1e-7 z),
    z from default_rng(SEED)."""
    if seed == 0:
        return weights
    rng = np.random.default_rng(seed)
    return {k: zc.perturbed(v, rng) if v.dtype == np.float32 else v for k, v in weights.items()}


def measure(name):
    ref = tb.MODELS[name]['zoo']
    starts = STARTS if ref.get('loss_horizon', ref['steps']) < ref['steps'] else 1
    row = measure_from(name, 0)
    if starts > 1 and 'error' not in row:
        rows = [row] + [measure_from(name, seed) for seed in range(1, starts)]
        for key in ('fp32', 'bf16'):
            row[key + '_last10_starts'] = [zc.last10(r[key]) for r in rows]
        row['drift_starts'] = zc.drift_of_means(row['bf16_last10_starts'], row['fp32_last10_starts'])
    return row


def measure_from(name, seed):
    """PyTorch's fp32 and bf16 curves of NAME from start SEED."""
    cfg = dict(tb.MODELS[name])
    ref = cfg['zoo']
    steps, lr = ref['steps'], precision_lr(ref)
    cfg['zoo'] = dict(ref, optimizer=dict(ref['optimizer'], lr=lr))
    weights = start_weights(zc.initial_values(ref['weights']), seed)
    x = np.load(os.path.join(cfg['data'], cfg['input'] + '.npy'))
    y = np.load(os.path.join(cfg['data'], 'y.npy'))
    b, n = cfg['batch'], len(x) // cfg['batch']
    data = [(np.ascontiguousarray(x[(i % n) * b:(i % n + 1) * b]),
             np.ascontiguousarray(y[(i % n) * b:(i % n + 1) * b])) for i in range(steps)]
    curves = {}
    for bf16 in (False, True):
        engine = tb.TorchEngine(name, cfg, weights, data, ref['optimizer']['kind'], lr, bf16=bf16)
        try:
            curves[bf16] = [engine.step(k) for k in range(steps)]
        except RuntimeError as e:  # an autocast this PyTorch cannot run: no yardstick
            return dict(lr=lr, error='%s: %s' % ('bf16' if bf16 else 'fp32', str(e).splitlines()[0]))
    return dict(lr=lr, fp32=curves[False], bf16=curves[True],
                drift_last10=last10_drift(curves[True], curves[False]))


def main():
    import torch
    torch.manual_seed(0)
    names = sys.argv[1:] or [n for n in tb.ZOO_NAMES if not n.startswith('dynamo_')]
    table = json.load(open(OUT)) if os.path.exists(OUT) else {}
    for name in names:
        table[name] = measure(name)
        table[name]['torch'] = torch.__version__
        row = table[name]
        drift = row['error'] if 'error' in row else '%.2e' % row['drift_last10']
        if 'drift_starts' in row:
            drift += ' (from %d starts: %.2e)' % (len(row['fp32_last10_starts']), row['drift_starts'])
        print('%-14s lr %-8g PyTorch bf16 vs fp32, mean of the last 10 losses: %s'
              % (name, row['lr'], drift), flush=True)
        with open(OUT, 'w') as f:
            json.dump(table, f, indent=1, sort_keys=True)


if __name__ == '__main__':
    main()
