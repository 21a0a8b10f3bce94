#!/usr/bin/env python3
"""gpu_bench.py - the Python side of bench/gpu/prepare.sh and bench/gpu/run.sh.

Subcommands (each one small; the shell scripts hold the order and the
timeouts):

  list MANIFEST KIND        the parity or throughput runs, one per line
  parity-configs            the parity runs of test/parity/parity-*.test, one
                            per line: name, model, optimizer, tcc flags, tcc-run
                            flags (tab-separated; flags space-separated)
  manifest BUNDLE ...       write BUNDLE/manifest.json (prepare.sh)
  tcc-time OUT.json LOG DEADLINE_S -- CMD...
                            run a tcc-run command, timestamp each of its
                            per-step lines, stop it at the deadline, write
                            the step times
  torch-parity MANIFEST OUT_DIR DEVICE
                            PyTorch's loss curves for the parity runs: the
                            ONNX initializers as initial weights, the same
                            batches and optimizer settings
  torch-time MANIFEST NAME MODE OUT.json DEADLINE_S
                            PyTorch step times of a throughput model, MODE
                            eager or compile, fp32 then TF32
  report MANIFEST OUT_DIR   the final table and OUT_DIR/results.json; exit
                            status 0 iff every parity check passed

Standard library, numpy and torch only (onnx when present: without it the
initializers are read by a minimal protobuf reader, see onnx_initializers).
"""
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REL_TOL = 1e-3  # parity bound: max relative per-step loss error
PEAK_TFLOPS = {'fp32': 67.0, 'tf32': 495.0}  # H200 SXM dense: FP32 CUDA cores, TF32 tensor cores


def log(*args):
    print('gpu_bench:', *args, file=sys.stderr, flush=True)


# --- the parity runs, read from the lit tests --------------------------------

def parity_configs():
    """[(name, model, optimizer, tcc flags, tcc-run flags)] from the RUN lines
    of test/parity/parity-*.test: `tcc %S/M/model.onnx FLAGS -o %t/X.so` and
    `tcc-run %t/X.so FLAGS --metrics ...`, so that the GPU runs take exactly
    the tests' optimizer settings and rates."""
    d = os.path.join(ROOT, 'test', 'parity')
    out = []
    for test in sorted(os.listdir(d)):
        if not (test.startswith('parity-') and test.endswith('.test')):
            continue
        compiled = {}
        for line in open(os.path.join(d, test)):
            m = re.match(r'#\s*RUN:\s*tcc\s+%S/(\w+)/model\.onnx\s+(.*?)\s+-o\s+%t/([\w-]+)\.so\s*$', line)
            if m:
                compiled[m.group(3)] = (m.group(1), m.group(2).split())
                continue
            m = re.match(r'#\s*RUN:\s*tcc-run\s+%t/([\w-]+)\.so\s+(.*?)\s+--metrics\s', line)
            if m and m.group(1) in compiled:
                model, cflags = compiled[m.group(1)]
                rflags = m.group(2).replace('%S/', 'test/parity/').split()
                opt = next(f.split('=', 1)[1] for f in cflags if f.startswith('--optimizer='))
                out.append((model + '-' + opt, model, opt, cflags, rflags))
    return out


def cmd_list(args):
    """list MANIFEST parity|throughput: one line per run for run.sh: name,
    artifact, tcc-run flags (space-separated), whether the parameters
    travelled (1/0)."""
    manifest = json.load(open(args[0]))
    for r in manifest[args[1]]:
        print('\t'.join([r['name'], r['artifact'], ' '.join(r['tcc_run']),
                         '1' if r.get('params_shipped', True) else '0']))


def cmd_parity_configs(_args):
    for name, model, opt, cflags, rflags in parity_configs():
        print('\t'.join([name, model, opt, ' '.join(cflags), ' '.join(rflags)]))


def flag(flags, name, default=None):
    """The value of --name X or --name=X in a flag list."""
    for i, f in enumerate(flags):
        if f == name and i + 1 < len(flags):
            return flags[i + 1]
        if f.startswith(name + '='):
            return f.split('=', 1)[1]
    return default


