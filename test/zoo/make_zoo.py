#!/usr/bin/python3
"""make_zoo.py - the PyTorch side of the model zoo (test/zoo/).

Third-party architectures (torchvision, Hugging Face transformers, torch.nn's
recurrent layers), made small with their own width / depth knobs, exported
with torch.onnx.export in training mode, with PyTorch's training as the
reference. Run with Debian's python3 (python3-torch 1.13, python3-torchvision
0.14, python3-onnx 1.12, numpy) from the repository root:

    /usr/bin/python3 test/zoo/make_zoo.py [MODEL ...]      (default: all)

Hugging Face transformers 4.36 runs on that torch; it is installed outside the
repository, and this script puts /opt/zoo-pydeps on sys.path:

    python3 -m pip install --no-deps --target /opt/zoo-pydeps \\
        transformers==4.36.2 huggingface-hub==0.20.3 tokenizers==0.15.2 \\
        safetensors==0.4.2 packaging==26.4 filelock==4.3.1 regex==2026.11.19 \\
        tqdm==4.70.1 fsspec==2026.9.0

(Debian already has pyyaml, requests, typing_extensions.) No hub access: every
model is built from a config object with random initialization.

For each model it writes test/zoo/<name>/:
  model.onnx  the export (opset 17, training mode, no constant folding) with
              every regenerated float initializer as external data in
              weights.bin (64-byte aligned offsets); weights.bin itself is not
              committed: zoo_common.write_weights regenerates it from ref.json
              (this script checks that it reproduces the exported bytes);
  ref.json    the weights list, PyTorch's 30 fp32 losses, statistics of the
              float64 first-step update of every parameter and batch-norm
              running statistic, PyTorch fp32's own error on them, the flags.
and the shared data sets test/zoo/data/<kind>/ (Fashion-MNIST images from
Debian's dataset-fashion-mnist; byte tokens of /usr/share/common-licenses/GPL-3).

Weights: the model is built with PyTorch's default init under a fixed seed;
then every float parameter and batch-norm running statistic is replaced by
regenerated values: a tensor whose values are all equal stays that constant,
any other becomes float32(mean + std sqrt(3) u), u = det_uniform(seed) (the same
mean and standard deviation as PyTorch's init, uniformly spread). Other float
buffers are computed constants (rotary tables); they keep their values inline
in the ONNX file and are named buffers in tcc (--buffers), as they are not
trained in PyTorch. The tests need none of this: only numpy (check_zoo.py).
"""
import copy
import gzip
import json
import math
import os
import sys
import warnings

ZOO_PYDEPS = '/opt/zoo-pydeps'
sys.path.insert(0, ZOO_PYDEPS)

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import zoo_common as zc  # noqa: E402

STEPS = 30
# A float64 update below NOISE times the fp32 one is rounding noise of a zero.
NOISE = 1e-4
# PyTorch's fp32 losses are an oracle of the exact trajectory while they stay
# this close to its float64 losses; past that step (the loss horizon) the
# training is chaotic at fp32 precision and no fp32 implementation can be
# held to 1e-3.
HORIZON_TOL = 1e-4
SEED = 0
# tcc-run --seed of the models with dropout or stochastic depth (TccRandom
# draws their masks as tcc does).
RANDOM_SEED = 7

# ----------------------------------------------------------------------------
# Data (shared folders under test/zoo/data/)

FMNIST = '/usr/share/datasets/fashion-mnist'
TEXT = '/usr/share/common-licenses/GPL-3'


def _idx(path):
    with gzip.open(path, 'rb') as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], 'big') for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def data_images(n=128):
    """Fashion-MNIST's first n training images, 28x28 padded to 32x32, replicated
    to 3 channels, normalized with the data set's mean and std."""
    x = _idx(os.path.join(FMNIST, 'train-images-idx3-ubyte.gz'))[:n].astype(np.float32) / 255.0
    y = _idx(os.path.join(FMNIST, 'train-labels-idx1-ubyte.gz'))[:n].astype(np.int64)
    x = np.pad(x, ((0, 0), (2, 2), (2, 2)))
    x = (x - 0.2860) / 0.3530
    x = np.repeat(x[:, None], 3, axis=1).astype(np.float32)
    return {'x': np.ascontiguousarray(x), 'y': y}


def _text_bytes():
    with open(TEXT, 'rb') as f:
        return np.frombuffer(f.read(), dtype=np.uint8).astype(np.int64)


