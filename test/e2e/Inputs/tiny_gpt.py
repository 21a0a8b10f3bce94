#!/usr/bin/env python3
"""tiny_gpt.py - a one-layer GPT-style model and toy data for
test/e2e/train-gpt.test (standard library only).

  tiny_gpt.py model OUT.onnxtxt   token + position embeddings (Gather), a
      pre-norm block (LayerNormalization, single-head causal self-attention:
      MatMul, scaled, causal mask by Where, Softmax; GELU MLP written with
      Erf), a final LayerNormalization and a tied-size output projection;
      vocab 12, d 16, sequence 8; PyTorch-like seeded initialization.
  tiny_gpt.py data DIR N        N sequences of a deterministic pattern task
      (each sequence counts up from a random start, modulo the vocabulary):
      DIR/tokens.npy (N x 8 int64) and DIR/y.npy (the next tokens).
"""
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npy_io import write_npy  # noqa: E402

V, D, T, F = 12, 16, 8, 32


def fmt(values):
    return '{' + ', '.join('%.6f' % v for v in values) + '}'


def model(path, seed=0):
    rng = random.Random(seed)

    def normal(n, std=0.1):
        return [rng.gauss(0, std) for _ in range(n)]

    inits = [
        ('float[%d, %d]' % (V, D), 'tok_emb', normal(V * D)),
        ('float[%d, %d]' % (T, D), 'pos_emb', normal(T * D)),
        ('float[%d]' % D, 'ln1_g', [1.0] * D), ('float[%d]' % D, 'ln1_b', [0.0] * D),
        ('float[%d, %d]' % (D, D), 'wq', normal(D * D)), ('float[%d, %d]' % (D, D), 'wk', normal(D * D)),
        ('float[%d, %d]' % (D, D), 'wv', normal(D * D)), ('float[%d, %d]' % (D, D), 'wo', normal(D * D)),
        ('float[%d]' % D, 'ln2_g', [1.0] * D), ('float[%d]' % D, 'ln2_b', [0.0] * D),
        ('float[%d, %d]' % (D, F), 'w1', normal(D * F)), ('float[%d]' % F, 'b1', [0.0] * F),
        ('float[%d, %d]' % (F, D), 'w2', normal(F * D)), ('float[%d]' % D, 'b2', [0.0] * D),
        ('float[%d]' % D, 'lnf_g', [1.0] * D), ('float[%d]' % D, 'lnf_b', [0.0] * D),
        ('float[%d, %d]' % (D, V), 'w_out', normal(D * V)),
    ]
    mask = [0.0 if j <= i else 1.0 for i in range(T) for j in range(T)]
    lines = [
        '<ir_version: 8, opset_import: ["" : 17]>',
        'tiny_gpt (int64[B, %d] tokens) => (float[B, %d, %d] logits)' % (T, T, V),
        '<',
        ',\n'.join('  %s %s = %s' % (t, n, fmt(v)) for t, n, v in inits) + ',',
        '  bool[%d, %d] future = {%s},' % (T, T, ', '.join('1' if m else '0' for m in mask)),
        '  float neg = {-1e9},',
        '  float scale = {%.6f},' % (1 / math.sqrt(D)),
        '  float half = {0.5}, float one = {1.0}, float rsqrt2 = {0.707107}',
        '>',
        '{',
        '  tok = Gather(tok_emb, tokens)',
        '  h0 = Add(tok, pos_emb)',
        '  a_in, m1, r1 = LayerNormalization<axis = -1, epsilon = 1e-5>(h0, ln1_g, ln1_b)',
        '  q = MatMul(a_in, wq)',
        '  k = MatMul(a_in, wk)',
        '  v = MatMul(a_in, wv)',
        '  kt = Transpose<perm = [0, 2, 1]>(k)',
        '  s0 = MatMul(q, kt)',
        '  s1 = Mul(s0, scale)',
        '  s2 = Where(future, neg, s1)',
        '  p = Softmax<axis = -1>(s2)',
        '  att = MatMul(p, v)',
        '  o = MatMul(att, wo)',
        '  h1 = Add(h0, o)',
        '  m_in, m2, r2 = LayerNormalization<axis = -1, epsilon = 1e-5>(h1, ln2_g, ln2_b)',
        '  f0 = MatMul(m_in, w1)',
        '  f1 = Add(f0, b1)',
        '  e0 = Mul(f1, rsqrt2)',
        '  e1 = Erf(e0)',
        '  e2 = Add(e1, one)',
        '  e3 = Mul(f1, e2)',
        '  g = Mul(e3, half)',
        '  f2 = MatMul(g, w2)',
        '  f3 = Add(f2, b2)',
        '  h2 = Add(h1, f3)',
        '  hf, m3, r3 = LayerNormalization<axis = -1, epsilon = 1e-5>(h2, lnf_g, lnf_b)',
        '  logits = MatMul(hf, w_out)',
        '}',
    ]
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


def data(out, n, seed=1):
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    tokens, labels = [], []
    for _ in range(n):
        start = rng.randrange(V)
        seq = [(start + i) % V for i in range(T + 1)]
        tokens += seq[:T]
        labels += seq[1:]
    write_npy(os.path.join(out, 'tokens.npy'), '<i8', [n, T], tokens)
    write_npy(os.path.join(out, 'y.npy'), '<i8', [n, T], labels)


if __name__ == '__main__':
    if sys.argv[1] == 'model':
        model(sys.argv[2])
    else:
        data(sys.argv[2], int(sys.argv[3]))
