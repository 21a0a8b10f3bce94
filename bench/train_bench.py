#!/usr/bin/env python3
"""train_bench.py - one training step: tcc against PyTorch eager and JAX jit.

For each model it measures, in this one process, the median time of one
training step (forward, mean cross-entropy, backward, optimizer update) of:

  tcc           the model's ONNX compiled by tcc --loss=cross_entropy
                --optimizer=... into a .so, run by libtcc_runtime (ctypes):
                set the inputs, run train_step, copy the loss out;
  tcc-nofusion  the same with tcc --fusion=none, when tcc has that flag;
  torch         PyTorch eager (Debian's 1.13): forward, F.cross_entropy,
                backward, optimizer.step, zero_grad(set_to_none=True);
  torch-compile the same step with the model under torch.compile (PyTorch 2.x,
                inductor's CPU backend; its compile falls in the warm-up);
  jax           the model in jax.numpy (bench/train_jax.py), the whole step
                under jax.jit with the parameters and optimizer state donated
                (XLA CPU);
  tcc-bf16, torch-bf16, torch-compile-bf16
                mixed precision: tcc --precision=bf16 (16-bit matmuls and
                activations, f32 master weights and optimizer), and PyTorch's
                forward and loss under torch.autocast('cpu', torch.bfloat16);
  tcc-fp16, torch-fp16, torch-compile-fp16
                the same in fp16 (tcc's loss scaling inside the step;
                PyTorch's autocast('cpu', torch.float16), no scaler).

--channels-last runs PyTorch's CNNs (4-D inputs) in channels_last memory
format, as its users run CNNs in bf16. --flops adds each engine's achieved
GFLOP/s (the step's FLOPs counted once by torch.utils.flop_counter on the
fp32 PyTorch step, forward and backward) and the machine's own fp32 and bf16
GEMM rates (torch.matmul of 1024^3 at the run's thread count, best of 20)
measured in the same run; it needs PyTorch 2.x.

Models: the three parity models of test/parity (mlp, cnn_bn, gpt; batch 16,
SGD with momentum 0.9 at the parity tests' rates), gpt4, a 4-layer GPT
(d=256, 4 heads, sequence 128, vocabulary 512, batch 16) with AdamW, which
bench/export_train_models.py exports, and the zoo's CNNs resnet18 and
mobilenet_v2 (test/zoo: the committed ONNX with its regenerated weights,
ref.json's optimizer and flags, the zoo's images, batch 16; torch builds
the same torchvision model; no jax). Every engine starts from the same
weights (the ONNX initializers, read from the model.safetensors tcc writes
beside its .so) and steps through the same batches (the parity data in the
parity tests' order; seeded random tokens for gpt4). The first losses of the
engines must agree (same weights, same batch): a mismatch is flagged.

Run it through bench/train.sh, which sets up bench/.venv-train (Debian's
python3 and python3-torch, pip's jax) and the thread environment.
"""

import os
import sys

# Before numpy and jax are imported: numpy only prepares batches, so its
# OpenBLAS threads must not spin on the cores the engines are timed on.
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import argparse  # noqa: E402
import ctypes  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, 'scripts', 'parity'))

import tcc_runtime  # noqa: E402
from export_train_models import GPT4, GPT4_BATCH  # noqa: E402

PARITY = os.path.join(ROOT, 'test', 'parity')
ZOO = os.path.join(ROOT, 'test', 'zoo')

# name: ONNX, input name, optimizer and rate (the parity tests' for SGD), data.
MODELS = {
    'mlp': dict(onnx=os.path.join(PARITY, 'mlp', 'model.onnx'), input='x', batch=16,
                optimizer='sgd', lr=0.05, data=os.path.join(PARITY, 'mlp', 'data')),
    'cnn_bn': dict(onnx=os.path.join(PARITY, 'cnn_bn', 'model.onnx'), input='x', batch=16,
                   optimizer='sgd', lr=0.02, data=os.path.join(PARITY, 'cnn_bn', 'data')),
    'gpt': dict(onnx=os.path.join(PARITY, 'gpt', 'model.onnx'), input='tokens', batch=16,
                optimizer='sgd', lr=0.1, data=os.path.join(PARITY, 'gpt', 'data'), heads=2),
    'gpt4': dict(onnx=None, input='tokens', batch=GPT4_BATCH, optimizer='adamw', lr=1e-3,
                 data=None, heads=GPT4['heads']),
}
# Every model of the zoo (test/zoo/NAME/ref.json: batch, optimizer, flags,
# data, input): PyTorch builds it with test/zoo/make_zoo.py's constructor and
# loads the weights tcc read from the zoo's regenerated weights.bin, so every
# engine starts from the same weights.
ZOO_NAMES = sorted(d for d in os.listdir(ZOO) if os.path.exists(os.path.join(ZOO, d, 'ref.json')))
for _name in ZOO_NAMES:
    with open(os.path.join(ZOO, _name, 'ref.json')) as _f:
        _ref = json.load(_f)
    MODELS[_name] = dict(onnx=None, zoo=_ref, input=_ref['inputs'][0], batch=_ref['batch'],
                         optimizer=_ref['optimizer']['kind'], lr=_ref['optimizer']['lr'],
                         data=os.path.join(ZOO, _ref['data']))
