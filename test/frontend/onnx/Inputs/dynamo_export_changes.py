#!/usr/bin/python3
"""dynamo_export_changes.py OUT_DIR - small models carrying what PyTorch's
dynamo exporter (torch.onnx.export(..., dynamo=True), PyTorch 2.x with
onnxscript) writes when its export changes what trains, for
test/frontend/onnx/export-changes.test. Needs python3-onnx, not PyTorch.

  y = BatchNormalization(Conv(x, w, b)) -> mean -> LayerNorm(g1, b1)
      -> LayerNorm(g2, b2) -> Gemm(fc.weight, fc.bias)

Writes, each with the exporter's graph signature (graph metadata_props, field
16) naming the PyTorch parameters c.weight, c.bias, bn.weight, bn.bias,
ln1.weight, ln1.bias, ln2.weight, ln2.bias, fc.weight, fc.bias:
  optimized.onnx  as the default optimize=True leaves it: the batch norm folded
                  into the convolution, ln2's parameters merged into ln1's,
                  the zero fc.bias dropped; the rewritten nodes carry
                  pkg.onnxscript.rewriter.rule_name (NodeProto field 9) and a
                  folded value pkg.onnxscript.optimizer.folded_from;
  inference.onnx  optimize=False with onnxscript's own batch-norm translation:
                  every parameter present, the batch norm in inference mode;
  tied.onnx       optimize=False and a training-mode batch norm, with ln2 tied
                  to ln1 in PyTorch (one tensor, two names; written once).
The ONNX library here predates those metadata fields, so they are written as
raw protobuf.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

KIND = 'pkg.torch.export.graph_signature.InputSpec.kind'
SIGNATURE = 'pkg.torch.export.ExportedProgram.graph_signature'
RULE = 'pkg.onnxscript.rewriter.rule_name'
FOLDED = 'pkg.onnxscript.optimizer.folded_from'
PARAMS = ['c.weight', 'c.bias', 'bn.weight', 'bn.bias', 'ln1.weight', 'ln1.bias', 'ln2.weight', 'ln2.bias',
          'fc.weight', 'fc.bias']


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def with_metadata(message, field, props):
    """MESSAGE with metadata_props entries (field FIELD) appended on the wire."""
    raw = message.SerializeToString()
    for key, value in props:
        entry = onnx.StringStringEntryProto(key=key, value=value).SerializeToString()
        raw += varint(field << 3 | 2) + varint(len(entry)) + entry
    out = type(message)()
    out.ParseFromString(raw)
    return out


def model(nodes, inits, path, folded_value=None):
    rng = np.random.default_rng(3)
    shapes = {'c.weight': (4, 3, 3, 3), 'c.bias': (4,), 'bn.weight': (4,), 'bn.bias': (4,), 'bn.running_mean': (4,),
              'bn.running_var': (4,), 'ln1.weight': (4,), 'ln1.bias': (4,), 'ln2.weight': (4,), 'ln2.bias': (4,),
              'fc.weight': (2, 4), 'fc.bias': (2,)}
    tensors = [numpy_helper.from_array(rng.uniform(0.5, 1.0, shapes[n]).astype(np.float32), n) for n in inits]
    tensors.append(numpy_helper.from_array(np.array([2, 3], np.int64), 'axes'))
    infos = []
    for n in inits:
        kind = 'BUFFER' if 'running' in n else 'PARAMETER'
        infos.append(with_metadata(helper.make_tensor_value_info(n, TensorProto.FLOAT, list(shapes[n])), 4,
                                   [(KIND, kind)]))
    if folded_value:
        infos.append(with_metadata(helper.make_tensor_value_info(folded_value, TensorProto.INT64, [2]), 4,
                                   [(FOLDED, "['val_7', 'val_8']")]))
    graph = helper.make_graph(
        nodes, 'main_graph', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info('logits', TensorProto.FLOAT, [2, 2])], initializer=tensors, value_info=infos)
    signature = '\n# inputs\n' + ''.join(
        "p_%s: PARAMETER target='%s'\n" % (n.replace('.', '_'), n) for n in PARAMS) + (
        "b_bn_running_mean: BUFFER target='bn.running_mean' persistent=True\n"
        "b_bn_running_var: BUFFER target='bn.running_var' persistent=True\n"
        "b_bn_num_batches_tracked: BUFFER target='bn.num_batches_tracked' persistent=True\n"
        "x: USER_INPUT\n\n# outputs\nlogits: USER_OUTPUT\n")
    graph = with_metadata(graph, 16, [(SIGNATURE, signature)])
    m = helper.make_model(graph, producer_name='pytorch', producer_version='2.15.0',
                          opset_imports=[helper.make_opsetid('', 18)])
    m.ir_version = 8
    onnx.save(m, path)


def tail(ln2):
    return [
        helper.make_node('ReduceMean', ['bn', 'axes'], ['mean'], keepdims=0, name='node_mean'),
        helper.make_node('LayerNormalization', ['mean', 'ln1.weight', 'ln1.bias'], ['h1'], name='node_layer_norm'),
        helper.make_node('LayerNormalization', ['h1'] + ln2, ['h2'], name='node_layer_norm_1'),
    ]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    conv = helper.make_node('Conv', ['x', 'c.weight', 'c.bias'], ['bn'], name='node_Conv_10')
    gemm = helper.make_node('Gemm', ['h2', 'fc.weight'], ['logits'], transB=1, name='node_Gemm_11')
    model([with_metadata(conv, 9, [(RULE, 'FuseBatchNormIntoConv')])] + tail(['ln1.weight', 'ln1.bias']) +
          [with_metadata(gemm, 9, [(RULE, 'RemoveOptionalBiasFromGemm')])],
          ['c.weight', 'c.bias', 'ln1.weight', 'ln1.bias', 'fc.weight'], os.path.join(out, 'optimized.onnx'),
          folded_value='axes')
    every = ['c.weight', 'c.bias', 'bn.weight', 'bn.bias', 'bn.running_mean', 'bn.running_var', 'ln1.weight',
             'ln1.bias', 'ln2.weight', 'ln2.bias', 'fc.weight', 'fc.bias']

    def net(training, ln2, inits, path):
        conv = helper.make_node('Conv', ['x', 'c.weight', 'c.bias'], ['conv'], name='node_conv2d')
        outs = ['bn', 'new_mean', 'new_var'] if training else ['bn']
        bn = helper.make_node('BatchNormalization', ['conv', 'bn.weight', 'bn.bias', 'bn.running_mean',
                                                     'bn.running_var'], outs, epsilon=1e-5, momentum=0.9,
                              training_mode=int(training), name='node__native_batch_norm_legit_functional')
        gemm = helper.make_node('Gemm', ['h2', 'fc.weight', 'fc.bias'], ['logits'], transB=1, name='node_linear')
        model([conv, bn] + tail(ln2) + [gemm], inits, path)

    net(False, ['ln2.weight', 'ln2.bias'], every, os.path.join(out, 'inference.onnx'))
    net(True, ['ln1.weight', 'ln1.bias'], [n for n in every if not n.startswith('ln2')],
        os.path.join(out, 'tied.onnx'))


if __name__ == '__main__':
    main()