def data_text_lm(n=64, t=32):
    """Language modelling: n sequences of t byte tokens of the GPL-3 text; y is
    the next byte at every position."""
    b = _text_bytes()
    seq = np.stack([b[i * (t + 1):(i + 1) * (t + 1)] for i in range(n)])
    return {'input_ids': np.ascontiguousarray(seq[:, :t]), 'y': np.ascontiguousarray(seq[:, 1:])}


def _text_cls_rows(n, t):
    b = _text_bytes()[8192:]
    ids = np.stack([b[i * t:(i + 1) * t] for i in range(n)])
    # Label: more than the median number of spaces in the sequence.
    spaces = (ids == ord(' ')).sum(axis=1)
    y = (spaces > np.median(spaces)).astype(np.int64)
    return ids, y


def data_text_cls(n=64, t=32):
    """Sequence classification: n sequences of t byte tokens (another part of the
    GPL-3 text); label 1 when the sequence has more spaces than the median."""
    ids, y = _text_cls_rows(n, t)
    return {'input_ids': np.ascontiguousarray(ids), 'y': y}


DATA = {
    'images': data_images,
    'text_lm': data_text_lm,
    'text_cls': data_text_cls,
}

# ----------------------------------------------------------------------------
# Models


def hf():
    import transformers
    transformers.logging.set_verbosity_error()
    return transformers


def hf_common(cfg):
    """Return tuples, not ModelOutput dicts (the first element is the logits), and
    no key/value cache outputs. Transformers 5 returns tuples only at the top
    level (its models read their submodules' outputs by name), so there the
    output stays a ModelOutput and loss_of takes its logits."""
    if int(hf().__version__.split('.')[0]) < 5:
        cfg.return_dict = False
    cfg.use_cache = False
    cfg._attn_implementation = 'eager'
    return cfg


class RecurrentClassifier(nn.Module):
    """Embedding -> one torch.nn recurrent layer (LSTM or GRU) -> linear head on
    the last time step."""

    def __init__(self, cell, vocab=256, embed=32, hidden=64, classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.rnn = cell(embed, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, input_ids):
        out, _ = self.rnn(self.embed(input_ids))
        return self.head(out[:, -1])


def m_resnet18():
    return torchvision.models.resnet18(num_classes=10)


def m_mobilenet_v2():
    return torchvision.models.mobilenet_v2(num_classes=10, width_mult=0.5, dropout=0.0)


def m_vit(p=0.0):
    from torchvision.models.vision_transformer import VisionTransformer
    m = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=64,
                          mlp_dim=128, dropout=p, attention_dropout=p, num_classes=10)
    # torchvision starts the head at zero, so the first step would change
    # only the head; a small random head makes every tensor's first update
    # count in the one-step check.
    torch.nn.init.normal_(m.heads.head.weight, std=0.02)
    return m


def m_densenet():
    from torchvision.models.densenet import DenseNet
    return DenseNet(growth_rate=8, block_config=(2, 2, 2, 2), num_init_features=16, bn_size=2,
                    drop_rate=0.0, num_classes=10)


def m_regnet():
    from torchvision.models.regnet import BlockParams, RegNet
    params = BlockParams.from_init_params(depth=4, w_0=8, w_a=8.0, w_m=2.0, group_width=8, se_ratio=0.25)
    return RegNet(params, num_classes=10, stem_width=16)


def m_convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    return ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)], stochastic_depth_prob=0.0,
                    num_classes=10)


def m_mnasnet():
    return torchvision.models.MNASNet(alpha=0.25, num_classes=10, dropout=0.0)


def m_googlenet():
    return torchvision.models.GoogLeNet(num_classes=10, aux_logits=False, transform_input=False,
                                        init_weights=True, dropout=0.0)


def m_shufflenet_v2():
    return torchvision.models.ShuffleNetV2(stages_repeats=[2, 2, 2], stages_out_channels=[16, 32, 64, 128, 256],
                                           num_classes=10)


def m_squeezenet():
    return torchvision.models.squeezenet1_1(num_classes=10, dropout=0.0)


def m_efficientnet():
    from torchvision.models.efficientnet import EfficientNet, MBConvConfig
    # EfficientNet-B0's stage table at width 0.25, one layer per stage.
    cfg = lambda e, k, s, i, o, n: MBConvConfig(e, k, s, i, o, n, width_mult=0.25, depth_mult=0.25)
    setting = [cfg(1, 3, 1, 32, 16, 1), cfg(6, 3, 2, 16, 24, 2), cfg(6, 5, 2, 24, 40, 2),
               cfg(6, 3, 2, 40, 80, 3), cfg(6, 5, 1, 80, 112, 3), cfg(6, 5, 2, 112, 192, 4),
               cfg(6, 3, 1, 192, 320, 1)]
    return EfficientNet(setting, dropout=0.0, stochastic_depth_prob=0.0, num_classes=10)


