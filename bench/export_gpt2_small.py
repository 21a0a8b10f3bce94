#!/usr/bin/python3
"""export_gpt2_small.py OUT_DIR [--layers L] [--seq T] [--batch B]

Exports a GPT-2-small-shaped Hugging Face model (12 layers, d=768, 12 heads,
vocabulary 50304, positions 1024, tied embeddings, dropout off) with random
initialization for the compile-time benchmark (bench/compile.sh): OUT_DIR/
model.onnx in training mode without constant folding, as test/zoo/make_zoo.py
exports, and OUT_DIR/flags.txt with tcc's flags (AdamW). Runs with Debian's
python3 (python3-torch 1.13, python3-onnx) and transformers 4.36 from
/opt/zoo-pydeps (the install line is in test/zoo/make_zoo.py). Not part of
the test path.
"""
import argparse
import os
import sys

sys.path.insert(0, '/opt/zoo-pydeps')

import torch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('out')
    ap.add_argument('--layers', type=int, default=12)
    ap.add_argument('--seq', type=int, default=1024)
    ap.add_argument('--batch', type=int, default=8)
    args = ap.parse_args()
    import transformers
    transformers.logging.set_verbosity_error()
    cfg = transformers.GPT2Config(vocab_size=50304, n_positions=1024, n_embd=768, n_layer=args.layers,
                                  n_head=12, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                  tie_word_embeddings=True)
    cfg.return_dict = False
    cfg.use_cache = False
    cfg._attn_implementation = 'eager'
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg)
    model.train()
    os.makedirs(args.out, exist_ok=True)
    # Traced at batch 1 with a symbolic batch (tracing batch 8 x 1024 keeps
    # ~16 GB of activations); tcc binds it with --batch.
    ids = torch.randint(0, 50304, (1, args.seq))
    path = os.path.join(args.out, 'model.onnx')
    torch.onnx.export(model, (ids,), path, input_names=['input_ids'], output_names=['logits'],
                      opset_version=17, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, dynamic_axes={'input_ids': {0: 'batch'}})
    with open(os.path.join(args.out, 'flags.txt'), 'w') as f:
        f.write('--batch=%d --loss=cross_entropy --optimizer=adamw --weight-decay=0.01\n' % args.batch)
    print('wrote', path, os.path.getsize(path) // (1 << 20), 'MiB')


if __name__ == '__main__':
    main()
