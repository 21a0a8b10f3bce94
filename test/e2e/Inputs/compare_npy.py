#!/usr/bin/env python3
"""Compares two float32 .npy files elementwise: |a - b| <= atol + rtol * |b|.
Standard library only. Usage: compare_npy.py A.npy B.npy RTOL ATOL
Prints 'OK: N values' or the first mismatch, and exits 1 on a mismatch."""
import sys

from npy_io import read_npy




def main(argv):
    (sa, a), (sb, b) = read_npy(argv[1]), read_npy(argv[2])
    rtol, atol = float(argv[3]), float(argv[4])
    if sa != sb:
        print('MISMATCH: shapes %s and %s' % (sa, sb))
        return 1
    for i, (x, y) in enumerate(zip(a, b)):
        if not abs(x - y) <= atol + rtol * abs(y):
            print('MISMATCH at %d: %r vs %r' % (i, x, y))
            return 1
    print('OK: %d values' % len(a))
    return 0


sys.exit(main(sys.argv))