# The GPT-2-small shape of issue 19 (12 layers, d 768, 12 heads, vocabulary
# 50304, sequence 64, batch 4, AdamW): examples/gpt.tcc with its own head
# (TIED=0), the parity GPT's architecture, which PyTorch runs as
# scripts/parity/make_references.py's GPT from the weights tcc drew.
GPT2S = dict(vocab=50304, d=768, heads=12, layers=12, t=64)
MODELS['gpt2s'] = dict(onnx=os.path.join(ROOT, 'examples', 'gpt.tcc'), input='tokens', batch=4,
                       optimizer='adamw', lr=1e-4, data=None, heads=GPT2S['heads'], gpt=GPT2S,
                       flags=['--dim=L=12', '--dim=D=768', '--dim=H=12', '--dim=V=50304',
                              '--dim=T=64', '--dim=TIED=0'])
GROUPS = {'zoo': ZOO_NAMES, 'bench': ['mlp', 'cnn_bn', 'gpt', 'gpt4'],
          'all': ['mlp', 'cnn_bn', 'gpt', 'gpt4', 'gpt2s'] + ZOO_NAMES}
ENGINES = ['tcc', 'tcc-nofusion', 'torch', 'torch-compile', 'jax', 'tcc-bf16', 'torch-bf16',
           'torch-compile-bf16', 'tcc-fp16', 'torch-fp16', 'torch-compile-fp16']
HALF_LOSS_RTOL = 5e-2  # a 16-bit engine's first losses against the fp32 reference


def half_of(e):
    """The 16-bit type engine E computes in ('bf16', 'fp16'), or None."""
    return next((t for t in ('bf16', 'fp16') if e.endswith('-' + t)), None)
NUM_BATCHES = 4  # the engines cycle through these batches
LOSS_STEPS = 3  # first losses compared across engines
LOSS_RTOL_FIRST, LOSS_RTOL_LATER = 1e-4, 1e-3


def log(*args):
    print('bench/train:', *args, file=sys.stderr, flush=True)


# --- data and weights -------------------------------------------------------

def batches(name, cfg):
    """NUM_BATCHES (input, labels) pairs of the model's batch size."""
    b = cfg['batch']
    if cfg['data']:
        x = np.load(os.path.join(cfg['data'], cfg['input'] + '.npy'))
        y = np.load(os.path.join(cfg['data'], 'y.npy'))
        return [(np.ascontiguousarray(x[i * b:(i + 1) * b]), np.ascontiguousarray(y[i * b:(i + 1) * b]))
                for i in range(NUM_BATCHES)]
    shape = cfg.get('gpt', GPT4)
    rng = np.random.default_rng(0)
    seqs = rng.integers(0, shape['vocab'], (NUM_BATCHES * b, shape['t'] + 1), dtype=np.int64)
    return [(np.ascontiguousarray(seqs[i * b:(i + 1) * b, :-1]), np.ascontiguousarray(seqs[i * b:(i + 1) * b, 1:]))
            for i in range(NUM_BATCHES)]


def read_safetensors(path):
    """{name: array in its stored type} of a safetensors file (the parameters
    tcc writes beside its artifact: the ONNX initializers)."""
    sys.path.insert(0, ZOO)
    import zoo_common  # noqa: E402
    return zoo_common.read_safetensors(path, native=True)


# --- engines ----------------------------------------------------------------

def zoo_onnx(cfg, mdir):
    """A zoo model's ONNX beside its regenerated weights.bin, in MDIR."""
    sys.path.insert(0, ZOO)
    import shutil
    import zoo_common
    onnx = os.path.join(mdir, 'model.onnx')
    shutil.copyfile(os.path.join(ZOO, cfg['zoo']['name'], 'model.onnx'), onnx)
    zoo_common.write_weights(cfg['zoo']['weights'], os.path.join(mdir, zoo_common.WEIGHTS_FILE))
    return onnx


