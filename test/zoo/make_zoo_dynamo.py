#!/opt/tcc/zoo-dynamo-venv/bin/python
"""make_zoo_dynamo.py - zoo models exported by current PyTorch's default exporter.

The same models, data, weights and references as make_zoo.py (whose functions
this script reuses), exported the way a user of current PyTorch does:
torch.onnx.export with the dynamo exporter (the default from PyTorch 2.9),
configured for training by python/tcc/torch_export.py (the export of
tcc.compile(module, ...), loaded by path):

  - optimize=False: the exporter's optimizer would merge initializers with
    equal values (every LayerNorm weight one shared tensor), drop zero biases,
    pre-transpose weights and fold batch norms into convolutions;
  - BatchNormalization in training mode: onnxscript's translation of
    aten._native_batch_norm_legit_functional writes inference mode whatever
    `training` says, so a custom translation replaces it;
  - the model in train() mode; buffers are marked by the exporter itself (the
    graph signature's InputSpec.kind metadata), so tcc gets no --buffers flag
    and must find them.

Dropout and stochastic depth are off (p = 0) in most of these models as in
make_zoo.py; the *_dropout models turn them on, and their reference draws
tcc's Philox numbers in PyTorch (make_zoo.TccRandom).

Run from the repository root with the venv that test/zoo/setup_dynamo.sh makes
(PyPI's torch, torchvision, onnxscript, onnx, transformers at the pins of
test/zoo/requirements-dynamo.txt):

    test/zoo/setup_dynamo.sh
    /opt/tcc/zoo-dynamo-venv/bin/python test/zoo/make_zoo_dynamo.py [MODEL ...]

It writes test/zoo/dynamo_<model>/{model.onnx,ref.json} (the formats of
make_zoo.py, checked by check_zoo.py with numpy only).
"""
import importlib.util
import os
import sys

import torch
import torch.nn as nn
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_zoo as mz  # noqa: E402

# make_zoo puts PyTorch 1.13's transformers (/opt/zoo-pydeps) first on the
# path for its own run and for the benchmarks that import it; this venv has
# current transformers, which hf() imports later.
sys.path.remove(mz.ZOO_PYDEPS)

PREFIX = 'dynamo_'


def _load_torch_export():
    """python/tcc/torch_export.py, the export that tcc.compile(module, ...) does,
    loaded by path (it imports nothing of tcc; the venv has no tcc)."""
    path = os.path.join(HERE, '..', '..', 'python', 'tcc', 'torch_export.py')
    spec = importlib.util.spec_from_file_location('tcc_torch_export', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


torch_export = _load_torch_export()


def export_dynamo(model, inputs, names, onnx_path):
    """torch.onnx.export's dynamo exporter configured for training, as
    tcc.compile(module, ...) runs it (tcc.torch_export.export_for_training)."""
    torch_export.export_for_training(model, inputs, onnx_path, input_names=names, output_names=['logits'])
    # The exporter annotates every node with its Python stack, FX node and
    # module path (10x the graph's size); only the rewrite records matter to
    # tcc (they warn when training changes), and they would be kept.
    import onnx
    m = onnx.load(onnx_path)
    for node in m.graph.node:
        keep = [(p.key, p.value) for p in node.metadata_props if p.key.startswith('pkg.onnxscript.rewriter')]
        del node.metadata_props[:]
        for key, value in keep:
            entry = node.metadata_props.add()
            entry.key, entry.value = key, value
    onnx.save(m, onnx_path)


# ----------------------------------------------------------------------------
# Models (small configurations of each architecture's own knobs)


def m_resnet18():
    return torchvision.models.resnet18(num_classes=10)


def m_mobilenet_v3_small():
    return torchvision.models.mobilenet_v3_small(num_classes=10, width_mult=0.5, dropout=0.0)


def m_efficientnet_v2(p=0.0, sd=0.0):
    from functools import partial

    from torchvision.models.efficientnet import EfficientNet, FusedMBConvConfig, MBConvConfig
    # EfficientNetV2-S's block kinds (fused MBConv stages, then MBConv with
    # squeeze-excitation) at a small width, one layer per stage.
    setting = [FusedMBConvConfig(1, 3, 1, 8, 8, 1), FusedMBConvConfig(4, 3, 2, 8, 16, 1),
               MBConvConfig(4, 3, 2, 16, 24, 1), MBConvConfig(6, 3, 1, 24, 32, 1)]
    return EfficientNet(setting, dropout=p, stochastic_depth_prob=sd, num_classes=10, last_channel=128,
                        norm_layer=partial(nn.BatchNorm2d, eps=1e-3))


def m_swin(p=0.0, sd=0.0):
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                           dropout=p, attention_dropout=p, stochastic_depth_prob=sd, num_classes=10)


