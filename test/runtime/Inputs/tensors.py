#!/usr/bin/env python3
"""Writes and dumps the tensor files tcc-run's lit tests need, with the
standard library only (NumPy is not guaranteed on test machines).

  tensors.py npy OUT DESCR SHAPE VALUES         write a .npy ('<f4', '2x3', '1,2,3,4,5,6')
  tensors.py pb OUT NAME TYPE SHAPE VALUES      write an ONNX TensorProto with raw_data
                                                (TYPE: the ONNX data_type number)
  tensors.py safetensors OUT NAME:DTYPE:SHAPE:VALUES ...
                                                write a safetensors file ('b:F32:3:1,2,3')
  tensors.py dump FILE.npy                      print 'DESCR SHAPE: v1 v2 ...'

SHAPE is dimensions joined by 'x' ('2x3'), or 'scalar'. VALUES may also be
'random:SEED:LO:HI' for uniform pseudo-random floats of the whole shape.
"""
import json
import struct
import sys

NPY_FORMATS = {'<f2': 'e', '<f4': 'f', '<f8': 'd', '|i1': 'b', '<i2': 'h', '<i4': 'i',
               '<i8': 'q', '|u1': 'B', '<u2': 'H', '<u4': 'I', '<u8': 'Q', '|b1': '?'}
ONNX_FORMATS = {1: 'f', 2: 'B', 3: 'b', 4: 'H', 5: 'h', 6: 'i', 7: 'q', 9: '?', 10: 'e',
                11: 'd', 12: 'I', 13: 'Q'}
SAFETENSORS_FORMATS = {'F32': 'f', 'F64': 'd', 'F16': 'e', 'I8': 'b', 'I16': 'h', 'I32': 'i',
                       'I64': 'q', 'U8': 'B', 'U16': 'H', 'U32': 'I', 'U64': 'Q', 'BOOL': '?'}


def parse_shape(text):
    return [] if text == 'scalar' else [int(d) for d in text.split('x')]


def pack(fmt, values):
    items = [] if values == '' else values.split(',')
    convert = float if fmt in 'efd' else int
    return struct.pack('<%d%s' % (len(items), fmt), *[convert(v) for v in items])


def expand_values(shape, values):
    """'random:SEED:LO:HI' -> that many comma-separated uniform values."""
    if not values.startswith('random:'):
        return values
    import random
    _, seed, lo, hi = values.split(':')
    rng = random.Random(int(seed))
    count = 1
    for d in shape:
        count *= d
    return ','.join(repr(rng.uniform(float(lo), float(hi))) for _ in range(count))


def write_npy(out, descr, shape, values):
    values = expand_values(shape, values)
    dims = ', '.join(str(d) for d in shape) + (',' if len(shape) == 1 else '')
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    with open(out, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(pack(NPY_FORMATS[descr], values))


def varint(v):
    v &= (1 << 64) - 1
    out = b''
    while True:
        byte = v & 0x7F
        v >>= 7
        if v:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def write_pb(out, name, onnx_type, shape, values):
    data = b''.join(varint(1 << 3) + varint(d) for d in shape)
    data += varint(2 << 3) + varint(onnx_type)
    encoded = name.encode()
    data += varint((8 << 3) | 2) + varint(len(encoded)) + encoded
    raw = pack(ONNX_FORMATS[onnx_type], values)
    data += varint((9 << 3) | 2) + varint(len(raw)) + raw
    with open(out, 'wb') as f:
        f.write(data)


def write_safetensors(out, specs):
    header, blobs, offset = {}, [], 0
    for spec in specs:
        name, dtype, shape, values = spec.split(':')
        blob = pack(SAFETENSORS_FORMATS[dtype], values)
        header[name] = {'dtype': dtype, 'shape': parse_shape(shape),
                        'data_offsets': [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    with open(out, 'wb') as f:
        f.write(struct.pack('<Q', len(text)) + text + b''.join(blobs))


def dump(path):
    data = open(path, 'rb').read()
    assert data[:6] == b'\x93NUMPY', 'not a .npy file'
    length = struct.unpack('<H', data[8:10])[0]
    header = eval(data[10:10 + length].decode('latin1'))  # a dict literal we wrote
    fmt = NPY_FORMATS[header['descr']]
    count = 1
    for d in header['shape']:
        count *= d
    values = struct.unpack('<%d%s' % (count, fmt), data[10 + length:])
    print('%s %s: %s' % (header['descr'], header['shape'],
                         ' '.join('%g' % v if isinstance(v, float) else str(v) for v in values)))


def main(argv):
    command = argv[1]
    if command == 'npy':
        write_npy(argv[2], argv[3], parse_shape(argv[4]), argv[5])
    elif command == 'pb':
        write_pb(argv[2], argv[3], int(argv[4]), parse_shape(argv[5]), argv[6])
    elif command == 'safetensors':
        write_safetensors(argv[2], argv[3:])
    elif command == 'dump':
        dump(argv[2])
    else:
        sys.exit('unknown command ' + command)


if __name__ == '__main__':
    main(sys.argv)