def tcc_compile(tcc, onnx, out_so, cfg, optimizer, extra):
    cmd = [tcc, onnx, '--batch=%d' % cfg['batch']]
    if cfg.get('zoo'):
        cmd += cfg['zoo']['tcc_flags']
    else:
        cmd += ['--loss=cross_entropy', '--optimizer=' + optimizer] + cfg.get('flags', [])
        if optimizer == 'sgd':
            cmd.append('--momentum=0.9')
    cmd += extra + ['-o', out_so]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError('tcc failed (%s): %s' % (' '.join(cmd), (r.stderr or r.stdout).strip()[:2000]))
    return time.perf_counter() - t0


class TccEngine:
    def __init__(self, rt, so_path, cfg, data, lr, threads):
        self.artifact = rt.load(so_path)
        t0 = time.perf_counter()
        self.session = self.artifact.session(num_threads=threads)
        self.session_s = time.perf_counter() - t0
        ins = {t.name: t for t in self.artifact.entry_inputs('train_step')}
        labels = self.artifact.metadata('labels') or 'y'
        self.lr = np.array(lr, ins['lr'].dtype)
        self.t = np.array(1, ins['step'].dtype) if 'step' in ins else None
        self.rng = np.array([0, 0], np.int64) if 'rng' in ins else None
        # fp16: the loss scale of a fresh session, tcc-run's (and GradScaler's) default.
        self.scale = (np.array(65536.0, ins['loss_scale_init'].dtype)
                      if 'loss_scale_init' in ins else None)
        self.steps = []
        for x, y in data:
            feeds = {cfg['input']: x, labels: y, 'lr': self.lr}
            if self.t is not None:
                feeds['step'] = self.t
            if self.rng is not None:
                feeds['rng'] = self.rng
            if self.scale is not None:
                feeds['loss_scale_init'] = self.scale
            # The optimizer's hyperparameters run at their compile-time
            # values (the session writes them when they are not set).
            unknown = {n for n in set(ins) - set(feeds)
                       if self.artifact.metadata('default.' + n) is None
                       and n not in ('one_minus_beta1', 'one_minus_beta2')}
            if unknown:
                raise RuntimeError('train_step reads inputs the benchmark does not know: %s' % sorted(unknown))
            self.steps.append(self.session.prepare(feeds, 'train_step', outputs=['loss']))
        self.arena, self.state = self.artifact.arena_size, self.artifact.state_size

    def step(self, k):
        if self.t is not None:
            self.t[()] = k + 1
        if self.rng is not None:
            self.rng[1] = k
        bound = self.steps[k % len(self.steps)]
        bound()
        return float(bound.outputs['loss'])

    def close(self):
        self.session.close()
        self.artifact.close()


