"""compile_bench.py - tcc's compile time against torch.compile's first step.

Run by bench/compile.sh with bench/.venv-compile's python (PyPI's torch 2.x,
torchvision, transformers). For every model, in this one invocation on this
machine, with the same thread count:

  tcc cold     tcc MODEL -o train.so with an empty compile cache;
  tcc warm     the same command again (the artifact from the cache);
  tcc edit     the same model with another weight decay (the kernels from the
               cache, the optimizer's groups compiled);
  torch cold   a fresh process: torch.compile(model), then the first training
               step (forward, loss, backward, optimizer step) done, with an
               empty inductor cache (TORCHINDUCTOR_CACHE_DIR);
  torch warm   the same in a second process over the filled inductor cache.

The models: the zoo's (test/zoo; weights regenerated as check_zoo.py does,
PyTorch models from test/zoo/make_zoo.py) and, with --gpt2-small DIR, the
GPT-2-small shape that bench/export_gpt2_small.py exported (batch 8, seq
1024, AdamW). Each time is one compile (--repeat N: the median of N).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ZOO = os.path.join(REPO, 'test', 'zoo')


def run_timed(cmd, env=None):
    t = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError('%s failed:\n%s' % (' '.join(cmd), p.stdout[-3000:]))
    return time.time() - t, p.stdout


def prepare_zoo(name, work):
    """The zoo model with its weights file, and its tcc flags."""
    sys.path.insert(0, ZOO)
    import zoo_common as zc
    ref = json.load(open(os.path.join(ZOO, name, 'ref.json')))
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    shutil.copyfile(os.path.join(ZOO, name, 'model.onnx'), os.path.join(d, 'model.onnx'))
    zc.write_weights(ref['weights'], os.path.join(d, zc.WEIGHTS_FILE))
    return os.path.join(d, 'model.onnx'), ref['tcc_flags']


def time_tcc(tcc, model, flags, threads, repeat):
    out = os.path.join(os.path.dirname(model), 'train.so')
    cold, warm, edit = [], [], []
    for _ in range(repeat):
        cache = tempfile.mkdtemp(prefix='tcc-bench-cache-')
        env = dict(os.environ, TCC_CACHE_DIR=cache)
        cmd = [tcc, model] + flags + ['-j%d' % threads, '-o', out]
        cold.append(run_timed(cmd, env)[0])
        warm.append(run_timed(cmd, env)[0])
        edit.append(run_timed(cmd + ['--weight-decay=0.0123'], env)[0])
        shutil.rmtree(cache)
    report = run_timed([tcc, model] + flags + ['-j%d' % threads, '-o', out, '--no-cache',
                        '--time-report'])[1]
    kernels = next((l for l in report.splitlines() if 'distinct kernels' in l), '')
    return statistics.median(cold), statistics.median(warm), statistics.median(edit), kernels


WORKER = r'''
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import torch
torch.set_num_threads(int(sys.argv[3]))
spec = json.loads(sys.argv[2])
if spec['kind'] == 'zoo':
    import make_zoo as mz
    import numpy as np
    ctor, _, kind, batch, opt = mz.MODELS[spec['name']]
    data_dir = os.path.join(sys.argv[1], 'data', kind)
    data = {f[:-4]: np.load(os.path.join(data_dir, f)) for f in sorted(os.listdir(data_dir)) if f.endswith('.npy')}
    names = [k for k in data if k != 'y']
    torch.manual_seed(0)
    model = ctor()
    model.train()
    optimizer = mz.make_optimizer(opt, [p for p in model.parameters() if p.requires_grad])
    inputs = mz.to_inputs(data, names, 0, batch, torch.float32)
    labels = torch.from_numpy(data['y'][0:batch])
else:
    import transformers
    cfg = transformers.GPT2Config(vocab_size=50304, n_positions=1024, n_embd=768, n_layer=12, n_head=12,
                                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=True)
    cfg.return_dict = False
    cfg.use_cache = False
    cfg._attn_implementation = 'eager'
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    inputs = [torch.randint(0, 50304, (8, 1024))]
    labels = torch.randint(0, 50304, (8, 1024))
t0 = time.time()
compiled = torch.compile(model)
def step():
    out = compiled(*inputs)
    logits = out[0] if isinstance(out, (tuple, list)) else out
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
step()
first = time.time() - t0
t1 = time.time()
step()
print(json.dumps({'first_step_s': first, 'second_step_s': time.time() - t1}))
'''


def time_torch(spec, threads):
    cache = tempfile.mkdtemp(prefix='inductor-bench-')
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, OMP_NUM_THREADS=str(threads))
    results = []
    for _ in range(2):
        cmd = [sys.executable, '-c', WORKER, ZOO, json.dumps(spec), str(threads)]
        _, out = run_timed(cmd, env)
        results.append(json.loads(out.strip().splitlines()[-1]))
    shutil.rmtree(cache)
    return results[0]['first_step_s'], results[1]['first_step_s']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tcc', required=True)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--repeat', type=int, default=1)
    ap.add_argument('--models', default='', help="zoo models, comma-separated ('none': only --gpt2-small)")
    ap.add_argument('--gpt2-small', default='')
    ap.add_argument('--no-torch', action='store_true')
    ap.add_argument('--json', default='')
    args = ap.parse_args()
    try:
        import torch
        have_torch = not args.no_torch and int(torch.__version__.split('.')[0]) >= 2
    except ImportError:
        have_torch = False
    names = [] if args.models == 'none' else args.models.split(',') if args.models else sorted(
        n for n in os.listdir(ZOO) if os.path.isfile(os.path.join(ZOO, n, 'ref.json')) and n != 't5')
    work = tempfile.mkdtemp(prefix='tcc-compile-bench-')
    rows = []
    todo = [('zoo', n) for n in names] + ([('gpt2_small', args.gpt2_small)] if args.gpt2_small else [])
    print('%-14s %9s %9s %9s %11s %11s %8s   %s' % ('model', 'tcc cold', 'tcc warm', 'tcc edit',
                                                    'torch cold', 'torch warm', 'cold x', 'kernels'))
    for kind, name in todo:
        if kind == 'zoo':
            model, flags = prepare_zoo(name, work)
        else:
            model = os.path.join(name, 'model.onnx')
            flags = open(os.path.join(name, 'flags.txt')).read().split()
            name = 'gpt2-small'
        cold, warm, edit, kernels = time_tcc(args.tcc, model, flags, args.threads, args.repeat)
        tc = tw = None
        if have_torch:
            tc, tw = time_torch({'kind': kind, 'name': name}, args.threads)
        row = {'model': name, 'tcc_cold_s': cold, 'tcc_warm_s': warm, 'tcc_edit_s': edit,
               'torch_compile_cold_s': tc, 'torch_compile_warm_s': tw, 'kernels': kernels}
        rows.append(row)
        fmt = lambda v: '%9.2f' % v if v is not None else '%9s' % '-'
        print('%-14s %s %s %s %s  %s %8s   %s' % (name, fmt(cold), fmt(warm), fmt(edit), fmt(tc) + '  ',
                                                  fmt(tw), '%.1fx' % (tc / cold) if tc else '-',
                                                  kernels.replace('tcc: ', '')), flush=True)
    shutil.rmtree(work)
    if args.json:
        json.dump({'threads': args.threads, 'repeat': args.repeat,
                   'torch': __import__('torch').__version__ if have_torch else None, 'rows': rows},
                  open(args.json, 'w'), indent=1)


if __name__ == '__main__':
    main()