def m_gpt2(p=0.0):
    t = hf()
    cfg = hf_common(t.GPT2Config(vocab_size=256, n_positions=32, n_embd=64, n_layer=2, n_head=2,
                                 resid_pdrop=p, embd_pdrop=p, attn_pdrop=p, tie_word_embeddings=True))
    return t.GPT2LMHeadModel(cfg)


def m_bert(p=0.0):
    t = hf()
    cfg = hf_common(t.BertConfig(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                 intermediate_size=128, max_position_embeddings=32, hidden_dropout_prob=p,
                                 attention_probs_dropout_prob=p, classifier_dropout=p, num_labels=2))
    return t.BertForSequenceClassification(cfg)


def m_distilbert():
    t = hf()
    cfg = hf_common(t.DistilBertConfig(vocab_size=256, dim=64, n_layers=2, n_heads=2, hidden_dim=128,
                                       max_position_embeddings=32, dropout=0.0, attention_dropout=0.0,
                                       seq_classif_dropout=0.0, num_labels=2))
    return t.DistilBertForSequenceClassification(cfg)


def m_llama():
    t = hf()
    cfg = hf_common(t.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32,
                                  attention_dropout=0.0))
    return t.LlamaForCausalLM(cfg)


class T5EncoderClassifier(nn.Module):
    """Hugging Face's T5 encoder (transformers.T5EncoderModel: relative position
    buckets, RMS layer norms, ReLU feed-forward) with a linear head on the
    mean of its last hidden states. T5ForSequenceClassification reads the
    hidden state at the </s> token, which its export selects with NonZero, a
    data-dependent shape that a statically shaped compiler cannot take."""

    def __init__(self, cfg, classes=2):
        super().__init__()
        t = hf()
        self.encoder = t.T5EncoderModel(cfg)
        self.head = nn.Linear(cfg.d_model, classes)

    def forward(self, input_ids):
        hidden = self.encoder(input_ids=input_ids)[0]
        return self.head(hidden.mean(dim=1))


def m_t5():
    t = hf()
    cfg = hf_common(t.T5Config(vocab_size=256, d_model=64, d_kv=32, d_ff=128, num_layers=2, num_heads=2,
                               relative_attention_num_buckets=8, relative_attention_max_distance=32,
                               dropout_rate=0.0, is_encoder_decoder=False))
    return T5EncoderClassifier(cfg)


def m_lstm():
    return RecurrentClassifier(nn.LSTM)


def m_gru():
    return RecurrentClassifier(nn.GRU)


def sgd(lr, momentum=0.9, weight_decay=0.0):
    flags = ['--optimizer=sgd', '--momentum=%g' % momentum]
    if weight_decay:
        flags.append('--weight-decay=%g' % weight_decay)
    return ('sgd', dict(lr=lr, momentum=momentum, weight_decay=weight_decay), flags)


def adam(lr, weight_decay=0.0, eps=1e-8):
    """Adam; eps above PyTorch's 1e-8 where the first step would otherwise
    divide rounding noise by itself: gradients near zero by cancellation
    (the BN CNNs) get the size of the step from their sign, which no fp32
    implementation computes reliably, PyTorch's own included."""
    flags = ['--optimizer=adam'] + (['--eps=%g' % eps] if eps != 1e-8 else [])
    return ('adam', dict(lr=lr, weight_decay=weight_decay, eps=eps), flags)


def adamw(lr, weight_decay=0.01):
    return ('adamw', dict(lr=lr, weight_decay=weight_decay), ['--optimizer=adamw', '--weight-decay=%g' % weight_decay])


