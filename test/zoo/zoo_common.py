"""zoo_common.py - what the model zoo's generator and checker share (numpy only).

The zoo commits each model's ONNX graph without its weights: every float
initializer lives in the external-data file weights.bin, which is not
committed but regenerated from ref.json's "weights" list by a counter-based
generator (det_uniform), so the generator (make_zoo.py, with PyTorch) and the
checker (check_zoo.py, numpy only) write the same bytes. The first optimizer
step is compared through a few statistics of each tensor's update (update_stats,
update_error) instead of the full update, which keeps ref.json small.
"""
import json
import math
import struct
import zlib

import numpy as np

ALIGN = 64  # offset alignment of each tensor in weights.bin
WEIGHTS_FILE = 'weights.bin'
TOLERANCE = 1e-3

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def det_uniform(seed, n):
    """n float64 values in [-1, 1), a pure function of (seed, index): value i is
    splitmix64(seed * 2^32 + i) scaled from its top 53 bits."""
    with np.errstate(over='ignore'):
        x = (np.uint64(seed & 0xFFFFFFFF) << np.uint64(32)) + np.arange(n, dtype=np.uint64)
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
    return 2.0 * u - 1.0


def tensor_seed(model, name):
    """The seed of a regenerated tensor: crc32 of 'model/name'."""
    return zlib.crc32(('%s/%s' % (model, name)).encode())


def weight_values(entry):
    """The float32 values of one "weights" entry, shaped."""
    shape = tuple(entry['shape'])
    n = int(np.prod(shape, dtype=np.int64))
    if 'const' in entry:
        return np.full(shape, entry['const'], dtype=np.float32)
    values = entry['mean'] + entry['half_width'] * det_uniform(entry['seed'], n)
    return values.astype(np.float32).reshape(shape)


def layout(entries):
    """Assigns each entry its 64-byte aligned offset (in list order); returns the
    file size."""
    offset = 0
    for entry in entries:
        offset = (offset + ALIGN - 1) // ALIGN * ALIGN
        entry['offset'] = offset
        offset += 4 * int(np.prod(entry['shape'], dtype=np.int64))
    return offset


def philox_first_words(index, stream, counter, seed):
    """The first output word of Philox4x32-10 (Salmon et al., SC'11) at
    counter words (index[i], stream, counter low, counter high) and key (seed
    low, seed high), for an array of indices: the draw tcc's random ops make
    for element i of the ONNX node with index STREAM in the step with rng =
    [seed, counter] (docs/training.md "Dropout")."""
    m32 = np.uint64(0xFFFFFFFF)
    c0 = np.asarray(index, dtype=np.uint64) & m32
    c1 = np.full_like(c0, stream & 0xFFFFFFFF)
    c2 = np.full_like(c0, counter & 0xFFFFFFFF)
    c3 = np.full_like(c0, (counter >> 32) & 0xFFFFFFFF)
    k0, k1 = seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & m32,
                          (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & m32)
    return c0


# Random123's known answers for Philox4x32-10 (first words; counter = (index,
# stream, counter low, counter high), key = (seed low, seed high)).
assert int(philox_first_words([0], 0, 0, 0)[0]) == 0x6627e8d5
assert int(philox_first_words([0xFFFFFFFF], 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF)[0]) == 0x408f276d
assert int(philox_first_words([0x243f6a88], 0x85a308d3, 0x0370734413198a2e, 0x299f31d0a4093822)[0]) == 0xd16cfe09


def dropout_keep(ratio, seed, counter, stream, n):
    """The keep mask (bool, row-major over n elements) of tcc's dropout with
    ratio RATIO on the ONNX node with index STREAM, in the step with rng =
    [seed, counter]: kept where the top 24 bits of the draw are at least
    ceil(ratio 2^24)."""
    words = philox_first_words(np.arange(n, dtype=np.uint64), stream, counter, seed)
    return (words >> np.uint64(8)) >= np.uint64(math.ceil(ratio * (1 << 24)))


def write_weights(entries, path):
    """Writes weights.bin: each entry's float32 little-endian values at its offset,
    zeros in the alignment gaps."""
    end = 0
    for entry in entries:
        end = max(end, entry['offset'] + 4 * int(np.prod(entry['shape'], dtype=np.int64)))
    buf = bytearray(end)
    for entry in entries:
        data = weight_values(entry).astype('<f4').tobytes()
        buf[entry['offset']:entry['offset'] + len(data)] = data
    with open(path, 'wb') as f:
        f.write(bytes(buf))


def initial_values(entries):
    return {e['name']: weight_values(e) for e in entries}


def _probe(name, k, n):
    return det_uniform(zlib.crc32(name.encode()) ^ (0x5bd1e995 * (k + 1) & 0xFFFFFFFF), n)


