#!/usr/bin/env python3
"""fashion_mnist.py - the training demo's model and data (standard library only).

  fashion_mnist.py data SRC OUT
      Converts Debian's Fashion-MNIST (SRC = /usr/share/datasets/fashion-mnist,
      package dataset-fashion-mnist: gzipped IDX files) into OUT/train and
      OUT/test, each holding x.npy (N x 784 float32, pixels / 255) and y.npy
      (N int64 labels 0..9), the layout `tcc-run --data` reads.
  fashion_mnist.py model OUT.onnx [--hidden H] [--seed S] [--arch mlp|cnn]
      Writes an MLP classifier as a binary ONNX model: x [N, 784] -> Gemm(H)
      -> Relu -> Gemm(10) -> logits, with a symbolic batch N and PyTorch's
      default Linear initialization (uniform in +-1/sqrt(fan_in)), seeded.

The ONNX protobuf is written by hand (a few message types, wire format
only), so the demo needs neither the onnx nor the protobuf Python package.
"""
import argparse
import array
import gzip
import math
import os
import random
import struct
import sys

# --- protobuf wire format (just what a ModelProto needs) ----------------------


def _varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def _int(field, v):
    return _key(field, 0) + _varint(v)


def _bytes(field, data):
    if isinstance(data, str):
        data = data.encode()
    return _key(field, 2) + _varint(len(data)) + data


FLOAT, INT64 = 1, 7  # TensorProto.DataType


def _tensor(name, dims, values, data_type=FLOAT):
    raw = array.array('f' if data_type == FLOAT else 'q', values)
    if sys.byteorder != 'little':
        raw.byteswap()
    return (b''.join(_int(1, d) for d in dims) + _int(2, data_type) + _bytes(8, name)
            + _bytes(9, raw.tobytes()))