# name: (constructor, source, data kind, batch, optimizer)
MODELS = {
    'resnet18': (m_resnet18, 'torchvision.models.resnet18(num_classes=10)', 'images', 16,
                 sgd(0.05, 0.9, 5e-4)),
    'mobilenet_v2': (m_mobilenet_v2, 'torchvision.models.mobilenet_v2(num_classes=10, width_mult=0.5, dropout=0.0)',
                     'images', 16, adam(1e-3, eps=1e-6)),
    'vit': (m_vit, 'torchvision.models.vision_transformer.VisionTransformer(image_size=32, patch_size=8, '
            'num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128, dropout=0.0, attention_dropout=0.0, '
            'num_classes=10)', 'images', 16, sgd(0.01, 0.9)),
    'densenet': (m_densenet, 'torchvision.models.densenet.DenseNet(growth_rate=8, block_config=(2, 2, 2, 2), '
                 'num_init_features=16, bn_size=2, drop_rate=0.0, num_classes=10)', 'images', 16,
                 sgd(0.05, 0.9, 5e-4)),
    'regnet': (m_regnet, 'torchvision.models.regnet.RegNet(BlockParams.from_init_params(depth=4, w_0=8, w_a=8.0, '
               'w_m=2.0, group_width=8, se_ratio=0.25), num_classes=10, stem_width=16)', 'images', 16,
               sgd(0.05, 0.9)),
    'convnext': (m_convnext, 'torchvision.models.convnext.ConvNeXt([CNBlockConfig(16, 32, 1), '
                 'CNBlockConfig(32, None, 1)], stochastic_depth_prob=0.0, num_classes=10)', 'images', 16,
                 adamw(1e-3, 0.05)),
    'mnasnet': (m_mnasnet, 'torchvision.models.MNASNet(alpha=0.25, num_classes=10, dropout=0.0)', 'images', 16,
                adam(1e-3, eps=1e-6)),
    'googlenet': (m_googlenet, 'torchvision.models.GoogLeNet(num_classes=10, aux_logits=False, '
                  'transform_input=False, init_weights=True, dropout=0.0)', 'images', 16, sgd(0.02, 0.9)),
    'shufflenet_v2': (m_shufflenet_v2, 'torchvision.models.ShuffleNetV2(stages_repeats=[2, 2, 2], '
                      'stages_out_channels=[16, 32, 64, 128, 256], num_classes=10)', 'images', 16, sgd(0.05, 0.9)),
    'squeezenet': (m_squeezenet, 'torchvision.models.squeezenet1_1(num_classes=10, dropout=0.0)', 'images', 16,
                   adam(1e-3)),
    'efficientnet': (m_efficientnet, 'torchvision.models.efficientnet.EfficientNet(<EfficientNet-B0 stages, '
                     'MBConvConfig(..., width_mult=0.25, depth_mult=0.25)>, dropout=0.0, stochastic_depth_prob=0.0, '
                     'num_classes=10)', 'images', 16, adamw(1e-3)),
    'gpt2': (m_gpt2, 'transformers.GPT2LMHeadModel(GPT2Config(vocab_size=256, n_positions=32, n_embd=64, n_layer=2, '
             'n_head=2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=True))', 'text_lm', 8,
             adamw(1e-3)),
    'bert': (m_bert, 'transformers.BertForSequenceClassification(BertConfig(vocab_size=256, hidden_size=64, '
             'num_hidden_layers=2, num_attention_heads=2, intermediate_size=128, max_position_embeddings=32, '
             'hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, classifier_dropout=0.0, num_labels=2))',
             'text_cls', 8, adamw(1e-4)),
    'distilbert': (m_distilbert, 'transformers.DistilBertForSequenceClassification(DistilBertConfig(vocab_size=256, '
                   'dim=64, n_layers=2, n_heads=2, hidden_dim=128, max_position_embeddings=32, dropout=0.0, '
                   'attention_dropout=0.0, seq_classif_dropout=0.0, num_labels=2))', 'text_cls', 8, adam(1e-4)),
    'llama': (m_llama, 'transformers.LlamaForCausalLM(LlamaConfig(vocab_size=256, hidden_size=64, '
              'intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, '
              'max_position_embeddings=32, attention_dropout=0.0))', 'text_lm', 8, adamw(1e-3)),
    't5': (m_t5, 'T5EncoderClassifier(transformers.T5EncoderModel(T5Config(vocab_size=256, d_model=64, d_kv=32, '
           'd_ff=128, num_layers=2, num_heads=2, relative_attention_num_buckets=8, relative_attention_max_distance=32, '
           'dropout_rate=0.0)), classes=2) (make_zoo.py: a linear head on the mean of the last hidden states)',
           'text_cls', 8, adamw(1e-4)),
    # Dropout on (p = 0.1 where the architecture has it): PyTorch's reference
    # draws tcc's masks (TccRandom), so the check is exact, not statistical.
    'gpt2_dropout': (lambda: m_gpt2(0.1), 'transformers.GPT2LMHeadModel(GPT2Config(vocab_size=256, n_positions=32, '
                     'n_embd=64, n_layer=2, n_head=2, resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1, '
                     'tie_word_embeddings=True))', 'text_lm', 8, adamw(1e-3)),
    'bert_dropout': (lambda: m_bert(0.1), 'transformers.BertForSequenceClassification(BertConfig(vocab_size=256, '
                     'hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128, '
                     'max_position_embeddings=32, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, '
                     'classifier_dropout=0.1, num_labels=2))', 'text_cls', 8, adamw(1e-4)),
    'vit_dropout': (lambda: m_vit(0.1), 'torchvision.models.vision_transformer.VisionTransformer(image_size=32, '
                    'patch_size=8, num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128, dropout=0.1, '
                    'attention_dropout=0.1, num_classes=10)', 'images', 16, sgd(0.01, 0.9)),
    'lstm': (m_lstm, 'RecurrentClassifier(torch.nn.LSTM, vocab=256, embed=32, hidden=64, classes=2) '
             '(make_zoo.py: Embedding -> LSTM(batch_first=True) -> Linear on the last step)', 'text_cls', 8,
             adam(1e-3)),
    'gru': (m_gru, 'RecurrentClassifier(torch.nn.GRU, vocab=256, embed=32, hidden=64, classes=2) '
            '(make_zoo.py: Embedding -> GRU(batch_first=True) -> Linear on the last step)', 'text_cls', 8,
            sgd(0.1, 0.9)),
}

