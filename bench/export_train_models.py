#!/usr/bin/python3
"""export_train_models.py - exports the training benchmark's larger model.

gpt4: the GPT-style transformer of scripts/parity/make_references.py (token
and position embeddings, causal multi-head attention, GELU MLP of 4d, layer
norms) at 4 layers, d=256, 4 heads, sequence 128, vocabulary 512, batch 16,
with torch.manual_seed(0). Exported exactly as make_references.py exports
the parity models: before training, training=TrainingMode.TRAINING,
do_constant_folding=False, opset 17, input "tokens", output "logits". Its
initializers are the initial weights that train_bench.py gives every engine.

Usage: export_train_models.py OUT_DIR   (writes OUT_DIR/gpt4/model.onnx;
does nothing when it exists and is newer than this script)
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# The larger model's shape; train_bench.py reads it from here too.
GPT4 = dict(vocab=512, d=256, heads=4, layers=4, t=128)
GPT4_BATCH = 16


def export_gpt4(out):
    path = os.path.join(out, 'gpt4', 'model.onnx')
    if os.path.exists(path) and os.path.getmtime(path) > os.path.getmtime(__file__):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # Imported here: train_bench.py imports this module for GPT4 and must not
    # load torch (and its libgomp) before libtcc_runtime's libomp.
    import torch
    sys.path.insert(0, os.path.join(HERE, '..', 'scripts', 'parity'))
    from make_references import GPT
    torch.manual_seed(0)
    model = GPT(**GPT4)
    tokens = torch.zeros(GPT4_BATCH, GPT4['t'], dtype=torch.int64)
    torch.onnx.export(model, (tokens,), path + '.tmp',
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      opset_version=17, input_names=['tokens'], output_names=['logits'])
    os.replace(path + '.tmp', path)
    print('bench/export_train_models: wrote %s' % path)
    return path


if __name__ == '__main__':
    export_gpt4(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, 'out', 'train'))
