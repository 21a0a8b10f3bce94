"""npy_io.py - .npy files for the e2e oracles, with the standard library only
(NumPy is not guaranteed on test machines). Little-endian, C order."""
import json
import re
import struct

FORMATS = {'<f4': 'f', '<f8': 'd', '<i8': 'q', '<i4': 'i', '|u1': 'B'}


def read_npy(path):
    """(shape tuple, flat tuple of values) of a .npy file."""
    data = open(path, 'rb').read()
    hlen = struct.unpack('<H', data[8:10])[0]
    header = data[10:10 + hlen].decode('latin1')
    descr = re.search(r"'descr': '([^']*)'", header).group(1)
    shape = tuple(int(d) for d in re.search(r"\(([^)]*)\)", header).group(1).split(',') if d.strip())
    n = 1
    for d in shape:
        n *= d
    fmt = FORMATS[descr]
    return shape, struct.unpack('<%d%s' % (n, fmt), data[10 + hlen:10 + hlen + n * struct.calcsize(fmt)])


def write_raw(path, descr, shape, body):
    """PATH: a .npy of DESCR and SHAPE holding the bytes BODY."""
    dims = ', '.join(str(d) for d in shape) + (',' if len(shape) == 1 else '')
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(body)


def write_npy(path, descr, shape, values):
    write_raw(path, descr, shape, struct.pack('<%d%s' % (len(values), FORMATS[descr]), *values))


def read_safetensors(path):
    """name -> (dtype, shape list, raw bytes) of every tensor of a safetensors
    file (not its metadata)."""
    data = open(path, 'rb').read()
    size, = struct.unpack('<Q', data[:8])
    header = json.loads(data[8:8 + size])
    base = 8 + size
    return {name: (t['dtype'], t['shape'], data[base + t['data_offsets'][0]:base + t['data_offsets'][1]])
            for name, t in header.items() if name != '__metadata__'}