# --- manifest ---------------------------------------------------------------

TORCH_CLASS = {'mlp': 'MLP', 'cnn_bn': 'CNN', 'gpt': 'GPT'}
INPUT_NAME = {'mlp': 'x', 'cnn_bn': 'x', 'gpt': 'tokens'}


def cmd_manifest(args):
    """manifest BUNDLE WORK TARGET CUDA_OK TPUT_SPEC...: BUNDLE/manifest.json.
    TPUT_SPEC is name:optimizer:lr:compile_s:shipped_params (compile_s '-'
    when it failed)."""
    bundle, work, target, cuda_ok = args[:4]
    parity = []
    for name, model, opt, cflags, rflags in parity_configs():
        lr = float(flag(rflags, '--lr'))
        torch_opt = {'name': opt, 'lr': lr}
        if opt == 'sgd':
            torch_opt['momentum'] = float(flag(cflags, '--momentum', '0'))
        else:
            torch_opt['weight_decay'] = float(flag(cflags, '--weight-decay', '0.01'))
        ref = json.load(open(os.path.join(ROOT, 'test', 'parity', model, opt + '.json')))
        parity.append(dict(
            name=name, model=model, optimizer=opt, lr=lr, steps=int(flag(rflags, '--steps')),
            batch=ref['batch'], artifact='bench/gpu/bundle/models/%s.so' % name,
            cpu_ref='bench/gpu/bundle/ref/%s.cpu.jsonl' % name,
            onnx='test/parity/%s/model.onnx' % model, data=flag(rflags, '--data'),
            input=INPUT_NAME[model], tcc_flags=cflags + ['--target=' + target], tcc_run=rflags,
            torch=dict(module='bench/gpu/models.py', **{'class': TORCH_CLASS[model]}, kwargs={},
                       optimizer=torch_opt, init='onnx initializers of ' + 'test/parity/%s/model.onnx' % model)))
    throughput = []
    for spec in args[4:]:
        name, opt, lr, compile_s, shipped = spec.split(':')
        info = json.load(open(os.path.join(work, name, 'info.json')))
        lr = float(lr)
        cflags = ['--loss=cross_entropy', '--optimizer=' + opt] + (['--momentum=0.9'] if opt == 'sgd' else [])
        torch_opt = {'name': opt, 'lr': lr}
        if opt == 'sgd':
            torch_opt['momentum'] = 0.9
        else:
            torch_opt['weight_decay'] = 0.01
        cfg = info['config']
        shape = ([info['batch'], cfg['kwargs']['t']] if cfg['model'] == 'GPT'
                 else [info['batch'], 3, cfg['image'], cfg['image']])
        throughput.append(dict(
            name=name, artifact='bench/gpu/bundle/models/%s.so' % name,
            params_shipped=shipped == '1', data='bench/gpu/bundle/data/%s' % name,
            input=info['input'], input_shape=shape, batch=info['batch'],
            items_per_step=info['items_per_step'], unit=info['unit'], params=info['params'],
            flops_per_step=info['flops_per_step'], flops_formula=info['flops_formula'],
            optimizer=opt, lr=lr, onnx_bytes=info['onnx_bytes'],
            tcc_compile_s=None if compile_s == '-' else float(compile_s),
            tcc_flags=cflags + ['--target=' + target],
            tcc_run=['--data', 'bench/gpu/bundle/data/%s' % name, '--lr', repr(lr), '--no-shuffle',
                     '--log-every', '1'],
            torch=dict(module='bench/gpu/models.py', **{'class': cfg['model']}, kwargs=cfg['kwargs'],
                       optimizer=torch_opt, init="PyTorch's defaults (torch.manual_seed(0)); tcc-run --init=0 draws from the distributions tcc recorded from them")))
    manifest = dict(target=target, tcc_cuda_available=cuda_ok == '1',
                    created=time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()),
                    tcc_commit=subprocess.run(['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'],
                                              capture_output=True, text=True).stdout.strip(),
                    parity_rel_tol=REL_TOL, peak_tflops=PEAK_TFLOPS, parity=parity, throughput=throughput)
    with open(os.path.join(bundle, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=1)
    print('wrote %s: %d parity runs, %d throughput models'
          % (os.path.join(bundle, 'manifest.json'), len(parity), len(throughput)))


# --- tcc-run step times -------------------------------------------------------

def cmd_tcc_time(args):
    """tcc-time OUT.json LOG DEADLINE_S WARMUP -- CMD...: tcc-run prints one
    'step k/N ...' line per step with --log-every 1 and flushes it after the
    step's loss has been copied out (so after the device finished the step).
    The time between two such lines is one step, measured here as the lines
    arrive. At DEADLINE_S the run is stopped and the steps so far count."""
    out_json, log_path, deadline, warmup = args[0], args[1], float(args[2]), int(args[3])
    cmd = args[args.index('--') + 1:]
    stamps, reported = [], []
    t0 = time.perf_counter()
    with open(log_path, 'w') as logf:
        logf.write('$ %s\n' % ' '.join(cmd))
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)

        def read():
            for line in proc.stdout:
                now = time.perf_counter()
                logf.write('%9.3f %s' % (now - t0, line))
                m = re.match(r'step (\d+)/\d+ .* ([\d.]+) samples/s', line)
                if m:
                    stamps.append(now)
                    reported.append(float(m.group(2)))
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            rc = proc.wait(timeout=deadline)
            timed_out = False
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
            timed_out = True
        reader.join(timeout=5)
    # Step k's time: from line k-1 to line k; the first step's line has no
    # predecessor, so it is measured from the start (it includes loading).
    times = [b - a for a, b in zip(stamps, stamps[1:])]
    timed = times[max(warmup - 1, 0):]
    res = dict(cmd=cmd, rc=rc, timed_out=timed_out, steps_done=len(stamps), warmup=warmup,
               first_step_s=(stamps[0] - t0) if stamps else None, step_times_s=timed,
               wall_s=time.perf_counter() - t0)
    if timed:
        res.update(median_s=statistics.median(timed), p10_s=quantile(timed, 0.1), p90_s=quantile(timed, 0.9),
                   reported_samples_per_s=statistics.median(reported[warmup:]) if reported[warmup:] else None)
    json.dump(res, open(out_json, 'w'), indent=1)
    print('tcc-run: %d steps, %s' % (len(stamps), ('median %.2f ms' % (res['median_s'] * 1e3)) if timed
                                      else 'no timed steps'), '(stopped at the deadline)' if timed_out else '')
    return 0 if (rc == 0 or (timed_out and timed)) else 1