class TorchEngine:
    def __init__(self, name, cfg, weights, data, optimizer, lr, compile=False, half=None,
                 channels_last=False):
        import torch
        import torch.nn.functional as F
        import make_references as mr
        self.torch, self.F = torch, F
        if cfg.get('zoo') and name.startswith('dynamo_'):
            # The zoo's exports by PyTorch 2.x's dynamo exporter (PyTorch 2.x only).
            sys.path.insert(0, ZOO)
            import make_zoo_dynamo
            model = make_zoo_dynamo.MODELS[name[len('dynamo_'):]][0]()
        elif cfg.get('zoo'):
            sys.path.insert(0, ZOO)
            import make_zoo
            model = make_zoo.MODELS[name][0]()
        elif name == 'mlp':
            model = mr.MLP()
        elif name == 'cnn_bn':
            model = mr.CNN()
        elif name == 'gpt':
            model = mr.GPT()
        else:
            model = mr.GPT(**cfg.get('gpt', GPT4))
        state = {k: torch.from_numpy(v.copy()) for k, v in weights.items()}
        # Module versions (torchvision's MNASNet reads its own) as the
        # model's own state_dict has them.
        state = type(model.state_dict())(state)
        state._metadata = getattr(model.state_dict(), '_metadata', None)
        missing, unexpected = model.load_state_dict(state, strict=False)
        # Buffers that are not ONNX initializers: the causal mask, BN's
        # counter, Hugging Face's position ids and rotary tables; a tied
        # head's second name.
        # A tied parameter is loaded when any of its names is.
        # (named_modules, not named_parameters(remove_duplicate=False),
        # which PyTorch 1.13 lacks.)
        aliases = {}
        for prefix, module in model.named_modules(remove_duplicate=False):
            for n, p in module._parameters.items():
                if p is not None:
                    aliases.setdefault(id(p), []).append(prefix + '.' + n if prefix else n)
        loaded = {n for names in aliases.values() for n in names if any(a in state for a in names)}
        params = {n for names in aliases.values() for n in names}
        missing = [k for k in missing if k in params and k not in loaded and not k.endswith('.future')]
        if missing or unexpected:
            raise RuntimeError('torch state_dict vs tcc: missing %s, unexpected %s' % (missing, unexpected))
        model.train()
        self.channels_last = channels_last and data[0][0].ndim == 4
        if self.channels_last:
            model = model.to(memory_format=torch.channels_last)
        # autocast's 16-bit type, or None for fp32.
        self.half = {'bf16': torch.bfloat16, 'fp16': torch.float16}.get(half)
        self.model = torch.compile(model) if compile else model
        if cfg.get('zoo'):
            kw = dict(cfg['zoo']['optimizer'])
            cls = {'sgd': torch.optim.SGD, 'adam': torch.optim.Adam, 'adamw': torch.optim.AdamW}[kw.pop('kind')]
            self.opt = cls(model.parameters(), **kw)
        elif optimizer == 'sgd':
            self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        else:
            self.opt = torch.optim.AdamW(model.parameters(), lr=lr)
        self.data = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in data]
        if self.channels_last:
            self.data = [(x.contiguous(memory_format=torch.channels_last), y) for x, y in self.data]

    def loss(self, k):
        x, y = self.data[k % len(self.data)]
        with self.torch.autocast('cpu', dtype=self.half or self.torch.bfloat16,
                                 enabled=self.half is not None):
            out = self.model(x)
            # Hugging Face: a tuple, or (transformers 5) a ModelOutput, whose
            # first field is the logits.
            logits = out if isinstance(out, self.torch.Tensor) else out[0]
            return self.F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    def step(self, k):
        loss = self.loss(k)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        return loss.item()

    def flops(self):
        """The FLOPs of one step's forward and backward (an untimed step;
        the optimizer's update is not counted)."""
        from torch.utils.flop_counter import FlopCounterMode
        counter = FlopCounterMode(display=False)
        with counter:
            self.loss(0).backward()
        self.opt.zero_grad(set_to_none=True)
        return counter.get_total_flops()

    def close(self):
        pass


def gemm_rates(torch, threads):
    """GFLOP/s of torch.matmul on 1024^3 in fp32 and bf16 at THREADS, the
    best of 20 (a shared machine's load only slows it down): the machine's
    own rate, for the achieved rates beside it."""
    rates = {}
    for dtype in (torch.float32, torch.bfloat16):
        a = torch.randn(1024, 1024).to(dtype)
        b = torch.randn(1024, 1024).to(dtype)
        for _ in range(3):
            torch.matmul(a, b)
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            torch.matmul(a, b)
            times.append(time.perf_counter() - t0)
        rates[str(dtype).replace('torch.', '')] = 2 * 1024 ** 3 / min(times) / 1e9
    return rates


class JaxEngine:
    def __init__(self, name, cfg, weights, data, optimizer, lr):
        import jax
        import jax.numpy as jnp
        import train_jax as tj
        self.jnp = jnp
        buffers = {k: v for k, v in weights.items() if '.running_' in k}
        params = {k: v for k, v in weights.items() if k not in buffers}
        forward = {'mlp': tj.mlp, 'cnn_bn': tj.cnn_bn}.get(name)
        if forward is None:
            heads = cfg['heads']
            forward = lambda p, b, x: tj.gpt(p, b, x, heads)  # noqa: E731
        self.params = {k: jnp.asarray(v) for k, v in params.items()}
        self.buffers = {k: jnp.asarray(v) for k, v in buffers.items()}
        self.opt_state = tj.init_opt_state(optimizer, self.params)
        self.fn = tj.make_step(forward, optimizer)
        self.lr = jnp.asarray(lr, jnp.float32)
        self.data = [(jax.device_put(x), jax.device_put(y)) for x, y in data]
        self.ts = {}

    def step(self, k):
        x, y = self.data[k % len(self.data)]
        t = self.ts.get(k)
        if t is None:
            t = self.ts[k] = self.jnp.asarray(k + 1, self.jnp.float32)
        self.params, self.buffers, self.opt_state, loss = self.fn(
            self.params, self.buffers, self.opt_state, x, y, self.lr, t)
        return float(loss)  # waits for the step

    def close(self):
        pass


# --- measurement ------------------------------------------------------------

