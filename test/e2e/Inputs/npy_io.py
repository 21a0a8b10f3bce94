"""npy_io.py - .npy files for the e2e oracles, with the standard library only
(NumPy is not guaranteed on test machines). Little-endian, C order."""
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


def write_npy(path, descr, shape, values):
    dims = ', '.join(str(d) for d in shape) + (',' if len(shape) == 1 else '')
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(struct.pack('<%d%s' % (len(values), FORMATS[descr]), *values))
