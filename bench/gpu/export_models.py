#!/usr/bin/python3
"""export_models.py - the GPU benchmark's throughput models, their data and
their FLOP counts.

  gpt2s     the GPT of scripts/parity/make_references.py (imported from
            there) at GPT-2-small shape: 12 layers, d=768, 12 heads,
            sequence 1024, vocabulary 50304, batch 8 (~163M parameters:
            the head is not tied to the embedding);
  resnet18  bench/gpu/models.py's ResNet (ResNet-18, ImageNet stem) on
            3x112x112 images, 100 classes, batch 64.

Exported exactly as make_references.py exports the parity models: before
training, torch.manual_seed(0), training=TrainingMode.TRAINING,
do_constant_folding=False, opset 17, float32, input "tokens" / "x", output
"logits". The ONNX files stay on this machine (gpt2s's weights are ~650 MB
of initializers, embedded: tcc reads them from the one file); only tcc's
artifacts travel, and tcc-run --init=SEED initializes the parameters there.

--small shrinks both (2-layer d=128 GPT at sequence 128, a narrow ResNet on
32x32) so that the CPU dry run (bench/gpu/run.sh --cpu-dry-run) can step
them in seconds.

Per model it writes OUT/<name>/model.onnx, OUT/<name>/data/*.npy (seeded
random tokens with next-token labels; random images and labels) and
OUT/<name>/info.json (shapes, batch, parameter and FLOP counts). A model
whose info.json already records the same configuration is not exported
again.

Usage: /usr/bin/python3 bench/gpu/export_models.py OUT [--small] [--layers N]
Run with Debian's python3 and python3-torch 1.13 (as make_references.py),
with OpenBLAS on LD_LIBRARY_PATH (prepare.sh does that): the export traces
one forward pass of gpt2s (~2.3 TFLOP), which takes ~1 min on OpenBLAS and
over 10 min on Debian's default reference BLAS.
"""
import argparse
import warnings
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', '..', 'scripts', 'parity'))

import models  # noqa: E402
from make_references import GPT  # noqa: E402  (the class tcc's parity models use)

GPT2S = dict(vocab=50304, d=768, heads=12, layers=12, t=1024)
GPT2S_BATCH = 8
GPT_SMALL = dict(vocab=512, d=128, heads=4, layers=2, t=128)
GPT_SMALL_BATCH = 4
RESNET = dict(classes=100, widths=[64, 128, 256, 512], blocks=[2, 2, 2, 2])
RESNET_IMAGE, RESNET_BATCH = 112, 64
RESNET_SMALL = dict(classes=100, widths=[16, 32, 64, 128], blocks=[1, 1, 1, 1])
RESNET_SMALL_IMAGE, RESNET_SMALL_BATCH = 32, 8
TOKEN_BATCHES = 8  # batches of tokens shipped (tcc-run cycles through them)
IMAGE_BATCHES = 1  # one batch of images: 9.6 MB at full size


def gpt_flops(cfg, batch):
    """Training FLOPs per step (PaLM's count): 6 x (matmul parameters) per
    token, plus 12 x layers x d x t per token for the attention scores and
    their weighted sum (forward 2 matmuls of 2*t*d per token, backward
    twice that; the causal mask halves nothing in an unfused
    implementation). Embedding lookups, norms, softmax and the optimizer
    are not counted."""
    d, L, t, v = cfg['d'], cfg['layers'], cfg['t'], cfg['vocab']
    matmul_params = L * (3 * d * d + d * d + 8 * d * d) + d * v
    tokens = batch * t
    return 6 * matmul_params * tokens + 12 * L * d * t * tokens, matmul_params


def conv_net_flops(model, x):
    """Training FLOPs per step of a CNN: 3x the forward multiply-adds (x2)
    of every convolution and linear layer (backward: the input gradient and
    the weight gradient each cost one forward), counted with forward hooks
    on one batch. Batch norm, ReLU, pooling and the optimizer are not
    counted."""
    total = [0]

    def conv_hook(m, inp, out):
        k = m.kernel_size[0] * m.kernel_size[1] * (m.in_channels // m.groups)
        total[0] += 2 * k * out.numel()

    def linear_hook(m, inp, out):
        total[0] += 2 * m.in_features * out.numel()

    hooks = []
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, torch.nn.Linear):
            hooks.append(m.register_forward_hook(linear_hook))
    model.eval()  # batch norm on one sample: running statistics
    with torch.no_grad():
        model(x)
    model.train()
    for h in hooks:
        h.remove()
    return 3 * total[0]