def percentile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def measure(engines, args):
    """Warm-up, then timed blocks interleaved across engines, each block
    after a pause (spinning workers of the previous engine go to sleep) and
    one untimed step. Returns {engine: record}."""
    rec = {e: dict(times=[], losses=[], cpu=0.0, wall=0.0, first_step_s=None) for e in engines}
    k = {e: 0 for e in engines}
    for e, eng in engines.items():
        time.sleep(args.pause)
        for _ in range(args.warmup):
            t0 = time.perf_counter()
            loss = eng.step(k[e])
            if rec[e]['first_step_s'] is None:
                rec[e]['first_step_s'] = time.perf_counter() - t0  # JAX: includes jit compile
            rec[e]['losses'].append(loss)
            k[e] += 1
    remaining = {e: args.iters for e in engines}
    while any(remaining.values()):
        for e, eng in engines.items():
            n = min(args.block, remaining[e])
            if n == 0:
                continue
            time.sleep(args.pause)
            eng.step(k[e])
            k[e] += 1
            c0, w0 = time.process_time(), time.perf_counter()
            for _ in range(n):
                t0 = time.perf_counter_ns()
                loss = eng.step(k[e])
                rec[e]['times'].append((time.perf_counter_ns() - t0) / 1e6)
                k[e] += 1
            rec[e]['cpu'] += time.process_time() - c0
            rec[e]['wall'] += time.perf_counter() - w0
            if not np.isfinite(loss):
                raise RuntimeError('%s: non-finite loss %r at step %d' % (e, loss, k[e]))
            remaining[e] -= n
    for e, r in rec.items():
        t = r['times']
        r.update(median=statistics.median(t), p10=percentile(t, 0.1), p90=percentile(t, 0.9),
                 min=min(t), mean=statistics.fmean(t), steps=k[e],
                 cores=(r['cpu'] / r['wall']) if r['wall'] >= 0.2 else None)
    return rec


def loss_check(rec):
    """Compares the first LOSS_STEPS losses of every engine with torch's (or
    tcc's without torch): '' when they agree, else a warning."""
    ref_name = 'torch' if 'torch' in rec else 'tcc'
    if ref_name not in rec:
        return '', {}
    ref = rec[ref_name]['losses'][:LOSS_STEPS]
    warnings, diffs = [], {}
    for e, r in rec.items():
        if e == ref_name:
            continue
        # fp16 with loss scaling: a first step that overflows at the initial
        # scale is skipped (GradScaler's rule), so only step 1 compares.
        got = r['losses'][:1 if e == 'tcc-fp16' else LOSS_STEPS]
        rel = [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(got, ref)]
        diffs[e] = rel
        first, later = ((HALF_LOSS_RTOL, HALF_LOSS_RTOL) if half_of(e)
                        else (LOSS_RTOL_FIRST, LOSS_RTOL_LATER))
        if rel and (rel[0] > first or max(rel) > later):
            warnings.append('%s vs %s: rel %s' % (e, ref_name, ' '.join('%.1e' % d for d in rel)))
    return '; '.join(warnings), diffs


# --- main -------------------------------------------------------------------

def find_tools(args):
    build = args.build_dir or os.environ.get('TCC_BUILD_DIR') or os.path.join(ROOT, 'build')
    tcc = args.tcc or next((p for p in [os.path.join(build, 'bin', 'tcc'), os.path.join(build, 'tcc')]
                            if os.path.exists(p)), None)
    lib = args.runtime_lib or next((p for p in [os.path.join(build, 'lib', 'libtcc_runtime.so'),
                                                os.path.join(build, 'libtcc_runtime.so')]
                                    if os.path.exists(p)), None)
    if not tcc or not lib:
        sys.exit('bench/train: no tcc or libtcc_runtime.so under %s (build first: scripts/build.sh)' % build)
    return tcc, lib


def fusion_flag(tcc):
    """The tcc flag that turns fusion off, or None if this tcc has none."""
    help_text = subprocess.run([tcc, '--help'], capture_output=True, text=True).stdout
    return '--fusion=none' if '--fusion=' in help_text else None