def update_stats(name, delta):
    """Statistics of a tensor's first-step change delta (float64): l1, l2, max|.|,
    and two projections on fixed pseudo-random directions (per tensor name)."""
    d = np.asarray(delta, dtype=np.float64).reshape(-1)
    return {
        'l1': float(np.abs(d).sum()),
        'l2': float(math.sqrt(float(np.dot(d, d)))),
        'max': float(np.abs(d).max()) if d.size else 0.0,
        'probe': [float(np.dot(d, _probe(name, k, d.size))) for k in (0, 1)],
    }


def update_error(got, ref, n):
    """The relative error of measured statistics against the reference's: the
    largest of |l1 - l1_ref| / l1_ref, |max - max_ref| / max_ref and, per probe
    p, |got - ref| / (l2_ref ||p||) with ||p|| ~ sqrt(n / 3) (about the relative
    L2 error of the update in a random direction)."""
    e_l1 = abs(got['l1'] - ref['l1']) / ref['l1']
    e_max = abs(got['max'] - ref['max']) / ref['max']
    norm = ref['l2'] * math.sqrt(n / 3.0)
    e_probe = max(abs(g - r) / norm for g, r in zip(got['probe'], ref['probe']))
    return max(e_l1, e_max, e_probe)


SAFETENSORS_DTYPES = {'F32': '<f4', 'F64': '<f8', 'F16': '<f2', 'BF16': '<u2', 'I64': '<i8',
                      'I32': '<i4'}


def read_safetensors(path, only=None, native=False):
    """{name: array} of a safetensors file's tensors (those whose dtype is in
    ONLY, default all): float64, or with NATIVE the stored type (BF16 as the
    float32 it widens to exactly). The one numpy reader of the tests and
    benchmarks (test/e2e's npy_io.py has a numpy-free one)."""
    with open(path, 'rb') as f:
        raw = f.read()
    (size,) = struct.unpack('<Q', raw[:8])
    header = json.loads(raw[8:8 + size].decode())
    base = 8 + size
    out = {}
    for name, info in header.items():
        if name == '__metadata__' or (only is not None and info['dtype'] not in only):
            continue
        if info['dtype'] not in SAFETENSORS_DTYPES:
            raise ValueError('%s: tensor %s has dtype %s, which this reader does not know'
                             % (path, name, info['dtype']))
        begin, end = info['data_offsets']
        arr = np.frombuffer(raw[base + begin:base + end], dtype=SAFETENSORS_DTYPES[info['dtype']])
        if info['dtype'] == 'BF16':
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        arr = arr.reshape(info['shape'])
        out[name] = arr.copy() if native else arr.astype(np.float64)
    return out


def perturb_safetensors(src, dst, seed=1, scale=1e-7):
    """SRC's f32 tensors times (1 + SCALE z), z standard normal from
    numpy's default_rng(SEED), into DST: another start as close to SRC as
    rounding (a chaotic run's noise: check_emulation.py --sensitivity,
    check_zoo.py --precision)."""
    with open(src, 'rb') as f:
        raw = f.read()
    n = struct.unpack('<Q', raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    body = bytearray(raw[8 + n:])
    rng = np.random.default_rng(seed)
    for name, info in header.items():
        if name == '__metadata__' or info['dtype'] != 'F32':
            continue
        begin, end = info['data_offsets']
        body[begin:end] = perturbed(np.frombuffer(bytes(body[begin:end]), np.float32), rng,
                                    scale).tobytes()
    with open(dst, 'wb') as f:
        f.write(raw[:8 + n] + bytes(body))


def perturbed(a, rng, scale=1e-7):
    """f32 array A times (1 + SCALE z), z standard normal drawn from RNG."""
    return (a.astype(np.float64) * (1 + scale * rng.standard_normal(a.shape))).astype(np.float32)


def last10(losses):
    """The mean of the last 10 losses of a run."""
    return sum(losses[-10:]) / len(losses[-10:])


def drift_of_means(low, fp32):
    """|mean(LOW) - mean(FP32)| / |mean(FP32)| of two lists of runs' last10
    (a 16-bit and an fp32 run from each start)."""
    m = lambda v: sum(v) / len(v)  # noqa: E731
    return abs(m(low) - m(fp32)) / abs(m(fp32))


def drift_standard_error(low, fp32):
    """The standard error of drift_of_means(LOW, FP32) from the scatter of
    the starts' means (sample variances), relative to FP32's mean; 0 for
    fewer than two starts."""
    n = len(low)
    if n < 2 or len(fp32) != n:
        return 0.0
    def mean_var(v):
        m = sum(v) / n
        return m, sum((x - m) ** 2 for x in v) / (n - 1)
    (_, var_low), (m32, var32) = mean_var(low), mean_var(fp32)
    return ((var_low + var32) / n) ** 0.5 / abs(m32)
