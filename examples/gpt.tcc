# A GPT-2-style language model: token and position embeddings, L blocks of
# causal multi-head attention and a GELU MLP with pre-layer-norms, a final
# layer norm and a tied output head. The sizes are those of the parity test
# (test/parity/gpt); scale it up from the command line:
#
#   tcc examples/gpt.tcc --batch=16 -o gpt.so                    # this size
#   tcc examples/gpt.tcc --batch=8 --dim L=12 --dim D=768 --dim H=12 \
#       --dim V=50257 --dim T=1024 -o gpt2.so                      # GPT-2 small
#
# --dim TIED=0 gives the head its own weight (head.weight), as the parity
# test's PyTorch model has.

const V = 16      # vocabulary
const T = 8       # context length
const P = T       # positions the model has embeddings for (P >= T; set it
                  # for length buckets: --dim P=256 --length-buckets T=64,128,256)
const D = 32      # model width
const H = 2       # attention heads
const L = 2       # blocks
const TIED = 1

fn linear(x, n_in, n_out, has_bias = true) {
  param weight: [n_out, n_in] = kaiming_uniform(a = sqrt(5))
  let y = x @ weight.T
  if has_bias {
    param bias: [n_out] = uniform(-1 / sqrt(n_in), 1 / sqrt(n_in))
    y = y + bias
  }
  return y
}

fn embed(ids, n, d) {
  param weight: [n, d] = normal(0, 1)
  return embedding(weight, ids)
}

fn norm(x, d) {
  param weight: [d] = ones
  param bias: [d] = zeros
  return layer_norm(x, weight, bias, eps = 1e-5)
}

# Attention written out: heads split from the width, scaled dot products,
# the future masked, softmax over the keys.
fn attention(x, d, heads) {
  let b = x.shape[0]
  let t = x.shape[1]
  let hd = d / heads
  let q, k, v = split(linear(x, d, 3 * d) as qkv, 3, axis = 2)
  q = transpose(reshape(q, [b, t, heads, hd]), [0, 2, 1, 3])
  k = transpose(reshape(k, [b, t, heads, hd]), [0, 2, 1, 3])
  v = transpose(reshape(v, [b, t, heads, hd]), [0, 2, 1, 3])
  let att = (q @ k.T) * (1.0 / sqrt(hd))
  let future = reshape(arange(t), [1, t]) > reshape(arange(t), [t, 1])
  att = where(future, -inf, att)
  let y = transpose(softmax(att, axis = -1) @ v, [0, 2, 1, 3])
  return linear(reshape(y, [b, t, d]), d, d) as proj
}

fn block(x, d, heads) {
  x = x + attention(norm(x, d) as ln1, d, heads)
  let h = gelu(linear(norm(x, d) as ln2, d, 4 * d) as fc1)
  return x + linear(h, 4 * d, d) as fc2
}

model gpt(tokens: i64[B, T]) {
  let emb = embed(tokens, V, D) as tok
  param pos: [P, D] = normal(0, 0.02)
  let x = emb + pos[0:T]
  for i in 0..L {
    x = block(x, D, H) as blocks[i]
  }
  x = norm(x, D) as ln
  if TIED {
    output logits = x @ tok.weight.T
  } else {
    output logits = linear(x, D, V, has_bias = false) as head
  }
}

train {
  loss = cross_entropy
  optimizer = adamw
  weight_decay = 0.01
}