class TransformerLM(nn.Module):
    """Embedding + learned positions -> torch.nn.TransformerEncoder (causal) ->
    linear head. The causal mask is a registered buffer (-inf above the
    diagonal), as nanoGPT-style code holds it."""

    def __init__(self, vocab=256, d=64, heads=2, layers=2, t=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(t, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)
        self.register_buffer('mask', torch.triu(torch.full((t, t), float('-inf')), diagonal=1))

    def forward(self, input_ids):
        # is_causal=False: with True, nn.MultiheadAttention drops the mask
        # and asks SDPA for causality; with None, TransformerEncoder compares
        # the mask with a causal one, a data-dependent branch that
        # torch.export refuses.
        h = self.embed(input_ids) + self.pos[:input_ids.shape[1]]
        return self.head(self.encoder(h, mask=self.mask, is_causal=False))


def m_transformer_lm():
    return TransformerLM()


def hf_model(model, config, **kw):
    """transformers.MODEL(CONFIG(vocab_size=256, **KW)), eager attention, no
    cache (make_zoo.hf_common)."""
    t = mz.hf()
    return getattr(t, model)(mz.hf_common(getattr(t, config)(vocab_size=256, **kw)))


def hf_entry(model, config, data, lr, **kw):
    """A MODELS row for a small Hugging Face model: its constructor, its
    description, DATA (text_lm or text_cls), batch 8 and AdamW at LR."""
    args = ', '.join('%s=%r' % kv for kv in [('vocab_size', 256)] + list(kw.items()))
    return (lambda: hf_model(model, config, **kw), 'transformers.%s(%s(%s))' % (model, config, args), data, 8,
            mz.adamw(lr))


# Hugging Face architectures beyond GPT-2, BERT and Llama, each for what its
# graph brings: grouped-query attention with q/k/v biases (Qwen2), a sliding
# window mask (Mistral), partial rotary embeddings and parallel residuals
# (GPT-NeoX, Phi), ALiBi biases (BLOOM), multi-query parallel attention
# (Falcon), scaled embeddings, (1 + w) RMS norms and tanh GELU (Gemma),
# interleaved rotary embeddings (GPT-J), learned positions with an offset
# (OPT), positions counted from the padding (RoBERTa), and one layer's
# weights shared by every layer (ALBERT).
HF_MODELS = {
    'qwen2': hf_entry('Qwen2ForCausalLM', 'Qwen2Config', 'text_lm', 1e-3, hidden_size=64, intermediate_size=128,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=32),
    'mistral': hf_entry('MistralForCausalLM', 'MistralConfig', 'text_lm', 1e-3, hidden_size=64,
                        intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                        max_position_embeddings=32, sliding_window=8),
    'gpt_neox': hf_entry('GPTNeoXForCausalLM', 'GPTNeoXConfig', 'text_lm', 1e-3, hidden_size=64,
                         intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                         max_position_embeddings=32, rotary_pct=0.5),
    'phi': hf_entry('PhiForCausalLM', 'PhiConfig', 'text_lm', 1e-3, hidden_size=64, intermediate_size=128,
                    num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=32,
                    partial_rotary_factor=0.5, resid_pdrop=0.0, embd_pdrop=0.0),
    'bloom': hf_entry('BloomForCausalLM', 'BloomConfig', 'text_lm', 1e-3, hidden_size=64, n_layer=2, n_head=4,
                      hidden_dropout=0.0, attention_dropout=0.0),
    'falcon': hf_entry('FalconForCausalLM', 'FalconConfig', 'text_lm', 1e-3, hidden_size=64,
                       num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=32,
                       hidden_dropout=0.0, attention_dropout=0.0),
    'gemma': hf_entry('GemmaForCausalLM', 'GemmaConfig', 'text_lm', 1e-3, hidden_size=64, intermediate_size=128,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                      max_position_embeddings=32),
    'gptj': hf_entry('GPTJForCausalLM', 'GPTJConfig', 'text_lm', 1e-3, n_embd=64, n_layer=2, n_head=4,
                     n_positions=32, rotary_dim=8, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0),
    'opt': hf_entry('OPTForCausalLM', 'OPTConfig', 'text_lm', 1e-3, hidden_size=64, ffn_dim=128,
                    num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=32,
                    word_embed_proj_dim=64, dropout=0.0, attention_dropout=0.0),
    'roberta': hf_entry('RobertaForSequenceClassification', 'RobertaConfig', 'text_cls', 1e-4, hidden_size=64,
                        num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                        max_position_embeddings=40, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                        classifier_dropout=0.0, num_labels=2),
    'albert': hf_entry('AlbertForSequenceClassification', 'AlbertConfig', 'text_cls', 1e-4, hidden_size=64,
                       embedding_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                       max_position_embeddings=32, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                       classifier_dropout_prob=0.0, num_labels=2),
}


def write_text_cls_mask():
    """data/text_cls_mask: the classification sequences of data/text_cls with
    padding, as a tokenizer batches texts of several lengths: row i keeps its
    first 32 - (7 i mod 13) tokens, the rest are token 0 with input_mask 0
    (the mask Hugging Face models take as attention_mask)."""
    import numpy as np
    src = os.path.join(HERE, 'data', 'text_cls')
    ids = np.load(os.path.join(src, 'input_ids.npy')).copy()
    mask = np.ones_like(ids)
    for i in range(ids.shape[0]):
        pad = (7 * i) % 13
        if pad:
            ids[i, -pad:] = 0
            mask[i, -pad:] = 0
    out = os.path.join(HERE, 'data', 'text_cls_mask')
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, 'input_ids.npy'), ids)
    np.save(os.path.join(out, 'input_mask.npy'), mask)
    np.save(os.path.join(out, 'y.npy'), np.load(os.path.join(src, 'y.npy')))