# ----------------------------------------------------------------------------
# PyTorch training


def is_bn_stat(module, name):
    owner, _, leaf = name.rpartition('.')
    mod = module.get_submodule(owner) if owner else module
    return isinstance(mod, nn.modules.batchnorm._BatchNorm) and leaf in ('running_mean', 'running_var')


def state_tensors(module):
    """(name, tensor) of every float parameter (ties once) and batch-norm running
    statistic: the tensors tcc trains or updates."""
    out = [(n, p) for n, p in module.named_parameters() if p.is_floating_point()]
    out += [(n, b) for n, b in module.named_buffers() if b.is_floating_point() and is_bn_stat(module, n)]
    return out


class TccRandom:
    """PyTorch's dropout and torchvision's stochastic depth drawing tcc's
    random numbers, so that a model trained with them has an exact reference.
    tcc draws element i of the ONNX node with index s in the step with rng =
    [seed, counter] from Philox4x32-10 at (i, s, counter) under key seed
    (docs/training.md "Dropout"; zoo_common.philox_first_words); tcc-run sets
    counter to the step's index from 0. A Dropout node keeps an element when
    the word's top 24 bits reach ceil(ratio 2^24); RandomUniformLike draws
    those bits times 2^-24, and the exports compare that with the keep
    probability (Less: PyTorch 2's exporter writes torchvision's stochastic
    depth and an in-place dropout so).

    While active (a context manager), every call of
    torch.nn.functional.dropout and torchvision.ops.stochastic_depth in
    training mode takes the next of the export's random nodes (Dropout and
    RandomUniformLike, in graph order: exporters write nodes in the order the
    forward runs them; the count, and a Dropout node's ratio, are checked) and
    multiplies by its mask over the keep probability, as PyTorch does with
    its own draws."""

    def __init__(self, graph, seed):
        wanted = {node.input[1] for node in graph.node if node.op_type == 'Dropout' and len(node.input) > 1}
        constants = {init.name: onnx.numpy_helper.to_array(init) for init in graph.initializer
                     if init.name in wanted}
        for node in graph.node:
            if node.op_type == 'Constant' and node.output[0] in wanted:
                for attr in node.attribute:
                    if attr.name == 'value':
                        constants[node.output[0]] = onnx.numpy_helper.to_array(attr.t)
        self.nodes = []  # (node index, Dropout's ratio or None for RandomUniformLike)
        for index, node in enumerate(graph.node):
            if node.op_type == 'Dropout':
                ratio = float(constants[node.input[1]]) if len(node.input) > 1 and node.input[1] else 0.5
                self.nodes.append((index, ratio))
            elif node.op_type == 'RandomUniformLike':
                self.nodes.append((index, None))
        self.seed = seed
        self.counter = None
        self.calls = 0

    def active(self):
        """Whether the model draws anything."""
        return any(ratio is None or ratio > 0.0 for _, ratio in self.nodes)

    def __enter__(self):
        import torchvision.ops.stochastic_depth  # noqa: F401 (the module, not the function)
        self._sd_module = sys.modules['torchvision.ops.stochastic_depth']
        self._dropout, self._stochastic_depth = F.dropout, self._sd_module.stochastic_depth
        F.dropout, self._sd_module.stochastic_depth = self.dropout, self.stochastic_depth
        return self

    def __exit__(self, *exc):
        F.dropout, self._sd_module.stochastic_depth = self._dropout, self._stochastic_depth
        self.counter = None

    def begin_step(self, counter):
        self.counter, self.calls = counter, 0

    def end_step(self):
        if self.calls != len(self.nodes):
            raise SystemExit('TccRandom: the forward pass drew %d times, the export has %d random nodes'
                             % (self.calls, len(self.nodes)))

    def _keep(self, p, shape):
        """The next random node's keep mask over SHAPE for drop probability P."""
        if self.calls >= len(self.nodes):
            raise SystemExit('TccRandom: more draws than random nodes (%d)' % len(self.nodes))
        stream, ratio = self.nodes[self.calls]
        self.calls += 1
        n = int(np.prod(shape))
        if ratio is not None:
            if abs(ratio - p) > 1e-6:
                raise SystemExit('TccRandom: draw %d has p %g, Dropout node %d ratio %g'
                                 % (self.calls, p, stream, ratio))
            keep = zc.dropout_keep(ratio, self.seed, self.counter, stream, n)
        else:
            words = zc.philox_first_words(np.arange(n, dtype=np.uint64), stream, self.counter, self.seed)
            u = (words >> np.uint64(8)).astype(np.float64) * 2.0 ** -24
            keep = u < np.float32(1.0 - p)
        return keep.reshape(shape)

    def _apply(self, input, p, shape):
        noise = torch.from_numpy(self._keep(p, shape)).to(input.dtype)
        return input * (noise / (1.0 - p) if p < 1.0 else noise)

    def dropout(self, input, p=0.5, training=True, inplace=False):
        if not training or self.counter is None:
            return self._dropout(input, p, training, inplace)
        if p == 0.0 and self.calls < len(self.nodes) and self.nodes[self.calls][1] != 0.0:
            return input  # not exported (a Dropout node of ratio 0 is)
        return self._apply(input, p, tuple(input.shape))

    def stochastic_depth(self, input, p, mode, training=True):
        if not training or p == 0.0 or self.counter is None:
            return self._stochastic_depth(input, p, mode, training)
        shape = (input.shape[0],) + (1,) * (input.ndim - 1) if mode == 'row' else (1,) * input.ndim
        return self._apply(input, p, shape)


