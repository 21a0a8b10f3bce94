"""remat_bench.py - memory against step time under rematerialization, tcc and
PyTorch 2.x (torch.utils.checkpoint per block), on the CPU.

Run with Debian's Python (/usr/bin/python3, numpy) from the repository root
after scripts/build.sh; PyTorch runs in --torch-python (default
bench/.venv-torch2/bin/python: `python3 -m venv bench/.venv-torch2 &&
bench/.venv-torch2/bin/pip install torch numpy`):

    /usr/bin/python3 bench/remat_bench.py [--steps 4] [--rounds 3] [--threads 2]
        [--out DIR] [--shares 75,50,35] [--models gpt,cnn]

For the 6-layer GPT of docs/memory.md (d=256, 4 heads, seq 256, vocab 256,
batch 8, AdamW) and a ResNet (test/e2e/Inputs/resnet.tcc at width 32, 32x32
images, 4 blocks, batch 16, SGD): tcc without a budget, with budgets of state
+ 75 / 50 / 35 % of the plain arena, and --remat=max; PyTorch with and without
checkpointing every block. Memory: the plan (arena + state, tcc-run --list)
and the peak resident set of one poisoned training step (tcc-run --poison
--steps 1: every arena byte written; ru_maxrss, which includes code and
libraries); step time: the median of --rounds x --steps steps, timed one by
one, tcc's artifacts interleaved round by round (bench/step_time.py), and
PyTorch's after one warm-up step. Prints a Markdown table."""
import argparse
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import step_time  # noqa: E402
from tcc_runtime import TccRuntime  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TCC = os.path.join(ROOT, 'build', 'bin', 'tcc')
TCC_RUN = os.path.join(ROOT, 'build', 'bin', 'tcc-run')

GPT = dict(L=6, D=256, H=4, T=256, V=256, B=8)
CNN = dict(C=32, S=32, N=4, B=16)


def child_peak_kib(cmd):
    """Runs CMD in a fresh child and returns (seconds, its peak RSS in KiB)."""
    code = ('import resource,subprocess,sys,time;t=time.time();'
            'subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);'
            'print(time.time()-t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)')
    out = subprocess.run([sys.executable, '-c', code] + cmd, check=True, capture_output=True,
                         text=True).stdout.split()
    return float(out[0]), int(out[1])