def _value_info(name, elem_type, dims):
    shape = b''.join(_bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    tensor_type = _int(1, elem_type) + _bytes(2, shape)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def _node(op, inputs, outputs, name, ints=(), lists=()):
    msg = b''.join(_bytes(1, i) for i in inputs) + b''.join(_bytes(2, o) for o in outputs)
    msg += _bytes(3, name) + _bytes(4, op)
    for attr, value in ints:
        msg += _bytes(5, _bytes(1, attr) + _int(3, value) + _int(20, 2))  # AttributeProto.INT
    for attr, values in lists:
        body = _bytes(1, attr) + b''.join(_int(8, v) for v in values) + _int(20, 7)  # INTS
        msg += _bytes(5, body)
    return msg


def _write_classifier(path, graph):
    """A ModelProto (IR 8, opset 17) of GRAPH's nodes and initializers with
    the input x [N, 784] and the output logits [N, 10]."""
    graph += (_bytes(11, _value_info('x', FLOAT, ['N', 784]))
              + _bytes(12, _value_info('logits', FLOAT, ['N', 10])))
    model = (_int(1, 8) + _bytes(2, 'tcc fashion_mnist.py') + _bytes(7, graph)
             + _bytes(8, _bytes(1, '') + _int(2, 17)))
    with open(path, 'wb') as f:
        f.write(model)


def write_cnn(path, seed, batch_norm=False):
    """x [N, 784] -> [N, 1, 28, 28] -> Conv 8 3x3 pad 1 -> Relu -> MaxPool 2
    -> Conv 16 3x3 pad 1 -> Relu -> MaxPool 2 -> Flatten -> Gemm 784 -> 10;
    with BATCH_NORM a BatchNormalization in training mode (batch statistics,
    running statistics as initializers, momentum 0.9) after each Conv."""
    rng = random.Random(seed)

    def uniform(n, fan_in):
        bound = 1 / math.sqrt(fan_in)
        return [rng.uniform(-bound, bound) for _ in range(n)]

    conv = lambda i, o, w, b, y, name: _node(
        'Conv', [i, w, b], [y], name, lists=[('kernel_shape', [3, 3]), ('pads', [1, 1, 1, 1])])
    pool = lambda i, y, name: _node('MaxPool', [i], [y], name,
                                    lists=[('kernel_shape', [2, 2]), ('strides', [2, 2])])
    def norm(i, channels, name):
        if not batch_norm:
            return [], i
        out = i + '_bn'
        node = _node('BatchNormalization', [i] + ['%s_%s' % (name, p) for p in
                                                 ('scale', 'bias', 'running_mean', 'running_var')],
                     [out], name, ints=[('training_mode', 1)])
        inits = [_bytes(5, _tensor(name + '_scale', [channels], [1.0] * channels)),
                 _bytes(5, _tensor(name + '_bias', [channels], [0.0] * channels)),
                 _bytes(5, _tensor(name + '_running_mean', [channels], [0.0] * channels)),
                 _bytes(5, _tensor(name + '_running_var', [channels], [1.0] * channels))]
        return [_bytes(1, node)] + inits, out

    bn1, c1 = norm('c1', 8, 'bn1')
    bn2, c2 = norm('c2', 16, 'bn2')
    graph = b''.join([
        _bytes(1, _node('Reshape', ['x', 'image_shape'], ['img'], 'to_image')),
        _bytes(1, conv('img', 8, 'conv1_weight', 'conv1_bias', 'c1', 'conv1')),
        *bn1,
        _bytes(1, _node('Relu', [c1], ['r1'], 'relu1')),
        _bytes(1, pool('r1', 'p1', 'pool1')),
        _bytes(1, conv('p1', 16, 'conv2_weight', 'conv2_bias', 'c2', 'conv2')),
        *bn2,
        _bytes(1, _node('Relu', [c2], ['r2'], 'relu2')),
        _bytes(1, pool('r2', 'p2', 'pool2')),
        _bytes(1, _node('Flatten', ['p2'], ['f'], 'flatten')),
        _bytes(1, _node('Gemm', ['f', 'fc_weight', 'fc_bias'], ['logits'], 'fc', ints=[('transB', 1)])),
        _bytes(2, 'fashion_cnn'),
        _bytes(5, _tensor('image_shape', [4], [-1, 1, 28, 28], INT64)),
        _bytes(5, _tensor('conv1_weight', [8, 1, 3, 3], uniform(72, 9))),
        _bytes(5, _tensor('conv1_bias', [8], uniform(8, 9))),
        _bytes(5, _tensor('conv2_weight', [16, 8, 3, 3], uniform(16 * 72, 72))),
        _bytes(5, _tensor('conv2_bias', [16], uniform(16, 72))),
        _bytes(5, _tensor('fc_weight', [10, 784], uniform(7840, 784))),
        _bytes(5, _tensor('fc_bias', [10], uniform(10, 784))),
    ])
    _write_classifier(path, graph)


def write_model(path, hidden, seed):
    rng = random.Random(seed)

    def linear(fan_in, fan_out):
        bound = 1 / math.sqrt(fan_in)
        w = [rng.uniform(-bound, bound) for _ in range(fan_in * fan_out)]  # [in, out]
        b = [rng.uniform(-bound, bound) for _ in range(fan_out)]
        return w, b

    w1, b1 = linear(784, hidden)
    w2, b2 = linear(hidden, 10)
    graph = b''.join([
        _bytes(1, _node('Gemm', ['x', 'fc1_weight', 'fc1_bias'], ['h'], 'fc1')),
        _bytes(1, _node('Relu', ['h'], ['a'], 'relu')),
        _bytes(1, _node('Gemm', ['a', 'fc2_weight', 'fc2_bias'], ['logits'], 'fc2')),
        _bytes(2, 'fashion_mlp'),
        _bytes(5, _tensor('fc1_weight', [784, hidden], w1)),
        _bytes(5, _tensor('fc1_bias', [hidden], b1)),
        _bytes(5, _tensor('fc2_weight', [hidden, 10], w2)),
        _bytes(5, _tensor('fc2_bias', [10], b2)),
    ])
    _write_classifier(path, graph)


# --- IDX -> .npy ---------------------------------------------------------------


def _read_idx(path):
    with gzip.open(path, 'rb') as f:
        data = f.read()
    magic, = struct.unpack('>I', data[:4])
    ndim = magic & 0xFF
    if magic >> 8 != 0x08:
        raise SystemExit('%s: not an unsigned-byte IDX file' % path)
    dims = struct.unpack('>%dI' % ndim, data[4:4 + 4 * ndim])
    return dims, data[4 + 4 * ndim:]


def _write_npy(path, descr, shape, payload):
    dims = ', '.join(str(d) for d in shape) + (',' if len(shape) == 1 else '')
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(payload)


def convert(src, out, limit=0):
    for split, prefix in (('train', 'train'), ('test', 't10k')):
        d = os.path.join(out, split)
        os.makedirs(d, exist_ok=True)
        (n, rows, cols), pixels = _read_idx(os.path.join(src, prefix + '-images-idx3-ubyte.gz'))
        (m,), labels = _read_idx(os.path.join(src, prefix + '-labels-idx1-ubyte.gz'))
        if n != m:
            raise SystemExit('%s: %d images but %d labels' % (src, n, m))
        if limit and limit < n:
            n = limit
            pixels = pixels[:n * rows * cols]
            labels = labels[:n]
        x = array.array('f', (p / 255.0 for p in pixels))
        y = array.array('q', list(labels))
        if sys.byteorder != 'little':
            x.byteswap()
            y.byteswap()
        _write_npy(os.path.join(d, 'x.npy'), '<f4', [n, rows * cols], x.tobytes())
        _write_npy(os.path.join(d, 'y.npy'), '<i8', [n], y.tobytes())
        print('%s: %d samples of %dx%d' % (d, n, rows, cols))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='command', required=True)
    data = sub.add_parser('data')
    data.add_argument('src')
    data.add_argument('out')
    data.add_argument('--limit', type=int, default=0, help='keep only the first N samples of each split')
    model = sub.add_parser('model')
    model.add_argument('out')
    model.add_argument('--hidden', type=int, default=128)
    model.add_argument('--seed', type=int, default=0)
    model.add_argument('--arch', choices=['mlp', 'cnn', 'cnn-bn'], default='mlp')
    args = parser.parse_args()
    if args.command == 'data':
        convert(args.src, args.out, args.limit)
    elif args.arch in ('cnn', 'cnn-bn'):
        write_cnn(args.out, args.seed, batch_norm=args.arch == 'cnn-bn')
    else:
        write_model(args.out, args.hidden, args.seed)


if __name__ == '__main__':
    main()
