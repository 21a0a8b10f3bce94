#!/usr/bin/env python3
"""precision_casts.py make DIR | check DIR OUT: the float64 oracle of the
16-bit conversions (test/e2e/precision-casts.test). `make` writes DIR/x.npy:
4096 f32 values, the special cases first (zeros, infinities, NaNs, bf16 and
f16 ties, subnormals of both, f16 overflow), then random bit patterns.
`check` compares OUT/bf16.npy and OUT/f16.npy (x rounded to bf16 / f16 and
back) with round-to-nearest-even computed here in float64 arithmetic.
Standard library only."""
import math
import random
import struct
import sys

N = 4096


def write_npy(path, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode())
        f.write(struct.pack('<%df' % len(values), *values))


def read_npy(path):
    data = open(path, 'rb').read()
    hlen = struct.unpack('<H', data[8:10])[0]
    body = data[10 + hlen:]
    return list(struct.unpack('<%df' % (len(body) // 4), body))


def f32(bits):
    return struct.unpack('<f', struct.pack('<I', bits))[0]


def round_to(x, precision, emin, emax):
    """x (a float64 holding an f32) rounded to nearest even in a binary
    format with PRECISION significand bits, normal exponents EMIN..EMAX."""
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    m, e = math.frexp(x)  # x = m 2^e, 0.5 <= |m| < 1
    q = max(e - 1, emin) - (precision - 1)  # the unit of the last place
    # Exact scaling; round() ties to even (and returns an int: the sign of a
    # zero comes from x).
    r = math.copysign(round(x / 2.0 ** q) * 2.0 ** q, x)
    largest = (2.0 - 2.0 ** (1 - precision)) * 2.0 ** emax
    if abs(r) > largest:
        return math.copysign(math.inf, x)
    return r


def bf16(x):
    return round_to(x, 8, -126, 127)


def f16(x):
    return round_to(x, 11, -14, 15)


def inputs():
    special = [0.0, -0.0, math.inf, -math.inf, f32(0x7FC00000), f32(0xFFC00001),
               f32(0x7F800001),  # a signalling NaN
               f32(0x3F808000), f32(0x3F818000), f32(0xBF808000),  # bf16 ties (to 1.0, 1.0234375)
               f32(0x3F808001), f32(0x3F807FFF),  # just above / below a tie
               f32(0x00000001), f32(0x00400000), f32(0x00008000), f32(0x00018000),  # f32/bf16 subnormals
               f32(0x007FFFFF), f32(0x7F7FFFFF), f32(0x7F7F8000),  # bf16 overflow by rounding
               65504.0, 65519.99, 65520.0, -65520.0, 1e5,  # f16 max, overflow to inf
               2.0 ** -24, 2.0 ** -25, 1.5 * 2.0 ** -25, 3 * 2.0 ** -25, 2.0 ** -14,  # f16 subnormals
               1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 2049.0, 2051.0]  # f16 ties
    rng = random.Random(17)
    values = list(special)
    while len(values) < N:
        # Random bit patterns, then random values near 1 (where the roundings
        # are dense): both signs, every exponent.
        if len(values) % 2:
            values.append(f32(rng.getrandbits(32)))
        else:
            values.append(rng.uniform(-4.0, 4.0))
    return [struct.unpack('<f', struct.pack('<f', v))[0] for v in values]


def main():
    if sys.argv[1] == 'make':
        write_npy(sys.argv[2] + '/x.npy', inputs())
        return
    x = read_npy(sys.argv[2] + '/x.npy')
    failures = 0
    for name, oracle in (('bf16', bf16), ('f16', f16)):
        got = read_npy('%s/%s.npy' % (sys.argv[3], name))
        nans = ties = 0
        for i, (v, g) in enumerate(zip(x, got)):
            want = oracle(v)
            if math.isnan(want):
                ok = math.isnan(g)
                nans += 1
            else:
                ok = g == want and math.copysign(1, g) == math.copysign(1, want)
            if not ok:
                failures += 1
                if failures <= 10:
                    print('MISMATCH %s: x = %r (0x%08x): got %r, want %r'
                          % (name, v, struct.unpack('<I', struct.pack('<f', v))[0], g, want))
        print('%s: %d values, %d NaNs' % (name, len(x), nans))
    if failures:
        print('FAILED: %d values' % failures)
        sys.exit(1)
    print('CASTS EXACT: round to nearest even against float64')


main()