def quantile(xs, q):
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


# --- ONNX initializers --------------------------------------------------------

def onnx_initializers(path):
    """{name: numpy array} of an ONNX file's initializers: onnx.numpy_helper
    when onnx is installed (the GPU machine), else a minimal protobuf reader
    (Debian's python3 has torch but no onnx): ModelProto.graph (7) ->
    GraphProto.initializer (5) -> TensorProto dims (1), data_type (2),
    float_data (4), int64_data (7), name (8), raw_data (9)."""
    import numpy as np
    try:
        import onnx
        from onnx import numpy_helper
        return {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    except ImportError:
        pass

    def varint(b, i):
        x = s = 0
        while True:
            c = b[i]
            i += 1
            x |= (c & 0x7f) << s
            s += 7
            if c < 0x80:
                return x, i

    def varints(v, wt):
        """A repeated varint field's values: packed (wire type 2) or one."""
        if wt != 2:
            return [v]
        out, j = [], 0
        while j < len(v):
            d, j = varint(v, j)
            out.append(d)
        return out

    def fields(b):
        i = 0
        while i < len(b):
            key, i = varint(b, i)
            num, wt = key >> 3, key & 7
            if wt == 0:
                v, i = varint(b, i)
            elif wt == 2:
                n, i = varint(b, i)
                v, i = b[i:i + n], i + n
            elif wt == 1:
                v, i = b[i:i + 8], i + 8
            elif wt == 5:
                v, i = b[i:i + 4], i + 4
            else:
                raise ValueError('%s: unsupported protobuf wire type %d' % (path, wt))
            yield num, wt, v

    dtypes = {1: np.float32, 6: np.int32, 7: np.int64, 9: np.bool_, 11: np.float64}
    data = memoryview(open(path, 'rb').read())
    out = {}
    for num, _, graph in fields(data):
        if num != 7:
            continue
        for gnum, _, tensor in fields(graph):
            if gnum != 5:
                continue
            dims, dtype, name, raw, floats, ints = [], 1, '', None, [], []
            for tnum, wt, v in fields(tensor):
                if tnum == 1:
                    dims.extend(varints(v, wt))
                elif tnum == 2:
                    dtype = v
                elif tnum == 4:  # packed or one fixed32: raw little-endian floats either way
                    floats.extend(np.frombuffer(v, np.float32))
                elif tnum == 7:
                    ints.extend(varints(v, wt))
                elif tnum == 8:
                    name = bytes(v).decode()
                elif tnum == 9:
                    raw = bytes(v)
                elif tnum in (13, 14):
                    raise ValueError('%s: external data needs the onnx package' % path)
            dt = dtypes[dtype]
            if raw is not None:
                arr = np.frombuffer(raw, dt)
            elif dtype == 1:
                arr = np.array(floats, np.float32)
            else:
                arr = np.array(ints, np.int64).astype(dt)
            out[name] = arr.reshape(dims).copy()
    return out


# --- PyTorch ---------------------------------------------------------------------

def torch_setup(device, tf32):
    """TF32 on or off through the legacy flags only: torch >= 2.9 raises on
    a mix of those and the new fp32_precision API (inductor still reads the
    legacy ones), so set_float32_matmul_precision is not called either."""
    import warnings
    import torch
    warnings.filterwarnings('ignore', message='.*TF32.*')  # 2.9+: "will be deprecated"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    return torch


def make_optimizer(torch, params, spec, device):
    o = spec['optimizer']
    if o['name'] == 'sgd':
        return torch.optim.SGD(params, lr=o['lr'], momentum=o.get('momentum', 0.0))
    kw = dict(lr=o['lr'], weight_decay=o.get('weight_decay', 0.01))
    return torch.optim.AdamW(params, **kw)


def cmd_torch_parity(args):
    """torch-parity MANIFEST OUT_DIR DEVICE: OUT_DIR/<run>.torch.jsonl, one
    {"step", "loss"} per step, as make_references.py trains: float32, the
    model's ONNX initializers as initial weights (names = state_dict keys),
    batch i = samples [i*B, (i+1)*B) wrapping, mean cross-entropy,
    zero_grad / backward / step."""
    manifest, out_dir, device = json.load(open(args[0])), args[1], args[2]
    import numpy as np
    torch = torch_setup(device, tf32=False)
    import torch.nn.functional as F
    sys.path.insert(0, HERE)
    import models
    if device == 'cuda':
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    torch.manual_seed(0)
    status = 0
    for run in manifest['parity']:
        t0 = time.time()
        try:
            spec = dict(run['torch'])
            model = models.build(spec)
            init = onnx_initializers(os.path.join(ROOT, run['onnx']))
            state = model.state_dict()
            missing = [k for k in state if k not in init and not k.endswith('num_batches_tracked')]
            unexpected = [k for k in init if k not in state]
            if missing or unexpected:
                raise RuntimeError('state_dict vs ONNX initializers: missing %s, unexpected %s'
                                   % (missing, unexpected))
            model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in init.items()},
                                  strict=False)
            model.to(device).train()
            opt = make_optimizer(torch, model.parameters(), spec, device)
            x = torch.from_numpy(np.load(os.path.join(ROOT, run['data'], run['input'] + '.npy'))).to(device)
            y = torch.from_numpy(np.load(os.path.join(ROOT, run['data'], 'y.npy'))).to(device)
            b = run['batch']
            per_epoch = x.shape[0] // b
            with open(os.path.join(out_dir, run['name'] + '.torch.jsonl'), 'w') as f:
                for step in range(run['steps']):
                    i = step % per_epoch
                    logits = model(x[i * b:(i + 1) * b])
                    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y[i * b:(i + 1) * b].reshape(-1))
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    f.write(json.dumps({'step': step + 1, 'loss': float(loss)}) + '\n')
            log('torch %s on %s: %d steps in %.1f s' % (run['name'], device, run['steps'], time.time() - t0))
        except Exception as e:  # one failure must not hide the other runs
            log('torch %s: FAILED: %s' % (run['name'], e))
            status = 1
    return status


