"""train_jax.py - the training benchmark's models and optimizers in JAX.

The same three model kinds as scripts/parity/make_references.py (an MLP, a
CNN with batch norm, a GPT-style transformer), written in jax.numpy with
PyTorch's formulas (nn.Linear's x W^T + b, BatchNorm2d in training mode with
its running statistics, LayerNorm eps 1e-5, exact GELU, -inf causal mask),
plus PyTorch's SGD-with-momentum and AdamW updates written out. Parameters
are a dict keyed by the ONNX initializer names (= PyTorch's state_dict
names), so every engine starts from the same arrays.

make_step(...) returns one jitted training step: forward, mean
cross-entropy, backward, optimizer update, with the parameters, the
non-trained buffers (batch-norm running statistics) and the optimizer state
donated, so XLA updates them in place.
"""

import jax
import jax.numpy as jnp
from jax import lax

BN_MOMENTUM, BN_EPS, LN_EPS = 0.1, 1e-5, 1e-5


def linear(p, name, x):
    y = x @ p[name + '.weight'].T
    bias = p.get(name + '.bias')
    return y if bias is None else y + bias


def mlp(p, buffers, x):
    return linear(p, 'fc2', jax.nn.relu(linear(p, 'fc1', x))), buffers


def batch_norm_train(p, buffers, name, x):
    """BatchNorm2d in training mode: normalize with the batch statistics
    (biased variance), update the running ones with the unbiased variance."""
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    n = x.size // x.shape[1]
    shape = (1, -1, 1, 1)
    y = (x - mean.reshape(shape)) * lax.rsqrt(var.reshape(shape) + BN_EPS)
    y = y * p[name + '.weight'].reshape(shape) + p[name + '.bias'].reshape(shape)
    rm, rv = name + '.running_mean', name + '.running_var'
    new = dict(buffers)
    new[rm] = (1 - BN_MOMENTUM) * buffers[rm] + BN_MOMENTUM * mean
    new[rv] = (1 - BN_MOMENTUM) * buffers[rv] + BN_MOMENTUM * var * (n / (n - 1))
    return y, new


def cnn_bn(p, buffers, x):
    h = lax.conv_general_dilated(x, p['conv.weight'], (1, 1), ((1, 1), (1, 1)),
                                 dimension_numbers=('NCHW', 'OIHW', 'NCHW'))
    h = h + p['conv.bias'].reshape(1, -1, 1, 1)
    h, buffers = batch_norm_train(p, buffers, 'bn', h)
    h = jax.nn.relu(h)
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), 'VALID')
    return linear(p, 'fc', h.reshape(h.shape[0], -1)), buffers


def layer_norm(p, name, x):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + LN_EPS) * p[name + '.weight'] + p[name + '.bias']


def gpt(p, buffers, tokens, heads):
    layers = len({k.split('.')[1] for k in p if k.startswith('blocks.')})
    b, t = tokens.shape
    x = p['tok.weight'][tokens] + p['pos']
    d = x.shape[-1]
    hd = d // heads
    future = jnp.triu(jnp.ones((t, t), bool), 1)
    for i in range(layers):
        blk = 'blocks.%d.' % i
        qkv = linear(p, blk + 'qkv', layer_norm(p, blk + 'ln1', x))
        q, k, v = (qkv[..., j * d:(j + 1) * d].reshape(b, t, heads, hd).transpose(0, 2, 1, 3)
                   for j in range(3))
        att = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / hd ** 0.5)
        att = jnp.where(future, -jnp.inf, att)
        y = jax.nn.softmax(att, axis=-1) @ v
        x = x + linear(p, blk + 'proj', y.transpose(0, 2, 1, 3).reshape(b, t, d))
        h = jax.nn.gelu(linear(p, blk + 'fc1', layer_norm(p, blk + 'ln2', x)), approximate=False)
        x = x + linear(p, blk + 'fc2', h)
    return linear(p, 'head', layer_norm(p, 'ln', x)), buffers


def cross_entropy(logits, labels):
    """Mean over label positions, as F.cross_entropy."""
    logits = logits.reshape(-1, logits.shape[-1])
    labels = labels.reshape(-1)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.take_along_axis(logp, labels[:, None], axis=1).mean()


def init_opt_state(optimizer, params):
    zeros = lambda: {k: jnp.zeros_like(v) for k, v in params.items()}  # noqa: E731
    if optimizer == 'sgd':
        return {'momentum_buffer': zeros()}
    return {'exp_avg': zeros(), 'exp_avg_sq': zeros()}


def make_step(forward, optimizer, momentum=0.9, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    """step(params, buffers, opt_state, x, y, lr, t) -> (params, buffers,
    opt_state, loss); t is the 1-based step (AdamW's bias correction).
    PyTorch's updates: SGD buf = m buf + g (a zero buffer makes the first
    step's buf = g, as PyTorch), p -= lr buf; AdamW p *= 1 - lr wd, then
    Adam with bias correction, p -= lr/bc1 m / (sqrt(v)/sqrt(bc2) + eps)."""

    def loss_fn(params, buffers, x, y):
        logits, buffers = forward(params, buffers, x)
        return cross_entropy(logits, y), buffers

    def step(params, buffers, opt_state, x, y, lr, t):
        (loss, buffers), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, buffers, x, y)
        if optimizer == 'sgd':
            buf = {k: momentum * opt_state['momentum_buffer'][k] + g for k, g in grads.items()}
            params = {k: params[k] - lr * buf[k] for k in params}
            return params, buffers, {'momentum_buffer': buf}, loss
        b1, b2 = betas
        bc1 = 1 - b1 ** t
        bc2 = 1 - b2 ** t
        m = {k: b1 * opt_state['exp_avg'][k] + (1 - b1) * g for k, g in grads.items()}
        v = {k: b2 * opt_state['exp_avg_sq'][k] + (1 - b2) * g * g for k, g in grads.items()}
        params = {
            k: p * (1 - lr * weight_decay) - (lr / bc1) * m[k] / (jnp.sqrt(v[k]) / jnp.sqrt(bc2) + eps)
            for k, p in params.items()
        }
        return params, buffers, {'exp_avg': m, 'exp_avg_sq': v}, loss

    return jax.jit(step, donate_argnums=(0, 1, 2))
