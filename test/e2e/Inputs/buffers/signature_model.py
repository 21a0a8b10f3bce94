#!/usr/bin/python3
"""signature_model.py OUT_DIR - a small regression model carrying PyTorch's
graph signature as its dynamo exporter writes it (torch.onnx.export(...,
dynamo=True), PyTorch 2.x), for test/e2e/train-buffers.test and
test/frontend/onnx/buffers.test. Needs python3-onnx and numpy, not PyTorch.

  y = (x @ weight + bias) * scale + shift      x: float[batch, 4], y: float[batch, 3]

The exporter records each initializer's kind in the metadata_props of its
value (ValueInfoProto field 4, ONNX IR version 10) under the key
pkg.torch.export.graph_signature.InputSpec.kind: PARAMETER for weight and
bias, BUFFER for scale and shift. An initializer's value info sits in
graph.value_info, or in graph.input where the initializer is also a graph
input (older exporters; shift here). ONNX 1.12 (Debian's) predates the
field, so it is written as raw protobuf. scale and shift hold ordinary
finite values: only the signature says they are buffers.

Writes OUT_DIR/signature.onnx and OUT_DIR/data/{x,y}.npy (32 samples).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

KIND = 'pkg.torch.export.graph_signature.InputSpec.kind'
PERSISTENT = 'pkg.torch.export.graph_signature.InputSpec.persistent'


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def with_metadata(info, props):
    """INFO with metadata_props (field 4, length-delimited entries) added."""
    raw = info.SerializeToString()
    for key, value in props:
        entry = onnx.StringStringEntryProto(key=key, value=value).SerializeToString()
        raw += b'\x22' + varint(len(entry)) + entry
    out = onnx.ValueInfoProto()
    out.ParseFromString(raw)
    return out


def main():
    out_dir = sys.argv[1]
    rng = np.random.default_rng(5)
    weight = rng.uniform(-0.5, 0.5, (4, 3)).astype(np.float32)
    bias = rng.uniform(-0.5, 0.5, 3).astype(np.float32)
    scale = np.array([0.5, 2.0, -1.5], np.float32)
    shift = np.array([0.25, -0.75, 1.0], np.float32)
    inits = {'weight': weight, 'bias': bias, 'scale': scale, 'shift': shift}
    kinds = {'weight': ('PARAMETER', 'None'), 'bias': ('PARAMETER', 'None'),
             'scale': ('BUFFER', 'True'), 'shift': ('BUFFER', 'False')}

    def info(name):
        v = helper.make_tensor_value_info(name, TensorProto.FLOAT, list(inits[name].shape))
        return with_metadata(v, [(KIND, kinds[name][0]), (PERSISTENT, kinds[name][1])])

    x = with_metadata(helper.make_tensor_value_info('x', TensorProto.FLOAT, ['batch', 4]),
                      [(KIND, 'USER_INPUT'), (PERSISTENT, 'None')])
    nodes = [
        helper.make_node('MatMul', ['x', 'weight'], ['mm'], name='node_linear'),
        helper.make_node('Add', ['mm', 'bias'], ['lin'], name='node_bias'),
        helper.make_node('Mul', ['lin', 'scale'], ['scaled'], name='node_scale'),
        helper.make_node('Add', ['scaled', 'shift'], ['y_hat'], name='node_shift'),
    ]
    graph = helper.make_graph(
        nodes, 'main_graph', [x, info('shift')],
        [helper.make_tensor_value_info('y_hat', TensorProto.FLOAT, ['batch', 3])],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()],
        value_info=[info('weight'), info('bias'), info('scale')])
    model = helper.make_model(graph, producer_name='pytorch', producer_version='2.9.0',
                              opset_imports=[helper.make_opsetid('', 17)])
    model.ir_version = 8
    signature = ('\n# inputs\np_weight: PARAMETER target=\'weight\'\np_bias: PARAMETER target=\'bias\'\n'
                 'b_scale: BUFFER target=\'scale\' persistent=True\n'
                 'b_shift: BUFFER target=\'shift\' persistent=False\nx: USER_INPUT\n\n'
                 '# outputs\ny_hat: USER_OUTPUT\n')
    helper.set_model_props(model, {'pkg.torch.export.ExportedProgram.graph_signature': signature})
    os.makedirs(os.path.join(out_dir, 'data'), exist_ok=True)
    onnx.save(model, os.path.join(out_dir, 'signature.onnx'))
    # The metadata survives the round trip through the file.
    back = onnx.load(os.path.join(out_dir, 'signature.onnx'))
    assert b'BUFFER' in back.graph.value_info[2].SerializeToString()
    assert b'BUFFER' in back.graph.input[1].SerializeToString()
    xs = rng.standard_normal((32, 4)).astype(np.float32)
    ys = (xs @ rng.standard_normal((4, 3)) + 0.1).astype(np.float32)
    np.save(os.path.join(out_dir, 'data', 'x.npy'), xs)
    np.save(os.path.join(out_dir, 'data', 'y.npy'), ys)


if __name__ == '__main__':
    main()
