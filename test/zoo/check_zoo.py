#!/usr/bin/python3
"""check_zoo.py MODEL_DIR --tcc PATH --tcc-run PATH --work DIR [--json OUT] [--precision bf16]

Checks that tcc trains one zoo model as PyTorch does (numpy only):
  1. regenerates WORK/weights.bin from MODEL_DIR/ref.json beside a copy of
     model.onnx and compiles it with ref.json's tcc_flags (timed);
  2. runs one step (--no-shuffle, batch 0) and compares each referenced tensor's
     update (saved - initial, float64) with the float64 PyTorch step, through
     zoo_common.update_error: within 1e-3;
  3. runs ref.json's 30 steps and compares every step's loss with PyTorch's
     fp32 losses: within 1e-3 relative up to the loss horizon (all steps
     unless PyTorch's own fp32 curve leaves its float64 curve by more than
     1e-4; later steps are reported only).
Prints one line per failing tensor or step, then
  ZOO <name>: OK|FAIL losses <worst> update <worst> (<tensor>) compile <s> s step <ms> ms
and exits 1 on a failure.

With --precision bf16 (or fp16) it trains ref.json's 30 steps twice, compiled
in fp32 and in that precision, at ref.json's learning rate (a tenth of it
where PyTorch's own fp32 run leaves float64 before the last step): every loss
finite, the 16-bit run's mean of the last 10 losses below its first loss and
within 5% of the fp32 run's, or, where PyTorch's own bf16 autocast run drifts
further from its fp32 run (test/zoo/bf16.json: chaotic runs that memorize a
few batches), within twice that drift. A chaotic model's drift depends on
its rounding (one run's is a noisy measure): a chaotic model (ref.json's
loss horizon ends before its last step) trains from CHAOTIC_STARTS starts
(the weights and copies times (1 + 1e-7 z)) in both precisions, the drift
is the one between the means over the starts, and the bound grows by
three standard errors of that drift (from the starts' scatter); where
bf16.json measured PyTorch from several starts, its drift is between its
own means.
Prints
  ZOO <name> <precision>: OK|FAIL lr <lr> drift <d> (bound <b>, PyTorch <p>[, <n> starts, standard error <se>]) step <n> loss <got> fp32 <ref> compile <s> s step <ms> ms
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as zc  # noqa: E402


def run(cmd, what):
    t = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        tail = p.stdout.strip().splitlines()[-20:]
        raise RuntimeError('%s failed (exit %d): %s\n%s' % (what, p.returncode, ' '.join(cmd), '\n'.join(tail)))
    return time.time() - t


PRECISION_TOLERANCE = 0.05  # a 16-bit run's late losses against fp32's
# Starts of a chaotic model's 16-bit check. With 4, one harmless change of
# summation order moved googlenet's drift 4.65% -> 5.05% and mobilenet_v2's
# (1 start) 4.69% -> 5.11%, where 8 starts measured 1.96% -> 2.31% and
# 2.66% -> 2.71% (docs/precision.md); the bound adds three standard errors
# of the drift of the means.
CHAOTIC_STARTS = 8


def load_bf16_reference():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'bf16.json')
    return json.load(open(path)) if os.path.exists(path) else {}


def compile_model(args, ref, work, flags, tag):
    """Compiles the model with FLAGS into WORK/train-TAG.so; returns (its path, seconds)."""
    so = os.path.join(work, 'train-%s.so' % tag)
    return so, run([args.tcc, os.path.join(work, 'model.onnx')] + ref['tcc_flags'] + flags +
                   ['-o', so], 'tcc')


def train(args, ref, so, lr, tag, params=None):
    """Trains artifact SO ref.json's steps at LR (from PARAMS, else its own
    parameters); returns (losses, step ms)."""
    zoo = os.path.dirname(os.path.abspath(args.model_dir.rstrip('/')))
    metrics = os.path.join(os.path.dirname(so), 'metrics-%s.jsonl' % tag)
    run_flags = list(ref['run_flags'])
    run_flags[run_flags.index('--lr') + 1] = repr(lr)
    t = run([args.tcc_run, so, '--data', os.path.join(zoo, ref['data']), '--no-shuffle',
             '--threads', str(args.threads)] + run_flags + (['--params', params] if params else []) +
            ['--steps', str(ref['steps']), '--metrics', metrics], 'tcc-run (%s)' % tag)
    return [json.loads(line)['loss'] for line in open(metrics)], 1000.0 * t / ref['steps']


def check_precision(args, ref, result):
    """The --precision mode: ref.json's steps of the 16-bit step against
    tcc's fp32 step, at ref.json's learning rate where PyTorch's fp32 run
    tracks float64 over all of them, else at a tenth of it (a chaotic run
    magnifies any rounding difference, 16-bit or not). A chaotic model
    trains from CHAOTIC_STARTS starts: its parameters, and copies of them
    times (1 + 1e-7 z), each in both precisions; the drift is then between
    the means over the starts."""
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    shutil.copyfile(os.path.join(args.model_dir, 'model.onnx'), os.path.join(work, 'model.onnx'))
    zc.write_weights(ref['weights'], os.path.join(work, zc.WEIGHTS_FILE))
    steps = ref['steps']
    lr = float(ref['run_flags'][ref['run_flags'].index('--lr') + 1])
    if ref.get('loss_horizon', steps) < steps:
        lr /= 10
    # PyTorch's own drift (test/zoo/bf16.json, make_bf16_reference.py):
    # a chaotic run drifts whatever rounds it.
    row = load_bf16_reference().get(ref['name'], {})
    torch_starts = len(row.get('fp32_last10_starts') or [])
    own = row.get('drift_starts') if torch_starts > 1 else row.get('drift_last10')
    starts = CHAOTIC_STARTS if ref.get('loss_horizon', steps) < steps else 1
    so32, _ = compile_model(args, ref, work, [], 'fp32')
    so16, result['compile_s'] = compile_model(args, ref, work, ['--precision=' + args.precision],
                                              args.precision)
    fp32, _ = train(args, ref, so32, lr, 'fp32')
    losses, result['step_ms'] = train(args, ref, so16, lr, args.precision)
    curves = [('fp32', fp32), (args.precision, losses)]
    for seed in range(1, starts):
        params = os.path.join(work, 'start-%d.safetensors' % seed)
        zc.perturb_safetensors(so32[:-len('.so')] + '.safetensors', params, seed)
        for tag, so in (('fp32', so32), (args.precision, so16)):
            curves.append(('%s start %d' % (tag, seed),
                           train(args, ref, so, lr, '%s-start%d' % (tag, seed), params)[0]))
    failures = []
    for tag, curve in curves:
        if len(curve) != steps or any(x is None or not np.isfinite(x) for x in curve):
            failures.append('%s losses: %d steps, not all finite: %s' % (tag, len(curve), curve))
    if failures:
        return failures
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    means32 = [zc.last10(c) for _, c in curves[0::2]]
    means16 = [zc.last10(c) for _, c in curves[1::2]]
    drift = zc.drift_of_means(means16, means32)
    bound = max(PRECISION_TOLERANCE, 2 * own) if own is not None else PRECISION_TOLERANCE
    # The means' own noise: a chaotic model's starts scatter (googlenet's
    # last-10 means by 5% of their mean), so their drift is known to its
    # standard error only, and the bound takes three of them.
    se = zc.drift_standard_error(means16, means32)
    bound += 3 * se
    result.update(step=steps, lr=lr, loss=losses[-1], fp32=fp32[-1], drift=drift, bound=bound,
                  torch_drift=own, starts=starts, se=se)
    if not zc.last10(losses) < losses[0]:
        failures.append('not learning: loss %.6g at step 1, %.6g over the last 10 steps'
                        % (losses[0], zc.last10(losses)))
    if not drift <= bound:
        failures.append('%s: the mean of the last 10 losses %.6g is %.2e from fp32\'s %.6g (bound %.2e%s)'
                        % (args.precision, mean(means16), drift, mean(means32), bound,
                           ', means over %d starts' % starts if starts > 1 else ''))
    return failures


def check(args, ref, result):
    zoo = os.path.dirname(os.path.abspath(args.model_dir.rstrip('/')))
    data = os.path.join(zoo, ref['data'])
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    onnx_path = os.path.join(work, 'model.onnx')
    shutil.copyfile(os.path.join(args.model_dir, 'model.onnx'), onnx_path)
    zc.write_weights(ref['weights'], os.path.join(work, zc.WEIGHTS_FILE))
    so = os.path.join(work, 'train.so')
    result['compile_s'] = run([args.tcc, onnx_path] + ref['tcc_flags'] + ['-o', so], 'tcc')

    common = [args.tcc_run, so, '--data', data, '--no-shuffle', '--threads', str(args.threads)] + ref['run_flags']
    failures = []

    # One step: the first update of every referenced tensor.
    saved = os.path.join(work, 'step1.safetensors')
    t1 = run(common + ['--steps', '1', '--save', saved, '--metrics', os.path.join(work, 'step1.jsonl')],
             'tcc-run (1 step)')
    after = zc.read_safetensors(saved)
    before = zc.initial_values(ref['weights'])
    worst = (0.0, '')
    for tname, stats in ref['updates'].items():
        if tname not in after:
            failures.append('%s: not in the saved parameters' % tname)
            worst = (float('inf'), tname)
            continue
        delta = after[tname] - before[tname].astype(np.float64)
        err = zc.update_error(zc.update_stats(tname, delta), stats, delta.size)
        # Where PyTorch's own fp32 step is further than the tolerance from
        # float64 (Adam on gradients that are zero by cancellation), the
        # reference cannot resolve 1e-3: tcc must then be as close as
        # PyTorch's fp32 step (within 1.5x + 1e-4), and it is counted.
        own = ref['torch_fp32_update_error'].get(tname, 0.0)
        if own > zc.TOLERANCE and err <= 1.5 * own + 1e-4:
            result['as_pytorch'] = result.get('as_pytorch', 0) + 1
            continue
        if not err <= zc.TOLERANCE:
            got = zc.update_stats(tname, delta)
            failures.append('update %s: error %.2e (l1 %.6e vs %.6e, max %.6e vs %.6e; PyTorch fp32 %.1e)'
                            % (tname, err, got['l1'], stats['l1'], got['max'], stats['max'],
                               ref['torch_fp32_update_error'].get(tname, float('nan'))))
        if not err <= worst[0]:
            worst = (err, tname)
    # A tensor the reference does not list (a PyTorch buffer exported as an
    # initializer, say, regenerated or inline in the ONNX file) must keep its
    # value: tcc must not train what PyTorch does not. Its starting value is
    # the regenerated one, else the one tcc compiled from the file.
    compiled = zc.read_safetensors(os.path.splitext(so)[0] + '.safetensors')
    for tname, value in after.items():
        if tname in ref['updates'] or tname in ref['excluded']:
            continue
        start = before[tname] if tname in before else compiled.get(tname)
        if start is None:
            continue
        if not np.array_equal(np.asarray(value).reshape(-1), np.asarray(start, dtype=np.float64).reshape(-1),
                              equal_nan=True):
            failures.append('%s: changed by the step, but PyTorch does not train it' % tname)
            worst = (float('inf'), tname)
    result['update_error'], result['update_tensor'] = worst

    # The whole run: every step's loss.
    metrics = os.path.join(work, 'metrics.jsonl')
    tn = run(common + ['--steps', str(ref['steps']), '--metrics', metrics], 'tcc-run (%d steps)' % ref['steps'])
    result['step_ms'] = 1000.0 * max(tn - t1, 0.0) / max(ref['steps'] - 1, 1)
    losses = [json.loads(line)['loss'] for line in open(metrics)]
    if len(losses) != len(ref['losses']):
        failures.append('losses: %d steps, the reference has %d' % (len(losses), len(ref['losses'])))
    # Steps past the loss horizon (where PyTorch's own fp32 curve has left
    # its float64 curve by more than 1e-4: chaotic training) are reported,
    # not held to the tolerance.
    horizon = ref.get('loss_horizon', len(ref['losses']))
    worst_loss, worst_after = 0.0, 0.0
    for step, (g, r) in enumerate(zip(losses, ref['losses']), 1):
        err = abs(g - r) / abs(r)
        if err != err:
            err = float('inf')
        if step > horizon:
            worst_after = max(worst_after, err)
            continue
        if not err <= zc.TOLERANCE:
            failures.append('loss step %d: tcc %.7g PyTorch %.7g (relative %.2e)' % (step, g, r, err))
        worst_loss = max(worst_loss, err)
    result['loss_error'] = worst_loss
    result['loss_horizon'] = horizon
    result['loss_error_after_horizon'] = worst_after if horizon < len(ref['losses']) else None
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('model_dir')
    ap.add_argument('--tcc', required=True)
    ap.add_argument('--tcc-run', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--json')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--precision', choices=['bf16', 'fp16'],
                    help='train in this precision and compare the losses with fp32')
    args = ap.parse_args()
    with open(os.path.join(args.model_dir, 'ref.json')) as f:
        ref = json.load(f)
    name = ref['name']
    result = {'name': name, 'source': ref['source'], 'ops': ref['ops'], 'params': ref['params'],
              'torch_fp32_update_error': max(ref['torch_fp32_update_error'].values(), default=0.0),
              'torch_fp32_loss_error': ref.get('torch_fp32_loss_error'), 'excluded': len(ref['excluded'])}
    if args.precision:
        try:
            failures = check_precision(args, ref, result)
        except RuntimeError as e:
            failures = [str(e)]
        for line in failures:
            print(line)
        own = result.get('torch_drift')
        print('ZOO %s %s: %s lr %g drift %.2e (bound %.2e, PyTorch %s%s) step %d loss %.6g fp32 %.6g '
              'compile %.1f s step %.0f ms'
              % (name, args.precision, 'FAIL' if failures else 'OK', result.get('lr', float('nan')),
                 result.get('drift', float('nan')), result.get('bound', float('nan')),
                 '%.2e' % own if own is not None else '-',
                 ', %d starts, standard error %.2e' % (result['starts'], result.get('se', 0.0))
                 if result.get('starts', 1) > 1 else '',
                 result.get('step', 0),
                 result.get('loss', float('nan')), result.get('fp32', float('nan')),
                 result.get('compile_s', 0.0), result.get('step_ms', 0.0)))
        if args.json:
            with open(args.json, 'w') as f:
                json.dump(result, f, indent=1)
        sys.exit(1 if failures else 0)
    try:
        failures = check(args, ref, result)
    except RuntimeError as e:
        failures = None
        result['error'] = str(e)
    if failures is None:
        print(result['error'])
        print('ZOO %s: FAIL %s' % (name, result['error'].splitlines()[0]))
    else:
        for line in failures:
            print(line)
        horizon = ''
        if result['loss_error_after_horizon'] is not None:
            horizon = '; losses checked over the first %d steps (after: %.1e; PyTorch fp32 vs float64: %.1e)' % (
                result['loss_horizon'], result['loss_error_after_horizon'], ref['torch_fp32_loss_error'])
        if result.get('as_pytorch'):
            horizon += '; %d tensor update(s) only as close as PyTorch fp32 (which is off by more than 1e-3)' % result['as_pytorch']
        print('ZOO %s: %s losses %.1e update %.1e (%s)%s compile %.1f s step %.0f ms'
              % (name, 'FAIL' if failures else 'OK', result['loss_error'], result['update_error'],
                 result['update_tensor'], horizon, result['compile_s'], result['step_ms']))
        result['failures'] = len(failures)
    result['ok'] = failures == []
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(result, f, indent=1)
    sys.exit(0 if result['ok'] else 1)


if __name__ == '__main__':
    main()
