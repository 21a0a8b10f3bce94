#!/usr/bin/python3
"""make_buffers.py - PyTorch models with registered buffers, for
test/e2e/train-buffers.test. Run with Debian's python3 (python3-torch 1.13,
python3-onnx) from the repository root:

    /usr/bin/python3 test/e2e/Inputs/buffers/make_buffers.py

It writes, beside itself:
  causal_lm.onnx  a one-layer causal-attention language model whose causal
                  mask is `register_buffer("mask", triu(full(-inf), 1))`;
  rotary.onnx     a one-layer attention language model with rotary position
                  embeddings from `register_buffer("inv_freq", ...)` (the
                  causal mask computed in forward, so a constant);
  data/tokens.npy, data/y.npy   20 token sequences of 8 and their next tokens;
  reference.json  PyTorch's per-step losses of 5 AdamW steps (lr 1e-2, PyTorch's
                  defaults otherwise) on the batches tcc-run --no-shuffle takes
                  (batch 4), in fp32 and in float64, and how far apart those are.

Both exports use PyTorch's TorchScript exporter as docs/training.md says
(training mode, no constant folding, opset 17, a symbolic batch). It writes
every persistent buffer as an initializer like the parameters, with nothing
to tell them apart: tcc keeps `mask` as a buffer because it holds -inf (and
warns), and needs `--buffers=inv_freq` for the rotary frequencies.
"""
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from npy_io import write_npy  # noqa: E402

V, D, T = 16, 16, 8
SAMPLES, BATCH, STEPS, LR = 20, 4, 5, 1e-2


class CausalLM(nn.Module):
    """Token and learned position embeddings, one pre-norm single-head
    attention block whose scores get the registered causal mask added, and a
    linear head."""

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Parameter(torch.randn(T, D) * 0.1)
        self.norm = nn.LayerNorm(D)
        self.q = nn.Linear(D, D)
        self.k = nn.Linear(D, D)
        self.v = nn.Linear(D, D)
        self.head = nn.Linear(D, V)
        self.register_buffer('mask', torch.triu(torch.full((T, T), float('-inf')), 1))

    def forward(self, tokens):
        h = self.tok(tokens) + self.pos
        x = self.norm(h)
        scores = self.q(x) @ self.k(x).transpose(1, 2) / math.sqrt(D) + self.mask
        h = h + torch.softmax(scores, -1) @ self.v(x)
        return self.head(h)


def rotate_half(x):
    return torch.cat([-x[..., D // 2:], x[..., :D // 2]], -1)


class RotaryLM(nn.Module):
    """Token embeddings and one single-head causal attention block whose
    queries and keys are rotated by angles position * inv_freq (the rotary
    embeddings of GPT-NeoX and Llama), and a linear head."""

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.q = nn.Linear(D, D, bias=False)
        self.k = nn.Linear(D, D, bias=False)
        self.v = nn.Linear(D, D, bias=False)
        self.head = nn.Linear(D, V)
        self.register_buffer('inv_freq', 1.0 / 10000 ** (torch.arange(0, D, 2).float() / D))

    def forward(self, tokens):
        h = self.tok(tokens)
        t = torch.arange(T, dtype=self.inv_freq.dtype)
        angles = t[:, None] * self.inv_freq[None, :]
        emb = torch.cat([angles, angles], -1)
        cos, sin = emb.cos(), emb.sin()
        q, k = self.q(h), self.k(h)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        causal = torch.ones(T, T, dtype=torch.bool).triu(1)
        scores = (q @ k.transpose(1, 2) / math.sqrt(D)).masked_fill(causal, float('-inf'))
        h = h + torch.softmax(scores, -1) @ self.v(h)
        return self.head(h)


def data():
    g = torch.Generator().manual_seed(11)
    tokens = torch.randint(0, V, (SAMPLES, T + 1), generator=g)
    return tokens[:, :T].contiguous(), tokens[:, 1:].contiguous()


def train(model, tokens, labels):
    """Per-step losses of STEPS AdamW steps on consecutive batches."""
    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    losses = []
    for step in range(STEPS):
        x = tokens[step * BATCH:(step + 1) * BATCH]
        y = labels[step * BATCH:(step + 1) * BATCH]
        loss = F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    torch.set_num_threads(1)
    tokens, labels = data()
    os.makedirs(os.path.join(HERE, 'data'), exist_ok=True)
    write_npy(os.path.join(HERE, 'data', 'tokens.npy'), '<i8', tuple(tokens.shape), tokens.flatten().tolist())
    write_npy(os.path.join(HERE, 'data', 'y.npy'), '<i8', tuple(labels.shape), labels.flatten().tolist())
    reference = {'batch': BATCH, 'steps': STEPS, 'lr': LR, 'optimizer': 'adamw'}
    for name, cls in (('causal_lm', CausalLM), ('rotary', RotaryLM)):
        torch.manual_seed(3)
        model = cls()
        model.train()
        initial = {k: v.clone() for k, v in model.state_dict().items()}
        torch.onnx.export(model, (tokens[:BATCH],), os.path.join(HERE, name + '.onnx'),
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                          opset_version=17, input_names=['tokens'], output_names=['logits'],
                          dynamic_axes={'tokens': {0: 'batch'}})
        losses = train(model, tokens, labels)
        buffers = {k: torch.equal(v, initial[k]) for k, v in model.named_buffers()}
        assert all(buffers.values()), 'PyTorch changed a buffer: %s' % buffers
        model64 = cls().double()
        model64.load_state_dict({k: v.double() for k, v in initial.items()})
        losses64 = train(model64, tokens, labels)
        reference[name] = {
            'buffers': sorted(buffers),
            'losses': losses,
            'losses_float64': losses64,
            'fp32_vs_float64': max(abs(a - b) / abs(b) for a, b in zip(losses, losses64)),
        }
    with open(os.path.join(HERE, 'reference.json'), 'w') as f:
        json.dump(reference, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
