#!/usr/bin/python3
"""make_references.py - the PyTorch side of the training-parity tests.

Run with Debian's python3 and python3-torch (1.13, CPU):
    /usr/bin/python3 scripts/parity/make_references.py test/parity
For each model (an MLP, a CNN with batch norm, a two-layer GPT-style
transformer) it writes into OUT/<model>/:
  model.onnx      exported BEFORE training, in training mode
                  (training=TrainingMode.TRAINING, do_constant_folding=False,
                  opset 17), so its initializers are the initial weights, with
                  a symbolic batch axis (tcc --batch=16 binds it; the
                  data-parallel test compiles it at 8 for each of two ranks);
  data/x.npy (or tokens.npy), data/y.npy
                  the training samples, seeded;
  <optimizer>.json
                  {"lr": ..., "losses": [...]} for 50 steps of PyTorch
                  training in float32 on the batches tcc-run --no-shuffle
                  takes (batch i = samples [i*B, (i+1)*B), wrapping), with
                  mean cross-entropy, for SGD with momentum 0.9 and for AdamW
                  (PyTorch defaults otherwise).
The tests (test/parity/*.test) need no PyTorch: they compare tcc's losses
with the stored curves (relative 1e-3). The data and models are small, so
regenerating is cheap; the files are committed.
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = 50


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


def write_npy(path, array):
    np.save(path, array)


def run(out, name, make_model, inputs, labels, batch, input_name, optimizers):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, 'data'), exist_ok=True)
    write_npy(os.path.join(d, 'data', input_name + '.npy'), inputs.numpy())
    write_npy(os.path.join(d, 'data', 'y.npy'), labels.numpy().astype(np.int64))
    torch.manual_seed(0)
    model = make_model()
    torch.onnx.export(model, (inputs[:batch],), os.path.join(d, 'model.onnx'),
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      opset_version=17, input_names=[input_name], output_names=['logits'],
                      dynamic_axes={input_name: {0: 'batch'}, 'logits': {0: 'batch'}})
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    per_epoch = inputs.shape[0] // batch
    for opt_name, lr, make_opt in optimizers:
        model.load_state_dict(initial)
        model.train()
        opt = make_opt(model.parameters(), lr)
        losses = []
        for step in range(STEPS):
            i = step % per_epoch
            xb, yb = inputs[i * batch:(i + 1) * batch], labels[i * batch:(i + 1) * batch]
            logits = model(xb)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), yb.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss))
        if losses[-1] > 0.7 * losses[0]:
            raise SystemExit('%s/%s: the loss falls by less than 30%%: %s' % (name, opt_name, losses))
        with open(os.path.join(d, opt_name + '.json'), 'w') as f:
            json.dump({'lr': lr, 'steps': STEPS, 'batch': batch, 'losses': losses}, f, indent=0)
        print('%s %s: loss %.4f -> %.4f' % (name, opt_name, losses[0], losses[-1]))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else 'test/parity'
    torch.manual_seed(1234)
    sgd = lambda params, lr: torch.optim.SGD(params, lr=lr, momentum=0.9)
    adamw = lambda params, lr: torch.optim.AdamW(params, lr=lr)

    # MLP: two Gaussian-ish clusters per class in 32-D.
    centers = torch.randn(10, 32)
    y = torch.randint(0, 10, (256,))
    x = centers[y] + 0.8 * torch.randn(256, 32)
    run(out, 'mlp', MLP, x, y, 16, 'x', [('sgd', 0.05, sgd), ('adamw', 0.003, adamw)])

    # CNN with batch norm: 12x12 images with a class-dependent blob.
    y = torch.randint(0, 10, (256,))
    x = 0.5 * torch.randn(256, 1, 12, 12)
    for i in range(256):
        r, c = divmod(int(y[i]), 5)
        x[i, 0, 2 + 4 * r:6 + 4 * r, 1 + 2 * c:4 + 2 * c] += 1.5
    run(out, 'cnn_bn', CNN, x, y, 16, 'x', [('sgd', 0.02, sgd), ('adamw', 0.003, adamw)])

    # GPT: sequences that count up from a random start (mod 16).
    starts = torch.randint(0, 16, (256, 1))
    seq = (starts + torch.arange(9)) % 16
    run(out, 'gpt', GPT, seq[:, :8].contiguous(), seq[:, 1:].contiguous(), 16, 'tokens',
        [('sgd', 0.1, sgd), ('adamw', 0.003, adamw)])


if __name__ == '__main__':
    main()
