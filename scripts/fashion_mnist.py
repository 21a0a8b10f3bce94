#!/usr/bin/env python3
"""fashion_mnist.py - the training demo's model and data (standard library only).

  fashion_mnist.py data SRC OUT
      Converts Debian's Fashion-MNIST (SRC = /usr/share/datasets/fashion-mnist,
      package dataset-fashion-mnist: gzipped IDX files) into OUT/train and
      OUT/test, each holding x.npy (N x 784 float32, pixels / 255) and y.npy
      (N int64 labels 0..9), the layout `tcc-run --data` reads.
  fashion_mnist.py model OUT.onnx [--hidden H] [--seed S]
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


def _tensor(name, dims, values):
    raw = array.array('f', values)
    if sys.byteorder != 'little':
        raw.byteswap()
    return (b''.join(_int(1, d) for d in dims) + _int(2, FLOAT) + _bytes(8, name)
            + _bytes(9, raw.tobytes()))


def _value_info(name, elem_type, dims):
    shape = b''.join(_bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    tensor_type = _int(1, elem_type) + _bytes(2, shape)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def _node(op, inputs, outputs, name, ints=()):
    msg = b''.join(_bytes(1, i) for i in inputs) + b''.join(_bytes(2, o) for o in outputs)
    msg += _bytes(3, name) + _bytes(4, op)
    for attr, value in ints:
        msg += _bytes(5, _bytes(1, attr) + _int(3, value) + _int(20, 2))  # AttributeProto.INT
    return msg


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
        _bytes(11, _value_info('x', FLOAT, ['N', 784])),
        _bytes(12, _value_info('logits', FLOAT, ['N', 10])),
    ])
    model = (_int(1, 8) + _bytes(2, 'tcc fashion_mnist.py') + _bytes(7, graph)
             + _bytes(8, _bytes(1, '') + _int(2, 17)))
    with open(path, 'wb') as f:
        f.write(model)


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


def convert(src, out):
    for split, prefix in (('train', 'train'), ('test', 't10k')):
        d = os.path.join(out, split)
        os.makedirs(d, exist_ok=True)
        (n, rows, cols), pixels = _read_idx(os.path.join(src, prefix + '-images-idx3-ubyte.gz'))
        (m,), labels = _read_idx(os.path.join(src, prefix + '-labels-idx1-ubyte.gz'))
        if n != m:
            raise SystemExit('%s: %d images but %d labels' % (src, n, m))
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
    model = sub.add_parser('model')
    model.add_argument('out')
    model.add_argument('--hidden', type=int, default=128)
    model.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()
    if args.command == 'data':
        convert(args.src, args.out)
    else:
        write_model(args.out, args.hidden, args.seed)


if __name__ == '__main__':
    main()