def cmd_torch_time(args):
    """torch-time MANIFEST NAME MODE OUT.json DEADLINE_S [WARMUP STEPS]:
    median step time of PyTorch (MODE eager or compile) on a throughput
    model, first with TF32 off, then on. A step is what tcc-run does:
    forward, mean cross-entropy, backward, optimizer step, zero_grad, the
    loss copied to the host (which waits for the device). Results are
    written after each precision, so a timeout keeps what finished.
    compile: torch.compile(model) (inductor, default mode) around the
    model; the optimizer stays eager; the warm-up's first step holds the
    compile and is reported as compile_s."""
    manifest, name, mode, out_json, deadline = json.load(open(args[0])), args[1], args[2], args[3], float(args[4])
    warmup = int(args[5]) if len(args) > 5 else 5
    steps = int(args[6]) if len(args) > 6 else 30
    t_start = time.perf_counter()
    spec = next(t for t in manifest['throughput'] if t['name'] == name)
    device = os.environ.get('GPU_BENCH_DEVICE', 'cuda')  # cpu in run.sh --cpu-dry-run
    import numpy as np
    torch = torch_setup(device, tf32=False)
    import torch.nn.functional as F
    sys.path.insert(0, HERE)
    import models
    x = torch.from_numpy(np.load(os.path.join(ROOT, spec['data'], spec['input'] + '.npy'))[:spec['batch']]).to(device)
    y = torch.from_numpy(np.load(os.path.join(ROOT, spec['data'], 'y.npy'))[:spec['batch']]).to(device)
    results = dict(name=name, mode=mode, device=device, torch=torch.__version__, runs={})
    if mode == 'compile' and not hasattr(torch, 'compile'):
        results['runs']['fp32'] = dict(skipped='no torch.compile in torch %s' % torch.__version__)
        json.dump(results, open(out_json, 'w'), indent=1)
        return 0
    for precision in ('fp32', 'tf32'):
        if device != 'cuda' and precision == 'tf32':
            break
        # TF32 again costs what fp32 took (a recompile for torch.compile):
        # skip it rather than be killed half-way.
        left = deadline - (time.perf_counter() - t_start)
        need = 10 + (sum(results['runs']['fp32']['step_times_s']) + results['runs']['fp32']['first_step_s']
                     if precision == 'tf32' else 0)
        if precision == 'tf32' and left < need:
            results['runs'][precision] = dict(skipped='time budget (%.0f s left, needs ~%.0f s)' % (left, need))
            break
        torch_setup(device, tf32=precision == 'tf32')
        if mode == 'compile' and hasattr(torch, '_dynamo'):
            torch._dynamo.reset()
        # PyTorch's own initializers, seeded: the distributions tcc-run
        # --init draws from too (tcc records each parameter's initializer
        # distribution from the exported model, whose values are these).
        torch.manual_seed(0)
        model = models.build(spec['torch'])
        model.to(device).train()
        opt = make_optimizer(torch, model.parameters(), spec['torch'], device)
        fwd = torch.compile(model) if mode == 'compile' else model

        def step():
            logits = fwd(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            return loss.item()

        times, losses = [], []
        for k in range(warmup + steps):
            t0 = time.perf_counter()
            losses.append(step())
            times.append(time.perf_counter() - t0)
            if time.perf_counter() - t_start > deadline - 2 and k >= warmup:
                break
        timed = times[warmup:]
        r = dict(first_step_s=times[0], steps=len(timed), step_times_s=timed, first_loss=losses[0],
                 last_loss=losses[-1])
        if mode == 'compile':
            r['compile_s'] = times[0]
        if timed:
            r.update(median_s=statistics.median(timed), p10_s=quantile(timed, 0.1), p90_s=quantile(timed, 0.9))
        results['runs'][precision] = r
        json.dump(results, open(out_json, 'w'), indent=1)
        log('torch %s %s %s: %s' % (name, mode, precision, ('median %.2f ms over %d steps'
                                                            % (r['median_s'] * 1e3, len(timed))) if timed else 'no timed steps'))
        del model, opt, fwd
        if device == 'cuda':
            torch.cuda.empty_cache()
    json.dump(results, open(out_json, 'w'), indent=1)
    return 0


# --- the report ---------------------------------------------------------------------

def read_losses(path):
    try:
        return [json.loads(line)['loss'] for line in open(path) if line.strip()]
    except (OSError, ValueError, KeyError):
        return None


def max_rel(got, ref):
    """(max relative error, first step over the bound) or (None, reason)."""
    if got is None or ref is None:
        return None, 'missing'
    if len(got) != len(ref):
        return None, '%d vs %d steps' % (len(got), len(ref))
    errs = [abs(g - r) / max(abs(r), 1e-12) for g, r in zip(got, ref)]
    return max(errs), next((i + 1 for i, e in enumerate(errs) if not e <= REL_TOL), None)


def load_json(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


UNIT = {'tokens': 'tok', 'images': 'img'}


def cmd_report(args):
    manifest, out = json.load(open(args[0])), args[1]
    peaks = manifest.get('peak_tflops', PEAK_TFLOPS)
    on_gpu = not os.environ.get('GPU_BENCH_DRY_RUN')
    results = dict(manifest=dict(target=manifest['target'], tcc_commit=manifest.get('tcc_commit'),
                                 created=manifest.get('created')),
                   dry_run=not on_gpu, parity=[], throughput=[])
    lines = ['', 'PARITY (per-step loss, %d steps; bound: max relative error %.0e)' % (
        manifest['parity'][0]['steps'] if manifest['parity'] else 0, REL_TOL),
        '%-14s %-12s %-12s %s' % ('run', 'vs CPU tcc', 'vs PyTorch', 'result')]
    all_pass = bool(manifest['parity'])
    for run in manifest['parity']:
        got = read_losses(os.path.join(out, run['name'] + '.tcc.jsonl'))
        cpu = read_losses(os.path.join(ROOT, run['cpu_ref']))
        tor = read_losses(os.path.join(out, run['name'] + '.torch.jsonl'))
        e_cpu, bad_cpu = max_rel(got, cpu)
        e_tor, bad_tor = max_rel(got, tor)
        ok = e_cpu is not None and e_tor is not None and bad_cpu is None and bad_tor is None
        all_pass &= ok
        why = ''
        if got is None:
            why = 'no tcc curve: see %s.tcc.log in details' % run['name']
        elif not ok:
            why = '; '.join(s for s in [
                ('vs CPU: %s' % bad_cpu) if e_cpu is None else ('vs CPU: step %d' % bad_cpu if bad_cpu else ''),
                ('vs PyTorch: %s' % bad_tor) if e_tor is None else ('vs PyTorch: step %d' % bad_tor if bad_tor else '')]
                if s)
        fmt = lambda e: '-' if e is None else '%.1e' % e  # noqa: E731
        lines.append('%-14s %-12s %-12s %s' % (run['name'], fmt(e_cpu), fmt(e_tor),
                                               'PASS' if ok else 'FAIL (%s)' % why))
        results['parity'].append(dict(name=run['name'], max_rel_vs_cpu=e_cpu, max_rel_vs_torch=e_tor,
                                      passed=ok, detail=why, first_loss=got[0] if got else None,
                                      last_loss=got[-1] if got else None))
    lines += ['', 'THROUGHPUT (median step time; ratio = engine time / tcc time, > 1: tcc faster; '
              'MFU against %s)' % ('H200 dense peaks: fp32 %g, tf32 %g TFLOP/s' % (peaks['fp32'], peaks['tf32'])
                                  if on_gpu else 'no peak (dry run on the CPU)'),
              '%-9s %-22s %10s %14s %7s %6s  %s' % ('model', 'engine', 'ms/step', 'items/s', 'ratio', 'MFU',
                                                  'note')]
    for spec in manifest['throughput']:
        name = spec['name']
        rows = []
        tcc_ms = None
        for prec in ('fp32', 'tf32'):
            tcc = load_json(os.path.join(out, '%s.tcc-%s.json' % (name, prec)))
            ms = tcc['median_s'] * 1e3 if tcc and tcc.get('median_s') else None
            if prec == 'fp32':
                tcc_ms = ms  # the ratios' base
            elif tcc is None:
                continue  # no TF32 run (dry run)
            note = ''
            if tcc is None:
                note = 'not run (see log)'
            elif tcc.get('status'):
                note = tcc['status']
            elif not ms:
                note = 'rc %s, %d steps%s' % (tcc['rc'], tcc['steps_done'], ', timed out' if tcc['timed_out'] else '')
            elif tcc['timed_out']:
                note = '%d steps before the deadline' % len(tcc['step_times_s'])
            if prec == 'tf32' and ms:
                note = ('TCC_CUDA_TF32=1 ' + note).strip()
            rows.append(('tcc %s' % prec, ms, prec, note, tcc))
        for mode in ('eager', 'compile'):
            r = load_json(os.path.join(out, '%s.torch-%s.json' % (name, mode)))
            for prec in ('fp32', 'tf32'):
                run = (r or {}).get('runs', {}).get(prec)
                label = 'torch %s %s' % ('eager' if mode == 'eager' else 'compile', prec)
                if run is None:
                    marker = os.path.join(out, '%s.torch-%s.status' % (name, mode))
                    why = open(marker).read().strip() if os.path.exists(marker) else 'not run'
                    if prec == 'tf32' and not on_gpu:
                        continue
                    rows.append((label, None, prec, why, None))
                elif 'skipped' in run:
                    rows.append((label, None, prec, run['skipped'], run))
                else:
                    ms = run['median_s'] * 1e3 if run.get('median_s') else None
                    note = ('compile %.0f s' % run['compile_s']) if 'compile_s' in run else ''
                    rows.append((label, ms, prec, note, run))
        for label, ms, prec, note, raw in rows:
            items = spec['items_per_step'] / (ms / 1e3) if ms else None
            ratio = (ms / tcc_ms) if (ms and tcc_ms) else None
            mfu = (spec['flops_per_step'] / (ms / 1e3) / (peaks[prec] * 1e12)) if (ms and on_gpu) else None
            lines.append('%-9s %-22s %10s %14s %7s %6s  %s' % (
                name, label, '%.2f' % ms if ms else '-', '%.0f %s/s' % (items, UNIT.get(spec['unit'], spec['unit'])) if items else '-',
                '%.2f' % ratio if ratio else '-', '%.1f%%' % (100 * mfu) if mfu else '-', note))
            results['throughput'].append(dict(model=name, engine=label, precision=prec, median_ms=ms,
                                              items_per_s=items, unit=spec['unit'], ratio_vs_tcc=ratio,
                                              mfu=mfu, note=note, flops_per_step=spec['flops_per_step'],
                                              raw=raw))
    lines.append('')
    lines.append('parity: %s' % ('ALL PASS' if all_pass else 'FAILED'))
    text = '\n'.join(lines)
    print(text)
    results['all_parity_passed'] = all_pass
    st = os.path.join(out, 'selftest.status')
    results['selftest'] = open(st).read().strip() if os.path.exists(st) else None
    results['table'] = text
    json.dump(results, open(os.path.join(out, 'results.json'), 'w'), indent=1)
    return 0 if all_pass else 1


COMMANDS = {'parity-configs': cmd_parity_configs, 'list': cmd_list, 'manifest': cmd_manifest, 'tcc-time': cmd_tcc_time,
            'torch-parity': cmd_torch_parity, 'torch-time': cmd_torch_time, 'report': cmd_report}

if __name__ == '__main__':
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print(__doc__)
        sys.exit(2)
    sys.exit(COMMANDS[sys.argv[1]](sys.argv[2:]) or 0)
