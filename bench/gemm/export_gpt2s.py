#!/usr/bin/python3
"""export_gpt2s.py OUT_DIR - a GPT-2-small-shaped model at sequence 64.

The GPT of scripts/parity/make_references.py (the parity GPT's and gpt4's
architecture) at GPT-2 small's widths: d=768, 12 heads, MLP 4d, vocabulary
50304, sequence 64, 2 layers (every layer has the same matmul shapes, so
two show them all, at a fraction of the compile time). Exported like the
parity models (training mode, no constant folding, opset 17, input
"tokens"). bench/gemm/run.sh times its library calls; not a test.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'scripts', 'parity'))

import torch  # noqa: E402
from make_references import GPT  # noqa: E402

SHAPE = dict(vocab=50304, d=768, heads=12, layers=2, t=64)


def main():
    out = sys.argv[1]
    path = os.path.join(out, 'model.onnx')
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = GPT(**SHAPE)
    tokens = torch.zeros(1, SHAPE['t'], dtype=torch.int64)
    torch.onnx.export(model, (tokens,), path + '.tmp', training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=17, input_names=['tokens'],
                      output_names=['logits'], dynamic_axes={'tokens': {0: 'batch'}})
    os.replace(path + '.tmp', path)
    print('bench/gemm/export_gpt2s: wrote', path)


if __name__ == '__main__':
    main()