def expose_openmp_globally():
    """libtcc_runtime brings LLVM's libomp, which also serves GNU OpenMP
    (GOMP_*). Make it global before torch (linked to libgomp) is imported,
    so that torch binds to the same pool: one OpenMP runtime in the process,
    as tcc's session creation requires."""
    for line in open('/proc/self/maps'):
        path = line.split()[-1]
        if '/libomp.so' in path:
            ctypes.CDLL(path, mode=os.RTLD_GLOBAL | getattr(os, 'RTLD_NOLOAD', 4))
            return path
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--threads', type=int, default=2, help='threads for every engine (default 2)')
    ap.add_argument('--warmup', type=int, default=5, help='untimed steps first (default 5, at least %d)' % LOSS_STEPS)
    ap.add_argument('--iters', type=int, default=20, help='timed steps per engine (default 20)')
    ap.add_argument('--block', type=int, default=10, help='timed steps per engine before switching (default 10)')
    ap.add_argument('--pause', type=float, default=0.25, help='seconds of sleep before each block (default 0.25)')
    ap.add_argument('--models', default='mlp,cnn_bn,gpt,gpt4,resnet18,mobilenet_v2', help='comma-separated, of: ' + ', '.join(list(MODELS) + list(GROUPS)))
    # fp16 only when asked for (bench/README.md "fp16 on the CPU").
    ap.add_argument('--engines', default=','.join(e for e in ENGINES if half_of(e) != 'fp16'),
                    help='comma-separated, of: ' + ', '.join(ENGINES))
    ap.add_argument('--optimizer', choices=['sgd', 'adamw'], help="every model's optimizer (default: per model)")
    ap.add_argument('--build-dir', help='build folder of tcc (default: TCC_BUILD_DIR or build/)')
    ap.add_argument('--tcc', help='the tcc binary')
    ap.add_argument('--runtime-lib', help='libtcc_runtime.so')
    ap.add_argument('--out', default=os.path.join(HERE, 'out', 'train'), help='artifacts folder (bench/out/train)')
    ap.add_argument('--json', help='write every number to this file')
    ap.add_argument('--channels-last', action='store_true',
                    help="PyTorch's CNNs in channels_last memory format")
    ap.add_argument('--flops', action='store_true',
                    help='achieved GFLOP/s of every engine and the GEMM rates of the machine (PyTorch 2.x)')
    args = ap.parse_args()
    args.warmup = max(args.warmup, LOSS_STEPS)
    models = [x for m in args.models.split(',') if m for x in GROUPS.get(m, [m])]
    engines = [e for e in args.engines.split(',') if e]
    for m in models:
        if m not in MODELS:
            ap.error('unknown model %s' % m)
    for e in engines:
        if e not in ENGINES:
            ap.error('unknown engine %s' % e)
    tcc, lib = find_tools(args)
    ncpu = len(os.sched_getaffinity(0))
    notes = []

    # XLA:CPU has no intra-op thread count: one thread with Eigen's
    # multithreading off, else a pool of every CPU of the process's affinity.
    if args.threads == 1:
        os.environ['XLA_FLAGS'] = (os.environ.get('XLA_FLAGS', '') +
                                   ' --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1').strip()
    elif args.threads != ncpu and 'jax' in engines:
        notes.append('jax: XLA:CPU uses all %d CPUs of the affinity mask (it has no thread-count flag), '
                     'not --threads %d' % (ncpu, args.threads))

    fusion = fusion_flag(tcc)
    if 'tcc-nofusion' in engines and not fusion:
        engines.remove('tcc-nofusion')
        notes.append('tcc-nofusion: this tcc has no --fusion= flag; column omitted')

    rt = tcc_runtime.TccRuntime(lib)
    omp = expose_openmp_globally()
    # Import order matters: torch after libomp is global (see above).
    if any(e.startswith('torch') for e in engines) or args.flops:
        import torch
        torch.set_num_threads(args.threads)
        torch.set_num_interop_threads(1)
    if 'jax' in engines:
        import jax
        jax.config.update('jax_platforms', 'cpu')

    versions = dict(tcc_runtime=rt.version, python=platform.python_version(), numpy=np.__version__)
    for e in ('torch-compile', 'torch-compile-bf16', 'torch-compile-fp16'):
        if e in engines and int(torch.__version__.split('.')[0]) < 2:
            engines.remove(e)
            notes.append('%s: torch %s has no torch.compile; column omitted' % (e, torch.__version__))
    if args.flops and int(torch.__version__.split('.')[0]) < 2:
        sys.exit('bench/train: --flops needs PyTorch 2.x (torch.utils.flop_counter)')
    if any(e.startswith('torch') for e in engines):
        versions['torch'] = torch.__version__
        blas = sorted({line.split()[-1] for line in open('/proc/self/maps') if '/libblas' in line
                       or '/libopenblas' in line})
        versions['torch BLAS'] = ' '.join(blas) or 'none'
        if any('/blas/libblas' in b for b in blas):
            notes.append("torch: its BLAS is the reference libblas (slow matmuls); run through "
                         "bench/train.sh, which uses OpenBLAS")
    if 'jax' in engines:
        import jaxlib
        versions['jax'] = jax.__version__
        versions['jaxlib'] = jaxlib.__version__
    log('threads %d (%d CPUs), versions %s, libomp %s' % (args.threads, ncpu, versions, omp))
    gemm = gemm_rates(torch, args.threads) if args.flops else {}
    if gemm:
        log('torch.matmul 1024^3: ' + ', '.join('%s %.1f GFLOP/s' % kv for kv in gemm.items()))

    results = []
    for name in models:
        cfg = dict(MODELS[name])
        optimizer = args.optimizer or cfg['optimizer']
        lr = cfg['lr'] if optimizer == cfg['optimizer'] else (0.05 if optimizer == 'sgd' else 1e-3)
        mdir = os.path.join(args.out, name)
        os.makedirs(mdir, exist_ok=True)
        onnx = cfg['onnx'] or (zoo_onnx(cfg, mdir) if cfg.get('zoo') else os.path.join(mdir, 'model.onnx'))
        row = dict(model=name, batch=cfg['batch'], optimizer=optimizer, lr=lr, engines={}, failures={})
        if not os.path.exists(onnx):
            # Reported with the others; the rest of the models still run.
            row['failures']['tcc'] = '%s is missing; run bench/train_setup.sh' % onnx
            log('%s: %s' % (name, row['failures']['tcc']))
            results.append(row)
            continue
        data = batches(name, cfg)
        log('%s: batch %d, %s lr %g' % (name, cfg['batch'], optimizer, lr))

        built = {}
        so = os.path.join(mdir, 'tcc-%s.so' % optimizer)
        try:
            row['compile_s'] = tcc_compile(tcc, onnx, so, cfg, optimizer, [])
            built['tcc'] = so
        except RuntimeError as err:
            row['failures']['tcc'] = str(err)
            log('%s: %s' % (name, err))
        for half in ('bf16', 'fp16'):
            e = 'tcc-' + half
            if e not in engines:
                continue
            so_half = os.path.join(mdir, '%s-%s.so' % (e, optimizer))
            try:
                row['compile_%s_s' % half] = tcc_compile(tcc, onnx, so_half, cfg, optimizer,
                                                         ['--precision=' + half])
                built[e] = so_half
            except RuntimeError as err:
                row['failures'][e] = str(err)
        if 'tcc-nofusion' in engines:
            so_nf = os.path.join(mdir, 'tcc-nofusion-%s.so' % optimizer)
            try:
                row['compile_nofusion_s'] = tcc_compile(tcc, onnx, so_nf, cfg, optimizer, [fusion])
                built['tcc-nofusion'] = so_nf
            except RuntimeError as err:
                row['failures']['tcc-nofusion'] = str(err)
        if 'tcc' not in built:
            results.append(row)
            continue
        weights = read_safetensors(so[:-3] + '.safetensors')

        live = {}
        for e in engines:
            try:
                if e.startswith('tcc'):
                    if e in built:
                        live[e] = TccEngine(rt, built[e], cfg, data, lr, args.threads)
                elif e.startswith('torch'):
                    live[e] = TorchEngine(name, cfg, weights, data, optimizer, lr,
                                          compile=e.startswith('torch-compile'),
                                          half=half_of(e),
                                          channels_last=args.channels_last)
                elif cfg.get('zoo'):
                    continue  # no JAX version of the zoo's torchvision models
                else:
                    live[e] = JaxEngine(name, cfg, weights, data, optimizer, lr)
            except Exception as err:  # report and go on with the other engines
                row['failures'][e] = '%s: %s' % (type(err).__name__, err)
                log('%s/%s failed: %s' % (name, e, row['failures'][e]))
        if args.flops:
            try:
                row['flops'] = TorchEngine(name, cfg, weights, data, optimizer, lr).flops()
            except Exception as err:
                row['failures']['flops'] = '%s: %s' % (type(err).__name__, err)
        try:
            rec = measure(live, args)
        except Exception as err:
            row['failures']['measure'] = '%s: %s' % (type(err).__name__, err)
            log('%s: measurement failed: %s' % (name, err))
            rec = {}
        for eng in live.values():
            eng.close()
        row['engines'] = rec
        row['loss_warning'], row['loss_rel_diff'] = loss_check(rec) if rec else ('', {})
        results.append(row)
        for e, r in rec.items():
            log('  %-13s median %9.3f ms  first losses %s' % (e, r['median'], ' '.join('%.6f' % v for v in r['losses'][:LOSS_STEPS])))

    print_tables(results, engines, args, versions, notes, gemm)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(dict(args=vars(args), versions=versions, cpus=ncpu, notes=notes, gemm=gemm,
                           loadavg=os.getloadavg(), results=results), f, indent=1)
    failed = any(r['failures'] or r['loss_warning'] for r in results)
    return 1 if failed else 0


