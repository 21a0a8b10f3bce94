"""models.py - the PyTorch definitions of every model the GPU benchmark runs.

MLP, CNN, Block and GPT are copies of scripts/parity/make_references.py (the
architecture tcc compiles from the parity ONNX files and from gpt2s.onnx);
`python3 bench/gpu/models.py --check` verifies that the copies build the same
parameters and compute the same outputs as the originals. ResNet is the
throughput CNN (ResNet-18-shaped), defined here and exported from here.
The file runs on PyTorch 1.13 (Debian, this machine) and 2.x (the GPU
machine): nothing newer than 1.13's API is used.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


# --- copied from scripts/parity/make_references.py (keep identical) ---------

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 6 * 6, 10)

    def forward(self, x):
        h = F.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return self.fc(torch.flatten(h, 1))


class Block(nn.Module):
    def __init__(self, d, heads, t):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.register_buffer('future', torch.triu(torch.ones(t, t, dtype=torch.bool), 1))

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.reshape(b, t, self.heads, hd).transpose(1, 2)
        k = k.reshape(b, t, self.heads, hd).transpose(1, 2)
        v = v.reshape(b, t, self.heads, hd).transpose(1, 2)
        att = (q @ k.transpose(2, 3)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(self.future, float('-inf'))
        y = torch.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=16, d=32, heads=2, layers=2, t=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(t, d) * 0.02)
        self.blocks = nn.ModuleList(Block(d, heads, t) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens):
        x = self.tok(tokens) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


# --- the throughput CNN ------------------------------------------------------

class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 conv + batch norm, a 1x1 projection on
    the shortcut when the shape changes. The batch norms' names hold 'norm'
    so that tcc-run --init sets their scales to ones (its rule goes by name)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.norm1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(cout)
        self.down_conv = self.down_norm = None
        if stride != 1 or cin != cout:
            self.down_conv = nn.Conv2d(cin, cout, 1, stride, bias=False)
            self.down_norm = nn.BatchNorm2d(cout)

    def forward(self, x):
        h = torch.relu(self.norm1(self.conv1(x)))
        h = self.norm2(self.conv2(h))
        return torch.relu(h + (x if self.down_conv is None else self.down_norm(self.down_conv(x))))


class ResNet(nn.Module):
    """ResNet-18 (ImageNet stem: 7x7/2 conv, 3x3/2 max pool; four stages of
    two basic blocks) with `classes` outputs. widths/blocks shrink it."""

    def __init__(self, classes=100, widths=(64, 128, 256, 512), blocks=(2, 2, 2, 2)):
        super().__init__()
        self.conv = nn.Conv2d(3, widths[0], 7, 2, 3, bias=False)
        self.norm = nn.BatchNorm2d(widths[0])
        layers, cin = [], widths[0]
        for i, (w, n) in enumerate(zip(widths, blocks)):
            for j in range(n):
                layers.append(BasicBlock(cin, w, 2 if (i > 0 and j == 0) else 1))
                cin = w
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        h = F.max_pool2d(torch.relu(self.norm(self.conv(x))), 3, 2, 1)
        h = self.layers(h)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(h, 1), 1))


def build(spec):
    """The module that a manifest entry's "torch" field names."""
    classes = {'MLP': MLP, 'CNN': CNN, 'GPT': GPT, 'ResNet': ResNet}
    kwargs = dict(spec.get('kwargs', {}))
    for k in ('widths', 'blocks'):
        if k in kwargs:
            kwargs[k] = tuple(kwargs[k])
    return classes[spec['class']](**kwargs)


def init_params(model, seed):
    """tcc-run --init=SEED's rule (the same distribution, not the same values:
    tcc-run draws from std::mt19937_64): rank >= 2 parameters ~ 0.02 *
    normal(0, 1); rank-1 parameters ones if the lowercased name contains
    'norm', 'ln' or 'gamma', else zeros; rank 0 zero. The names are the
    state_dict keys, which are the ONNX initializer names tcc sees."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)
            elif p.dim() == 1 and any(k in name.lower() for k in ('norm', 'ln', 'gamma')):
                p.fill_(1.0)
            else:
                p.zero_()


def _check():
    """The copies above against scripts/parity/make_references.py."""
    import os
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, '..', '..', 'scripts', 'parity'))
    import make_references as mr
    cases = [(MLP, mr.MLP, {}, torch.randn(4, 32)),
             (CNN, mr.CNN, {}, torch.randn(4, 1, 12, 12)),
             (GPT, mr.GPT, {}, torch.randint(0, 16, (4, 8))),
             (GPT, mr.GPT, dict(vocab=64, d=48, heads=3, layers=3, t=16), torch.randint(0, 64, (2, 16)))]
    for ours, theirs, kw, x in cases:
        torch.manual_seed(7)
        a = ours(**kw)
        torch.manual_seed(7)
        b = theirs(**kw)
        sa, sb = a.state_dict(), b.state_dict()
        assert list(sa) == list(sb), (ours.__name__, list(sa), list(sb))
        for k in sa:
            assert sa[k].shape == sb[k].shape and torch.equal(sa[k], sb[k]), (ours.__name__, k)
        a.train()
        b.train()
        assert torch.equal(a(x), b(x)), ours.__name__
    print('models.py: MLP, CNN, GPT identical to scripts/parity/make_references.py')


if __name__ == '__main__':
    _check()
