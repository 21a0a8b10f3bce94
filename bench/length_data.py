#!/usr/bin/env python3
"""Variable-length text for bench/buckets.sh: the sentences of real English
text (Debian's license texts under /usr/share/common-licenses, or the files
given), byte-level (vocabulary 256), one sentence per sample padded to T:
DIR/tokens.npy (N x T int64, 0 after the sentence) and DIR/y.npy (the next
byte of each position, -100 after the sentence's last). The first VAL
sentences of a fixed shuffle go to DIR/val, the rest to DIR/train.
Standard library only (any Python 3).

  length_data.py DIR T [--val N] [FILES...]
"""
import glob
import os
import random
import re
import struct
import sys


def write_npy(path, shape, values):
    dims = ', '.join(str(d) for d in shape)
    header = "{'descr': '<i8', 'fortran_order': False, 'shape': (%s), }" % dims
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(struct.pack('<%dq' % len(values), *values))


def sentences(files, t):
    out = []
    for path in files:
        text = open(path, 'rb').read().decode('utf-8', 'replace')
        for s in re.split(r'(?<=[.!?;:])\s+', re.sub(r'\s+', ' ', text)):
            b = s.strip().encode('utf-8')[:t]
            if len(b) >= 8:
                out.append(b)
    return out


def write(folder, samples, t):
    os.makedirs(folder, exist_ok=True)
    tokens, labels = [], []
    for b in samples:
        row = list(b) + [0] * (t - len(b))
        tokens += row
        labels += row[1:len(b)] + [-100] * (t - len(b) + 1)
    write_npy(os.path.join(folder, 'tokens.npy'), [len(samples), t], tokens)
    write_npy(os.path.join(folder, 'y.npy'), [len(samples), t], labels)


def main(argv):
    out, t = argv[1], int(argv[2])
    val = 256
    rest = argv[3:]
    if rest[:1] == ['--val']:
        val, rest = int(rest[1]), rest[2:]
    files = rest or sorted(glob.glob('/usr/share/common-licenses/*'))
    files = [f for f in files if os.path.isfile(f)]
    samples = sentences(files, t)
    random.Random(0).shuffle(samples)
    write(os.path.join(out, 'val'), samples[:val], t)
    write(os.path.join(out, 'train'), samples[val:], t)
    lengths = sorted(len(b) for b in samples)
    print('%d sentences from %d files: length median %d, 90th percentile %d, max %d (T = %d)' % (
        len(samples), len(files), lengths[len(lengths) // 2], lengths[len(lengths) * 9 // 10],
        lengths[-1], t))


if __name__ == '__main__':
    main(sys.argv)