def ratio_base(e, engines):
    """The tcc engine that engine E is compared with: tcc-bf16 (tcc-fp16) for
    the other bf16 (fp16) engines when it runs, else tcc."""
    base = 'tcc-%s' % half_of(e)
    return base if half_of(e) and e != base and base in engines else 'tcc'


def print_tables(results, engines, args, versions, notes, gemm):
    cols = [e for e in engines]
    head = ['model', 'batch', 'optimizer'] + ['%s ms' % e for e in cols]
    ratios = [e for e in cols if e != 'tcc']
    head += ['%s/%s' % (e, ratio_base(e, engines)) for e in ratios] + ['first losses agree']
    rows = []
    for r in results:
        rec = r['engines']
        cells = [r['model'], str(r['batch']), r['optimizer']]
        for e in cols:
            if e in rec:
                cells.append('%.3f' % rec[e]['median'])
            else:
                cells.append('FAILED' if e in r['failures'] else '-')
        for e in ratios:
            base = ratio_base(e, engines)
            if e in rec and base in rec:
                cells.append('%.2f' % (rec[e]['median'] / rec[base]['median']))
            else:
                cells.append('-')
        if r['failures']:
            cells.append('*** ' + '; '.join('%s: %s' % (k, v.splitlines()[0][:120]) for k, v in r['failures'].items()))
        elif r['loss_warning']:
            cells.append('*** ' + r['loss_warning'])
        else:
            worst = max((d[0] for d in r['loss_rel_diff'].values() if d), default=0.0)
            cells.append('ok (step 1 rel <= %.0e)' % worst)
        rows.append(cells)
    # The geometric mean of each ratio over the models both engines ran.
    means = ['geometric mean', '', '']
    means += ['' for _ in cols]
    for e in ratios:
        base = ratio_base(e, engines)
        xs = [r['engines'][e]['median'] / r['engines'][base]['median'] for r in results
              if e in r['engines'] and base in r['engines']]
        means.append('%.2f (%d)' % (math.exp(sum(math.log(x) for x in xs) / len(xs)), len(xs)) if xs else '-')
    means.append('')
    rows.append(means)
    print()
    print('Training step, median ms of %d steps after %d warm-up, --threads %d; X/tcc > 1: tcc faster'
          % (args.iters, args.warmup, args.threads))
    print_markdown(head, rows)
    if gemm:
        flop_rows = []
        for r in results:
            if r.get('flops'):
                flop_rows.append([r['model'], '%.2f' % (r['flops'] / 1e9)] +
                                 ['%.1f' % (r['flops'] / r['engines'][e]['median'] / 1e6)
                                  if e in r['engines'] else '-' for e in cols])
        print()
        print('Achieved GFLOP/s (the step\'s forward and backward FLOPs over its median time); '
              'torch.matmul 1024^3 on this machine: ' +
              ', '.join('%s %.1f GFLOP/s' % kv for kv in gemm.items()))
        print_markdown(['model', 'GFLOP per step'] + cols, flop_rows)

    detail_head = ['model', 'engine', 'median ms (p10-p90)', 'cores', 'first step s', 'first losses']
    detail = []
    for r in results:
        for e, x in r['engines'].items():
            detail.append([r['model'], e, '%.3f (%.3f-%.3f)' % (x['median'], x['p10'], x['p90']),
                           '%.1f' % x['cores'] if x['cores'] else '-', '%.2f' % x['first_step_s'],
                           ' '.join('%.6f' % v for v in x['losses'][:LOSS_STEPS])])
        if 'compile_s' in r:
            detail.append([r['model'], 'tcc compile', '%.2f s' % r['compile_s'], '', '', ''])
    print()
    print_markdown(detail_head, detail)
    for n in notes:
        print('note:', n)
    print('versions:', ', '.join('%s %s' % kv for kv in versions.items()), '; load average %.2f %.2f %.2f' % os.getloadavg())


def print_markdown(head, rows):
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows)] if rows else [len(h) for h in head]
    line = lambda cells: '| ' + ' | '.join(str(c).ljust(w) for c, w in zip(cells, widths)) + ' |'  # noqa: E731
    print(line(head))
    print('|' + '|'.join('-' * (w + 2) for w in widths) + '|')
    for r in rows:
        print(line(r))


if __name__ == '__main__':
    sys.exit(main())
