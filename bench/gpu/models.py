"""models.py - the PyTorch definitions of every model the GPU benchmark runs.

MLP, CNN and GPT are scripts/parity/make_references.py's own classes (the
architectures tcc compiles from the parity ONNX files and from gpt2s.onnx),
imported from there. ResNet is the
throughput CNN (ResNet-18-shaped), defined here and exported from here.
The file runs on PyTorch 1.13 (Debian, this machine) and 2.x (the GPU
machine): nothing newer than 1.13's API is used.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


# --- the parity architectures: scripts/parity/make_references.py's own -----
# (the definitions tcc compiles from the parity ONNX files and gpt2s.onnx;
# that file runs on PyTorch 1.13 and 2.x and does nothing on import).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts',
                                'parity'))
from make_references import CNN, GPT, MLP  # noqa: E402


# --- the throughput CNN ------------------------------------------------------

class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 conv + batch norm, a 1x1 projection on
    the shortcut when the shape changes."""

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