def export(model, example, path, input_name):
    warnings.filterwarnings('ignore')  # the tracer's notes on every block
    tmp = path + '.tmp'
    torch.onnx.export(model, (example,), tmp, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=17,
                      input_names=[input_name], output_names=['logits'])
    os.replace(tmp, path)


def up_to_date(d, info):
    try:
        with open(os.path.join(d, 'info.json')) as f:
            old = json.load(f)
    except (OSError, ValueError):
        return False
    return old.get('config') == info['config'] and os.path.exists(os.path.join(d, 'model.onnx'))


def write_model(out, name, info, make_model, example, data):
    d = os.path.join(out, name)
    if up_to_date(d, info):
        print('export_models: %s is up to date' % d)
        return
    os.makedirs(os.path.join(d, 'data'), exist_ok=True)
    torch.manual_seed(0)
    model = make_model()
    info['params'] = sum(p.numel() for p in model.parameters())
    if info['flops_per_step'] is None:  # counted on one sample
        info['flops_per_step'] = conv_net_flops(model, example[:1]) * example.shape[0]
    model.train()
    t0 = time.time()
    export(model, example, os.path.join(d, 'model.onnx'), info['input'])
    info['export_s'] = round(time.time() - t0, 1)
    info['onnx_bytes'] = os.path.getsize(os.path.join(d, 'model.onnx'))
    for k, v in data.items():
        np.save(os.path.join(d, 'data', k + '.npy'), v)
    with open(os.path.join(d, 'info.json'), 'w') as f:
        json.dump(info, f, indent=1)
    print('export_models: wrote %s (%.1f MB ONNX, %.1fM parameters, %.3g FLOP/step, export %.0f s)'
          % (d, info['onnx_bytes'] / 1e6, info['params'] / 1e6, info['flops_per_step'], info['export_s']))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('out')
    ap.add_argument('--small', action='store_true', help='tiny shapes for the CPU dry run')
    ap.add_argument('--layers', type=int, help='GPT layers (a fallback when 12 does not compile)')
    a = ap.parse_args()

    gcfg = dict(GPT_SMALL if a.small else GPT2S)
    if a.layers:
        gcfg['layers'] = a.layers
    gb = GPT_SMALL_BATCH if a.small else GPT2S_BATCH
    flops, mm = gpt_flops(gcfg, gb)
    rng = np.random.default_rng(0)
    seqs = rng.integers(0, gcfg['vocab'], (TOKEN_BATCHES * gb, gcfg['t'] + 1), dtype=np.int64)
    info = dict(config=dict(model='GPT', kwargs=gcfg, batch=gb), input='tokens', batch=gb,
                items_per_step=gb * gcfg['t'], unit='tokens', flops_per_step=flops,
                matmul_params=mm,
                flops_formula='6 * matmul_params * tokens + 12 * layers * d * t * tokens (PaLM)')
    write_model(a.out, 'gpt2s', info, lambda: GPT(**gcfg),
                torch.zeros(gb, gcfg['t'], dtype=torch.int64),
                dict(tokens=seqs[:, :-1].copy(), y=seqs[:, 1:].copy()))

    rcfg = dict(RESNET_SMALL if a.small else RESNET)
    size = RESNET_SMALL_IMAGE if a.small else RESNET_IMAGE
    rb = RESNET_SMALL_BATCH if a.small else RESNET_BATCH
    x = rng.standard_normal((IMAGE_BATCHES * rb, 3, size, size), dtype=np.float32)
    y = rng.integers(0, rcfg['classes'], (IMAGE_BATCHES * rb,), dtype=np.int64)
    # rev 2: batch norms named norm* (tcc-run --init's name rule).
    info = dict(config=dict(model='ResNet', kwargs=rcfg, batch=rb, image=size, rev=2), input='x',
                batch=rb, items_per_step=rb, unit='images', flops_per_step=None,
                flops_formula='3 * forward conv+linear FLOPs (2 per multiply-add), by forward hooks')
    write_model(a.out, 'resnet18', info, lambda: models.ResNet(**rcfg),
                torch.zeros(rb, 3, size, size), dict(x=x, y=y))


if __name__ == '__main__':
    main()