_RANDOM = None  # the TccRandom of the reference being computed, if any


def make_optimizer(opt, params):
    kind, kw, _ = opt
    cls = {'sgd': torch.optim.SGD, 'adam': torch.optim.Adam, 'adamw': torch.optim.AdamW}[kind]
    return cls(params, **kw)


def to_inputs(data, names, lo, hi, dtype):
    out = []
    for name in names:
        a = torch.from_numpy(np.ascontiguousarray(data[name][lo:hi]))
        out.append(a.to(dtype) if a.is_floating_point() else a)
    return out


def loss_of(model, data, names, lo, hi, dtype):
    out = model(*to_inputs(data, names, lo, hi, dtype))
    logits = out[0] if isinstance(out, (tuple, list)) else getattr(out, 'logits', out)
    y = torch.from_numpy(data['y'][lo:hi])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def train(model, opt, data, names, batch, steps, dtype):
    # Hugging Face builds masks with torch.full(..., finfo(dtype).min) in the
    # default dtype: float64 runs need float64 as the default.
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        return _train(model, opt, data, names, batch, steps, dtype)
    finally:
        torch.set_default_dtype(previous)


def _train(model, opt, data, names, batch, steps, dtype):
    model.train()
    optimizer = make_optimizer(opt, [p for p in model.parameters() if p.requires_grad])
    per_epoch = data['y'].shape[0] // batch
    losses = []
    for step in range(steps):
        i = step % per_epoch
        if _RANDOM:
            _RANDOM.begin_step(step)
        loss = loss_of(model, data, names, i * batch, (i + 1) * batch, dtype)
        if _RANDOM:
            _RANDOM.end_step()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    return losses


def first_step_update(model, opt, data, names, batch, dtype):
    """{module tensor name: float64 change} of one step on batch 0."""
    before = {n: t.detach().to(torch.float64).clone() for n, t in state_tensors(model)}
    train(model, opt, data, names, batch, 1, dtype)
    after = dict(state_tensors(model))
    return {n: (after[n].detach().to(torch.float64) - before[n]).numpy() for n in before}


# ----------------------------------------------------------------------------
# One model


def regenerate(name, model):
    """Replaces the tensors of state_tensors by regenerated values; returns
    {module tensor name: weights entry (without offset)}."""
    entries = {}
    with torch.no_grad():
        for tname, t in state_tensors(model):
            v = t.detach().to(torch.float64).numpy()
            e = {'name': tname, 'shape': list(t.shape)}
            if v.size and np.all(v == v.reshape(-1)[0]):
                e['const'] = float(v.reshape(-1)[0])
            else:
                e['mean'] = float(v.mean())
                e['half_width'] = float(v.std() * math.sqrt(3.0))
                e['seed'] = zc.tensor_seed(name, tname)
            t.copy_(torch.from_numpy(zc.weight_values(e)))
            entries[tname] = e
    return entries


