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
flags and its stored batches.

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
import struct
import subprocess
import sys
import time

import numpy as np

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


def read_safetensors(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n))
        body = f.read()
    tensors = {}
    for name, info in header.items():
        if name == '__metadata__' or info['dtype'] != 'F32':
            continue
        begin, end = info['data_offsets']
        tensors[name] = np.frombuffer(body[begin:end], np.float32).astype(np.float64)
    return tensors


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
        sys.path.insert(0, zoo)
        import zoo_common as zc  # noqa: E402
        ref = json.load(open(os.path.join(args.model, 'ref.json')))
        shutil.copyfile(os.path.join(args.model, 'model.onnx'), w('model.onnx'))
        zc.write_weights(ref['weights'], w(zc.WEIGHTS_FILE))
        args.model = w('model.onnx')
        tcc_flags = ref['tcc_flags'] + tcc_flags
        run_flags = ref['run_flags'] + run_flags
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
               '--save', w(kind + '.safetensors'), *run_flags]
        seconds, _ = run(cmd, 'training the %s artifact' % kind, env if kind == 'cuda' else None)
        times[kind] = 1000 * seconds / args.steps

    ok = True
    cpu = [json.loads(line) for line in open(w('cpu.jsonl'))]
    emu = [json.loads(line) for line in open(w('cuda.jsonl'))]
    worst = {'loss': 0.0, 'grad_norm': 0.0}
    if len(cpu) != len(emu) or len(cpu) != args.steps:
        print('MISMATCH: %d CPU steps, %d emulated' % (len(cpu), len(emu)))
        ok = False
    for step, (x, y) in enumerate(zip(cpu, emu), 1):
        for key in worst:
            if x.get(key) is None and y.get(key) is None:
                continue
            a, b = x.get(key), y.get(key)
            err = abs(a - b) / max(abs(a), 1e-12) if a is not None and b is not None else np.inf
            if not np.isfinite(err) or err > args.tol:
                print('MISMATCH at step %d: %s CPU %r, emulated CUDA %r (relative %.2e)'
                      % (step, key, a, b, err))
                ok = False
            worst[key] = max(worst[key], err if np.isfinite(err) else np.inf)
    a_params, b_params = read_safetensors(w('cpu.safetensors')), read_safetensors(w('cuda.safetensors'))
    worst_param, worst_name = 0.0, '-'
    if args.no_params:
        a_params, worst_name = {}, 'not compared'
    for tensor, a in a_params.items():
        b = b_params.get(tensor)
        if b is None or b.shape != a.shape:
            print('MISMATCH: parameter %s missing or reshaped in the emulated run' % tensor)
            ok = False
            continue
        err = float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-12)) if a.size else 0.0
        if not np.isfinite(err) or err > args.param_tol:
            print('MISMATCH: parameter %s after %d steps: relative %.2e' % (tensor, args.steps, err))
            ok = False
        if err > worst_param or not np.isfinite(err):
            worst_param, worst_name = err, tensor
    print('EMULATION %s: %s steps %d losses %.1e grad norms %.1e params %.1e (%s) '
          'cpu %.1f ms emulated %.1f ms'
          % (name, 'OK' if ok else 'FAIL', len(emu), worst['loss'], worst['grad_norm'],
             worst_param, worst_name, times['cpu'], times['cuda']))
    return 0 if ok else 1


if __name__ == '__main__':
    try:
        sys.exit(main())
    except RuntimeError as e:
        print('EMULATION: FAIL %s' % e)
        sys.exit(1)
