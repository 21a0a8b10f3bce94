#!/usr/bin/python3
"""check_emulation.py MODEL --tcc PATH --tcc-run PATH --work DIR [options] -- TCC_FLAGS...

Trains MODEL (.onnx or .tcc) twice from the same parameters and batches: as
a CPU artifact, and as a CUDA artifact (--target=cuda --cuda-emulation) run
by the runtime's emulated CUDA device (TCC_CUDA_DEVICE=emulated), which
executes the GPU kernels' host twins with their launch geometry, barriers,
shuffles and workgroup memory, and the library calls on the CPU's. Every
step's loss must agree within --tol (relative), and so must every trained
parameter (--param-tol, relative to the tensor's largest magnitude), and
so must the gradients' global norm of every step (tcc-run's grad_norm).
--no-params skips the parameters: Adam turns a gradient that is zero by
cancellation (a bias before batch norm, attention's key bias) into
full-size steps of its rounding noise, which a different summation order
(a GPU block reduction against a CPU loop) changes; its runs are compared
through their losses and gradient norms.

With --zoo, MODEL is a zoo model's folder (test/zoo/NAME): its model.onnx
with the weights regenerated from ref.json, ref.json's compile and run
flags (a tenth of the learning rate for a chaotic run, whose loss horizon
ends before its last step) and its stored batches.

--sensitivity (on with --zoo) measures how far rounding noise alone moves
the run: the CPU artifact trains once more from its parameters times
(1 + 1e-7 z), z standard normal; a step or tensor where that run has left the
CPU run by d (at that step or an earlier one) is held to max(tolerance, 10 d)
instead of the tolerance. A
chaotic model (batch norm over a handful of values, a high learning rate)
magnifies a different summation order within a few steps as much as it
magnifies that noise; a wrong kernel moves the first step already.

Batches come from --data DIR, or are generated (--random-data, numpy's
default_rng(0)): f32 inputs normal, integer inputs uniform in [0, --classes)
(class labels, token ids), per the artifact's `tcc-run --list`. Extra
tcc-run options (--lr, --init, ...) go after --run. Prints
  EMULATION <name>: OK|FAIL steps <n> losses <worst> params <worst> (<tensor>) cpu <ms> ms emulated <ms> ms
and exits 1 on a failure. Debian's python3 with numpy.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'zoo'))
import zoo_common as zc  # noqa: E402

DTYPES = {'f32': np.float32, 'f16': np.float16, 'i64': np.int64, 'i32': np.int32,
          'u8': np.uint8, 'bool': np.bool_, 'f64': np.float64}


def run(cmd, what, env=None):
    t = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if p.returncode != 0:
        tail = p.stdout.strip().splitlines()[-20:]
        raise RuntimeError('%s failed (exit %d): %s\n%s' % (what, p.returncode, ' '.join(cmd),
                                                           '\n'.join(tail)))
    return time.time() - t, p.stdout


def data_inputs(listing):
    """(name, dtype, shape) of each per-sample input in a --list output."""
    found = []
    for line in listing.splitlines():
        m = re.match(r'\s+input\s+(\S+)\s+(\w+)\[([\d,]*)\]\s+batch rows/sample', line)
        if m:
            shape = [int(d) for d in m.group(3).split(',') if d]
            found.append((m.group(1), m.group(2), shape))
    return found


def write_random_data(listing, steps, classes, out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    for name, dtype, shape in data_inputs(listing):
        shape = [shape[0] * steps] + shape[1:]
        np_type = DTYPES[dtype]
        if np.issubdtype(np_type, np.floating):
            value = rng.standard_normal(shape).astype(np_type)
        else:
            value = rng.integers(0, classes, size=shape).astype(np_type)
        np.save(os.path.join(out, name.replace('/', '_') + '.npy'), value)


def relative(a, b):
    """|a - b| relative to |a| (inf where either is missing or not finite)."""
    if a is None or b is None:
        return np.inf
    err = abs(a - b) / max(abs(a), 1e-12)
    return err if np.isfinite(err) else np.inf


def tensor_error(a, b):
    """The largest difference relative to A's largest finite magnitude; inf
    where a non-finite value (a mask's -inf) differs or B is missing."""
    if b is None or b.shape != a.shape:
        return np.inf
    finite = np.isfinite(a)
    if not np.array_equal(a[~finite], b[~finite], equal_nan=True) or not np.all(np.isfinite(b[finite])):
        return np.inf
    if not finite.any():
        return 0.0
    err = float(np.max(np.abs(a[finite] - b[finite])) / max(np.max(np.abs(a[finite])), 1e-12))
    return err if np.isfinite(err) else np.inf


def noise_bound(tolerance, noise):
    """TOLERANCE, or ten times a finite NOISE where that is larger."""
    return max(tolerance, 10 * noise) if np.isfinite(noise) else tolerance


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('model')
    ap.add_argument('--tcc', required=True)
    ap.add_argument('--tcc-run', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--name')
    ap.add_argument('--zoo', action='store_true')
    ap.add_argument('--launch', default='',
                    help='a command that runs tcc-run, e.g. mpirun -np 2 (data-parallel artifacts)')
    ap.add_argument('--steps', type=int, default=5)
    ap.add_argument('--data')
    ap.add_argument('--random-data', action='store_true')
    ap.add_argument('--classes', type=int, default=10)
    ap.add_argument('--tol', type=float, default=1e-5)
    ap.add_argument('--param-tol', type=float, default=1e-5)
    ap.add_argument('--no-params', action='store_true')
    ap.add_argument('--sensitivity', action='store_true')
    ap.add_argument('--cpu-flags', default='', help='tcc flags of the CPU compile only')
    ap.add_argument('--cuda-flags', default='',
                    help='tcc flags of the CUDA compile only (a --memory-budget that '
                         'includes the library workspace)')
    ap.add_argument('--run', nargs=argparse.REMAINDER, default=[],
                    help='tcc-run options (the tcc flags follow a --)')
    argv, tcc_flags = sys.argv[1:], []
    if '--' in argv:
        i = argv.index('--')
        argv, tcc_flags = argv[:i], argv[i + 1:]
    args = ap.parse_args(argv)
    run_flags = args.run
    name = args.name or os.path.splitext(os.path.basename(args.model.rstrip('/')))[0]
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    w = lambda f: os.path.join(args.work, f)  # noqa: E731
    data = args.data
    if args.zoo:
        zoo = os.path.dirname(os.path.abspath(args.model.rstrip('/')))
        ref = json.load(open(os.path.join(args.model, 'ref.json')))
        shutil.copyfile(os.path.join(args.model, 'model.onnx'), w('model.onnx'))
        zc.write_weights(ref['weights'], w(zc.WEIGHTS_FILE))
        args.model = w('model.onnx')
        tcc_flags = ref['tcc_flags'] + tcc_flags
        ref_run = list(ref['run_flags'])
        # A chaotic run (PyTorch's own fp32 curve leaves float64 before the
        # last step: the zoo's loss horizon) magnifies any difference in
        # summation order within a few steps: a tenth of its rate, as
        # check_zoo.py's precision mode.
        if ref.get('loss_horizon', ref['steps']) < ref['steps']:
            i = ref_run.index('--lr') + 1
            ref_run[i] = repr(float(ref_run[i]) / 10)
        run_flags = ref_run + run_flags
        args.sensitivity = True
        data = os.path.join(zoo, ref['data'])

    run([args.tcc, args.model, *tcc_flags, *args.cpu_flags.split(), '-o', w('cpu.so')],
        'compiling for the CPU')
    run([args.tcc, args.model, *tcc_flags, *args.cuda_flags.split(), '--target=cuda',
         '--cuda-emulation', '-o', w('cuda.so')], 'compiling for CUDA with host twins')
    if args.random_data:
        _, listing = run([args.tcc_run, w('cpu.so'), '--list'], 'listing the artifact')
        data = w('data')
        write_random_data(listing, args.steps, args.classes, data)
    env = dict(os.environ, TCC_CUDA_DEVICE='emulated')
    times = {}
    for kind in ('cpu', 'cuda'):
        cmd = args.launch.split() + [args.tcc_run, w(kind + '.so'), '--data', data, '--steps', str(args.steps),
               '--no-shuffle', '--metrics', w(kind + '.jsonl'),
               '--save', w(kind + '-trained.safetensors'), *run_flags]
        seconds, _ = run(cmd, 'training the %s artifact' % kind, env if kind == 'cuda' else None)
        times[kind] = 1000 * seconds / args.steps
    if args.sensitivity:
        zc.perturb_safetensors(w('cpu.safetensors'), w('perturbed.safetensors'))
        run(args.launch.split() + [args.tcc_run, w('cpu.so'), '--data', data, '--steps',
             str(args.steps), '--no-shuffle', '--metrics', w('perturbed.jsonl'), '--save',
             w('perturbed-trained.safetensors'), '--params', w('perturbed.safetensors'),
             *run_flags], 'training the CPU artifact from perturbed parameters')

    ok = True
    curve = lambda f: [json.loads(line) for line in open(w(f))]  # noqa: E731
    cpu, emu = curve('cpu.jsonl'), curve('cuda.jsonl')
    noise = curve('perturbed.jsonl') if args.sensitivity else cpu
    worst = {'loss': 0.0, 'grad_norm': 0.0}
    widened = 0
    if len(cpu) != len(emu) or len(cpu) != args.steps:
        print('MISMATCH: %d CPU steps, %d emulated' % (len(cpu), len(emu)))
        ok = False
    # The noise at a step is the largest separation of the perturbed run up
    # to it: two runs that have parted follow no common curve, and one
    # sample may pass close to the other at a later step by chance (zoo
    # mnasnet's losses: 1.4e-4 apart at step 3, 3.3e-5 at step 4).
    seen = {key: 0.0 for key in worst}
    for step, (x, y, z) in enumerate(zip(cpu, emu, noise), 1):
        for key in worst:
            if x.get(key) is None and y.get(key) is None:
                continue
            err = relative(x.get(key), y.get(key))
            d = relative(x.get(key), z.get(key))
            if np.isfinite(d):
                seen[key] = max(seen[key], d)
            bound = noise_bound(args.tol, seen[key])
            widened += bound > args.tol
            if not err <= bound:
                print('MISMATCH at step %d: %s CPU %r, emulated CUDA %r (relative %.2e, bound %.1e)'
                      % (step, key, x.get(key), y.get(key), err, bound))
                ok = False
            worst[key] = max(worst[key], err)
    a_params = zc.read_safetensors(w('cpu-trained.safetensors'), only=('F32',))
    b_params = zc.read_safetensors(w('cuda-trained.safetensors'), only=('F32',))
    n_params = (zc.read_safetensors(w('perturbed-trained.safetensors'), only=('F32',))
                if args.sensitivity else a_params)
    worst_param, worst_name = 0.0, '-'
    if args.no_params:
        a_params, worst_name = {}, 'not compared'
    for tensor, a in a_params.items():
        err = tensor_error(a, b_params.get(tensor))
        bound = noise_bound(args.param_tol, tensor_error(a, n_params.get(tensor)))
        widened += bound > args.param_tol
        if not err <= bound:
            print('MISMATCH: parameter %s after %d steps: relative %.2e (bound %.1e)'
                  % (tensor, args.steps, err, bound))
            ok = False
        if not err <= worst_param:
            worst_param, worst_name = err, tensor
    print('EMULATION %s: %s steps %d losses %.1e grad norms %.1e params %.1e (%s)%s '
          'cpu %.1f ms emulated %.1f ms'
          % (name, 'OK' if ok else 'FAIL', len(emu), worst['loss'], worst['grad_norm'],
             worst_param, worst_name,
             ' noise-widened bounds %d' % widened if args.sensitivity else '',
             times['cpu'], times['cuda']))
    return 0 if ok else 1


if __name__ == '__main__':
    try:
        sys.exit(main())
    except RuntimeError as e:
        print('EMULATION: FAIL %s' % e)
        sys.exit(1)