def export_torchscript(model, inputs, names, onnx_path):
    """PyTorch 1.13's TorchScript exporter in training mode, opset 17, no
    constant folding."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        torch.onnx.export(model, inputs, onnx_path, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, opset_version=17, input_names=names,
                          output_names=['logits'])


def build(name, out_dir, models=MODELS, export=export_torchscript, name_buffers=True):
    """Exports models[name] with export(model, inputs, input names, path) and
    writes out_dir/name/{model.onnx,ref.json}. name_buffers: pass the float
    initializers that are not parameters (buffers) to tcc with --buffers;
    without it tcc must find them itself (the dynamo exporter marks them)."""
    ctor, source, kind, batch, opt = models[name]
    data_dir = os.path.join(HERE, 'data', kind)
    data = {f[:-4]: np.load(os.path.join(data_dir, f)) for f in sorted(os.listdir(data_dir)) if f.endswith('.npy')}
    names = [k for k in data if k != 'y']
    torch.manual_seed(SEED)
    model = ctor()
    model.train()
    entries = regenerate(name, model)
    initial = copy.deepcopy(model.state_dict())
    frozen_params = [n for n, p in model.named_parameters() if not p.requires_grad]

    # Export (the tracing forward in training mode updates the batch-norm
    # statistics of the module; the ONNX initializers get our values below).
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    onnx_path = os.path.join(d, 'model.onnx')
    export(model, tuple(to_inputs(data, names, 0, batch, torch.float32)), names, onnx_path)
    model.load_state_dict(initial)

    # Map ONNX initializers to module tensors: by name, else by bytes.
    m = onnx.load(onnx_path)
    by_bytes = {}
    for tname, e in entries.items():
        if 'seed' in e:
            by_bytes.setdefault(zc.weight_values(e).tobytes(), []).append(tname)
    weights, onnx_of, extra_float = [], {}, []
    bn_stats = {n for n in entries if is_bn_stat(model, n)}
    for init in m.graph.initializer:
        if init.data_type != onnx.TensorProto.FLOAT:
            continue
        arr = onnx.numpy_helper.to_array(init)
        tname = init.name if init.name in entries else None
        if tname is None:
            cands = by_bytes.get(arr.astype(np.float32).tobytes(), [])
            tname = cands[0] if len(cands) == 1 else None
        if tname is None or tname in onnx_of:
            extra_float.append(init.name)
            continue
        e = dict(entries[tname], name=init.name)
        if list(arr.shape) != e['shape']:
            raise SystemExit('%s: %s has shape %s in ONNX, %s in PyTorch' % (name, init.name, arr.shape, e['shape']))
        # The export wrote the module's values, except the statistics its
        # tracing forward changed.
        if tname not in bn_stats and arr.astype(np.float32).tobytes() != zc.weight_values(e).tobytes():
            raise SystemExit('%s: %s: the regenerated values differ from the export' % (name, init.name))
        weights.append(e)
        onnx_of[tname] = init.name
    zc.layout(weights)
    by_name = {e['name']: e for e in weights}
    for init in m.graph.initializer:
        e = by_name.get(init.name)
        if e is None:
            continue
        size = 4 * int(np.prod(e['shape'], dtype=np.int64))
        init.ClearField('raw_data')
        init.ClearField('float_data')
        init.data_location = onnx.TensorProto.EXTERNAL
        del init.external_data[:]
        for k, v in (('location', zc.WEIGHTS_FILE), ('offset', str(e['offset'])), ('length', str(size))):
            kv = init.external_data.add()
            kv.key, kv.value = k, v
    with open(onnx_path, 'wb') as f:
        f.write(m.SerializeToString())
    # The checker's writer reproduces the exported bytes (read back through onnx).
    bin_path = os.path.join(d, zc.WEIGHTS_FILE)
    zc.write_weights(weights, bin_path)
    back = onnx.load(onnx_path)
    for init in back.graph.initializer:
        if init.name in by_name:
            got = onnx.numpy_helper.to_array(init, base_dir=d)
            if got.tobytes() != zc.weight_values(by_name[init.name]).tobytes():
                raise SystemExit('%s: %s: weights.bin does not reproduce it' % (name, init.name))
    os.remove(bin_path)

    # Tensors tcc must not train: PyTorch's frozen parameters, and float
    # initializers that are buffers (computed constants), which the
    # TorchScript exporter writes like parameters.
    freeze = sorted({onnx_of[n] for n in frozen_params if n in onnx_of})
    tcc_flags = ['--loss=cross_entropy'] + opt[2] + (['--freeze=' + ','.join(freeze)] if freeze else [])
    if name_buffers and extra_float:
        tcc_flags.append('--buffers=' + ','.join(sorted(extra_float)))
    run_flags = ['--lr', '%g' % opt[1]['lr']]
    random = TccRandom(m.graph, RANDOM_SEED)
    if random.active():
        run_flags += ['--seed', str(RANDOM_SEED)]

    # References: fp32 losses; float64 and fp32 first steps (with tcc's
    # random draws where the model draws).
    global _RANDOM
    with random:
        _RANDOM = random if random.active() else None
        try:
            losses = train(model, opt, data, names, batch, STEPS, torch.float32)
            model.load_state_dict(initial)
            losses64 = train(copy.deepcopy(model).double(), opt, data, names, batch, STEPS, torch.float64)
            upd32 = first_step_update(copy.deepcopy(model), opt, data, names, batch, torch.float32)
            upd64 = first_step_update(copy.deepcopy(model).double(), opt, data, names, batch, torch.float64)
        finally:
            _RANDOM = None
    updates, fp32_err, excluded = {}, {}, {}
    for tname, oname in onnx_of.items():
        n = upd64[tname].size
        if tname in frozen_params:
            excluded[oname] = 'frozen in PyTorch (requires_grad=False)'
            continue
        ref = zc.update_stats(oname, upd64[tname])
        ref32 = zc.update_stats(oname, upd32[tname])
        if ref['l1'] == 0.0:
            excluded[oname] = 'the float64 update is exactly zero'
            continue
        if ref['l2'] < NOISE * ref32['l2']:
            # Zero in exact arithmetic (a bias whose shift a later
            # normalization or softmax removes, the batch mean of a
            # zero-mean input): both steps are rounding noise.
            excluded[oname] = ('zero in exact arithmetic: the float64 update (l2 %.1e) is rounding noise, '
                               'PyTorch fp32 gives l2 %.1e' % (ref['l2'], ref32['l2']))
            continue
        updates[oname] = ref
        fp32_err[oname] = zc.update_error(ref32, ref, n)
    for tname in entries:
        if tname not in onnx_of:
            raise SystemExit('%s: %s is not an ONNX initializer' % (name, tname))
    ref = {
        'name': name,
        'source': source,
        'batch': batch,
        'steps': STEPS,
        'optimizer': dict(opt[1], kind=opt[0]),
        'tcc_flags': tcc_flags,
        'run_flags': run_flags,
        'data': 'data/' + kind,
        'inputs': names,
        'ops': sorted({n.op_type for n in m.graph.node}),
        'params': int(sum(p.numel() for p in model.parameters())),
        'losses': losses,
        'losses_float64': losses64,
        'torch_fp32_loss_error': max(abs(a - b) / abs(b) for a, b in zip(losses, losses64)),
        'loss_horizon': next((i for i, (a, b) in enumerate(zip(losses, losses64))
                              if abs(a - b) > HORIZON_TOL * abs(b)), len(losses)),
        'updates': updates,
        'torch_fp32_update_error': fp32_err,
        'excluded': excluded,
        'weights': weights,
    }
    with open(os.path.join(d, 'ref.json'), 'w') as f:
        json.dump(ref, f, indent=1)
    worst = max(fp32_err.items(), key=lambda kv: kv[1])
    print('%s: %d params, %d ops, loss %.4f -> %.4f, torch fp32 vs f64: losses %.1e, update %.1e (%s); '
          'onnx %d KB' % (name, ref['params'], len(ref['ops']), losses[0], losses[-1],
                          ref['torch_fp32_loss_error'], worst[1], worst[0], os.path.getsize(onnx_path) // 1024),
          flush=True)


def write_data():
    os.makedirs(os.path.join(HERE, 'data'), exist_ok=True)
    for kind, make in DATA.items():
        d = os.path.join(HERE, 'data', kind)
        os.makedirs(d, exist_ok=True)
        for k, v in make().items():
            np.save(os.path.join(d, k + '.npy'), v)


def build_all(names, **kw):
    """Builds each model, reporting a failure and going on with the next."""
    failed = []
    for name in names:
        try:
            build(name, HERE, **kw)
        except Exception as e:  # report and go on with the next model
            print('%s: FAILED: %s: %s' % (name, type(e).__name__, str(e).splitlines()[0] if str(e) else ''), flush=True)
            failed.append(name)
    if failed:
        sys.exit('failed: ' + ' '.join(failed))


def main():
    torch.set_num_threads(2)
    write_data()
    build_all(sys.argv[1:] or list(MODELS))


if __name__ == '__main__':
    main()