MODELS = {
    'resnet18': (m_resnet18, 'torchvision.models.resnet18(num_classes=10)', 'images', 16, mz.sgd(0.05, 0.9, 5e-4)),
    'mobilenet_v3_small': (m_mobilenet_v3_small, 'torchvision.models.mobilenet_v3_small(num_classes=10, '
                           'width_mult=0.5, dropout=0.0)', 'images', 16, mz.adam(1e-3, eps=1e-6)),
    'efficientnet_v2': (m_efficientnet_v2, 'torchvision.models.efficientnet.EfficientNet([FusedMBConvConfig(1, 3, '
                        '1, 8, 8, 1), FusedMBConvConfig(4, 3, 2, 8, 16, 1), MBConvConfig(4, 3, 2, 16, 24, 1), '
                        'MBConvConfig(6, 3, 1, 24, 32, 1)], dropout=0.0, stochastic_depth_prob=0.0, num_classes=10, '
                        'last_channel=128, norm_layer=BatchNorm2d(eps=1e-3))', 'images', 16, mz.adamw(1e-3)),
    'swin': (m_swin, 'torchvision.models.swin_transformer.SwinTransformer(patch_size=[4, 4], embed_dim=32, '
             'depths=[2, 2], num_heads=[2, 4], window_size=[4, 4], stochastic_depth_prob=0.0, num_classes=10)',
             'images', 16, mz.adamw(1e-3)),
    'vit': (mz.m_vit, 'torchvision.models.vision_transformer.VisionTransformer(image_size=32, patch_size=8, '
            'num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128, dropout=0.0, attention_dropout=0.0, '
            'num_classes=10)', 'images', 16, mz.sgd(0.01, 0.9)),
    'transformer_lm': (m_transformer_lm, 'TransformerLM(vocab=256, d=64, heads=2, layers=2, t=32) '
                       '(make_zoo_dynamo.py: Embedding + positions -> torch.nn.TransformerEncoder with a causal '
                       'mask buffer -> Linear)', 'text_lm', 8, mz.adamw(1e-3)),
    'gpt2': (mz.m_gpt2, 'transformers.GPT2LMHeadModel(GPT2Config(vocab_size=256, n_positions=32, n_embd=64, '
             'n_layer=2, n_head=2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=True))',
             'text_lm', 8, mz.adamw(1e-3)),
    'bert': (mz.m_bert, 'transformers.BertForSequenceClassification(BertConfig(vocab_size=256, hidden_size=64, '
             'num_hidden_layers=2, num_attention_heads=2, intermediate_size=128, max_position_embeddings=32, '
             'hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, classifier_dropout=0.0, num_labels=2))',
             'text_cls', 8, mz.adamw(1e-4)),
    'bert_mask': (mz.m_bert, 'transformers.BertForSequenceClassification(BertConfig(vocab_size=256, '
                  'hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128, '
                  'max_position_embeddings=32, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, '
                  'classifier_dropout=0.0, num_labels=2))(input_ids, attention_mask) on padded sequences',
                  'text_cls_mask', 8, mz.adamw(1e-4)),
    'llama': (mz.m_llama, 'transformers.LlamaForCausalLM(LlamaConfig(vocab_size=256, hidden_size=64, '
              'intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, '
              'max_position_embeddings=32, attention_dropout=0.0))', 'text_lm', 8, mz.adamw(1e-3)),
    # The PyTorch 1.13 zoo's models whose dynamo exports bring operators the
    # ones above do not: ONNX LSTM / GRU, T5's relative position buckets
    # (Abs, Log, Min, Greater), densenet's AveragePool.
    'lstm': mz.MODELS['lstm'],
    'gru': mz.MODELS['gru'],
    't5': mz.MODELS['t5'],
    'densenet': mz.MODELS['densenet'],
    # Dropout and stochastic depth on: PyTorch's reference draws tcc's random
    # numbers (make_zoo.TccRandom), so the check is exact.
    'gpt2_dropout': (lambda: mz.m_gpt2(0.1), 'transformers.GPT2LMHeadModel(GPT2Config(vocab_size=256, '
                     'n_positions=32, n_embd=64, n_layer=2, n_head=2, resid_pdrop=0.1, embd_pdrop=0.1, '
                     'attn_pdrop=0.1, tie_word_embeddings=True))', 'text_lm', 8, mz.adamw(1e-3)),
    'swin_dropout': (lambda: m_swin(0.1, 0.2), 'torchvision.models.swin_transformer.SwinTransformer(patch_size=[4, '
                     '4], embed_dim=32, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4], dropout=0.1, '
                     'attention_dropout=0.1, stochastic_depth_prob=0.2, num_classes=10)', 'images', 16,
                     mz.adamw(1e-3)),
    'efficientnet_v2_dropout': (lambda: m_efficientnet_v2(0.2, 0.2), 'torchvision.models.efficientnet.EfficientNet('
                                '<the efficientnet_v2 stages>, dropout=0.2, stochastic_depth_prob=0.2, '
                                'num_classes=10, last_channel=128, norm_layer=BatchNorm2d(eps=1e-3))', 'images', 16,
                                mz.adamw(1e-3)),
    **HF_MODELS,
}


def main():
    torch.set_num_threads(2)
    names = sys.argv[1:] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit('unknown model(s): %s (known: %s)' % (' '.join(unknown), ' '.join(MODELS)))
    write_text_cls_mask()
    models = {PREFIX + n: MODELS[n] for n in names}
    mz.build_all(list(models), models=models, export=export_dynamo, name_buffers=False)


if __name__ == '__main__':
    main()