def tcc_rows(name, model, flags, data, args, shares):
    work, threads = args.out, args.threads
    plain = os.path.join(work, name.split()[0] + '-plain.so')
    subprocess.run([TCC, model] + flags + ['-o', plain], check=True, capture_output=True)
    listing = subprocess.run([TCC_RUN, plain, '--list'], check=True, capture_output=True, text=True).stdout
    arena = int(re.search(r'^arena: (\d+)', listing, re.M).group(1))
    state = int(re.search(r'^state: (\d+)', listing, re.M).group(1))
    configs = [('no budget', [])]
    for share in shares:
        configs.append(('state + %d%% arena' % share,
                        ['--memory-budget=%d' % (state + arena * share // 100)]))
    configs.append(('--remat=max', ['--remat=max']))
    built = []  # (label, artifact or None when refused, plan bytes or the refusal, RSS, share)
    rows = []
    for label, extra in configs:
        so = os.path.join(work, '%s-%d.so' % (name.split()[0], len(built)))
        p = subprocess.run([TCC, model] + flags + extra + ['-o', so, '--report=memory'],
                           capture_output=True, text=True)
        if p.returncode != 0:
            built.append((label, None, p.stderr.splitlines()[0][:90], 0, ''))
            continue
        share = re.search(r'recomputed \d+ value\(s\).*?([0-9.]+)% of the step', p.stderr)
        listing = subprocess.run([TCC_RUN, so, '--list'], check=True, capture_output=True, text=True).stdout
        planned = sum(int(x) for x in re.findall(r'^(?:arena|state): (\d+)', listing, re.M))
        _, rss = child_peak_kib([TCC_RUN, so, '--data', data, '--lr', '0.001', '--init', '1',
                                 '--no-shuffle', '--threads', str(threads), '--steps', '1', '--poison'])
        built.append((label, so, planned, rss, share.group(1) + '%' if share else '0%'))
    # Step times, the artifacts interleaved round by round.
    rt = TccRuntime(os.path.join(ROOT, 'build/lib/libtcc_runtime.so'))
    import numpy as np
    rng = np.random.default_rng(0)
    times = {so: [] for _, so, _, _, _ in built if so}
    for _ in range(args.rounds):
        for so in times:
            times[so] += [t[0] for t in step_time.time_steps(rt, so, args.steps, threads, rng)]
    base = statistics.median(times[built[0][1]])
    for label, so, planned, rss, share in built:
        if not so:  # refused: PLANNED holds the message
            rows.append((name, 'tcc ' + label, 'refused: ' + planned, '', '', ''))
            continue
        m = statistics.median(times[so])
        rows.append((name, 'tcc ' + label, '%.1f MiB' % (planned / 2**20), '%.0f MiB' % (rss / 1024),
                     share, '%.0f ms (%.2fx)' % (1000 * m, m / base)))
    return rows


TORCH_GPT = r'''
import sys, time, torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
L, D, H, T, V, B, ckpt, steps, threads = [int(a) for a in sys.argv[1:]]
torch.set_num_threads(threads); torch.manual_seed(0)
class Block(nn.Module):
    def __init__(s):
        super().__init__(); s.ln1 = nn.LayerNorm(D); s.qkv = nn.Linear(D, 3 * D); s.proj = nn.Linear(D, D)
        s.ln2 = nn.LayerNorm(D); s.fc1 = nn.Linear(D, 4 * D); s.fc2 = nn.Linear(4 * D, D)
        s.register_buffer('mask', torch.triu(torch.ones(T, T, dtype=torch.bool), 1))
    def forward(s, x):
        q, k, v = s.qkv(s.ln1(x)).split(D, 2)
        q, k, v = [t.reshape(B, T, H, D // H).transpose(1, 2) for t in (q, k, v)]
        a = (q @ k.transpose(-1, -2)) * (1.0 / (D // H) ** 0.5)
        a = a.masked_fill(s.mask, float('-inf')).softmax(-1)
        x = x + s.proj((a @ v).transpose(1, 2).reshape(B, T, D))
        return x + s.fc2(F.gelu(s.fc1(s.ln2(x))))
class GPT(nn.Module):
    def __init__(s):
        super().__init__(); s.tok = nn.Embedding(V, D); s.pos = nn.Parameter(torch.zeros(T, D))
        s.blocks = nn.ModuleList([Block() for _ in range(L)]); s.ln = nn.LayerNorm(D)
    def forward(s, t):
        x = s.tok(t) + s.pos
        for b in s.blocks:
            x = checkpoint(b, x, use_reentrant=False) if ckpt else b(x)
        return s.ln(x) @ s.tok.weight.T
m = GPT(); opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
t = torch.randint(0, V, (B, T)); y = torch.randint(0, V, (B, T))
def step():
    opt.zero_grad(); F.cross_entropy(m(t).reshape(-1, V), y.reshape(-1)).backward(); opt.step()
step(); ts = []
for _ in range(steps):
    t0 = time.perf_counter(); step(); ts.append(time.perf_counter() - t0)
print(sorted(ts)[len(ts) // 2])
'''

TORCH_CNN = r'''
import sys, time, torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
C, S, N, B, ckpt, steps, threads = [int(a) for a in sys.argv[1:]]
torch.set_num_threads(threads); torch.manual_seed(0)
class Block(nn.Module):
    def __init__(s):
        super().__init__(); s.c1 = nn.Conv2d(C, C, 3, padding=1, bias=False); s.b1 = nn.BatchNorm2d(C)
        s.c2 = nn.Conv2d(C, C, 3, padding=1, bias=False); s.b2 = nn.BatchNorm2d(C)
    def forward(s, x):
        return F.relu(s.b2(s.c2(F.relu(s.b1(s.c1(x))))) + x)
class Net(nn.Module):
    def __init__(s):
        super().__init__(); s.stem = nn.Conv2d(3, C, 3, padding=1, bias=False); s.bn = nn.BatchNorm2d(C)
        s.blocks = nn.ModuleList([Block() for _ in range(N)]); s.fc = nn.Linear(C * S * S // 4, 10)
    def forward(s, x):
        h = F.relu(s.bn(s.stem(x)))
        for b in s.blocks:
            h = checkpoint(b, h, use_reentrant=False) if ckpt else b(h)
        return s.fc(F.avg_pool2d(h, 2).flatten(1))
m = Net(); opt = torch.optim.SGD(m.parameters(), lr=1e-3, momentum=0.9)
x = torch.randn(B, 3, S, S); y = torch.randint(0, 10, (B,))
def step():
    opt.zero_grad(); F.cross_entropy(m(x), y).backward(); opt.step()
step(); ts = []
for _ in range(steps):
    t0 = time.perf_counter(); step(); ts.append(time.perf_counter() - t0)
print(sorted(ts)[len(ts) // 2])
'''


def torch_rows(name, script, sizes, args):
    rows = []
    for ckpt in (0, 1):
        code = ('import resource,subprocess,sys;p=subprocess.run(sys.argv[1:],check=True,capture_output=True,text=True);'
                'print(p.stdout.strip(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)')
        out = subprocess.run([sys.executable, '-c', code, args.torch_python, '-c', script] +
                             [str(v) for v in sizes] +
                             [str(ckpt), str(args.steps * args.rounds), str(args.threads)],
                             check=True, capture_output=True, text=True).stdout.split()
        rows.append((name, 'PyTorch' + (' + checkpoint per block' if ckpt else ''), '',
                     '%.0f MiB' % (int(out[1]) / 1024), '', '%.0f ms' % (1000 * float(out[0]))))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--steps', type=int, default=4)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--torch-python', default=os.path.join(ROOT, 'bench/.venv-torch2/bin/python'))
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--out', default='/tmp/remat-bench')
    ap.add_argument('--shares', default='75,50,35',
                    help='budgets: state + these percentages of the plain arena')
    ap.add_argument('--models', default='gpt,cnn')
    args = ap.parse_args()
    shares = [int(x) for x in args.shares.split(',') if x]
    os.makedirs(args.out, exist_ok=True)
    gdata, cdata = os.path.join(args.out, 'gpt-data'), os.path.join(args.out, 'cnn-data')
    subprocess.run([sys.executable, os.path.join(ROOT, 'test/e2e/Inputs/lm_data.py'), gdata, '64',
                    str(GPT['T']), str(GPT['V'])], check=True)
    subprocess.run([sys.executable, os.path.join(ROOT, 'test/e2e/Inputs/image_data.py'), cdata, '64',
                    str(3 * CNN['S'] ** 2), '10'], check=True)
    gflags = ['--batch=%d' % GPT['B']] + ['--dim=%s=%d' % (k, GPT[k]) for k in 'LDHTV']
    cflags = (['--batch=%d' % CNN['B']] + ['--dim=%s=%d' % (k, CNN[k]) for k in 'CSN'] +
              ['--dim=F=%d' % (3 * CNN['S'] ** 2)])
    print('| model | configuration | plan (arena + state) | peak RSS | recomputed | step (median) |')
    print('|---|---|---|---|---|---|', flush=True)

    def show(rows):
        for r in rows:
            print('| ' + ' | '.join(r) + ' |', flush=True)
    if 'cnn' in args.models:
        show(tcc_rows('ResNet 4x32', os.path.join(ROOT, 'test/e2e/Inputs/resnet.tcc'), cflags,
                      cdata, args, shares))
        show(torch_rows('ResNet 4x32', TORCH_CNN, [CNN[k] for k in ('C', 'S', 'N', 'B')], args))
    if 'gpt' in args.models:
        show(tcc_rows('GPT 6x256', os.path.join(ROOT, 'examples/gpt.tcc'), gflags, gdata, args,
                      shares))
        show(torch_rows('GPT 6x256', TORCH_GPT, [GPT[k] for k in 'LDHTVB'], args))

if __name__ == '__main__':
    main()
