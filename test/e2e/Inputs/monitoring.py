#!/usr/bin/env python3
"""Oracles for test/e2e/train-monitoring.test. Standard library only.

  monitoring.py trace TRACE.json STEPS EVALS CHECKPOINTS
      the trace is JSON with traceEvents; the steps track holds exactly the
      spans 'step 1' .. 'step STEPS' in order (each with the step's loss),
      the evaluation track EVALS spans, the checkpoint track CHECKPOINTS,
      the data-loading tracks (one per worker) at least one span per step; every span has a
      non-negative start and duration. Prints a summary.
  monitoring.py kernels TRACE.json STEPS
      the kernels track holds spans named kernel_N_NODE, each inside a step
      or an evaluation span, the same number in each of the STEPS steps;
      prints that number.
  monitoring.py records DIR
      every TFRecord frame of DIR's one event file has a length and masked
      CRC-32C that check out (CRC-32C computed here, bit by bit, from the
      Castagnoli polynomial); prints the record count.
"""
import glob
import json
import struct
import sys

from npy_io import read_npy, read_safetensors, write_npy


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def check_trace(path, steps, evals, checkpoints):
    trace = json.load(open(path))
    spans = [e for e in trace['traceEvents'] if e['ph'] == 'X']
    tracks = {e['tid']: e['args']['name'] for e in trace['traceEvents']
              if e['ph'] == 'M' and e['name'] == 'thread_name'}
    by_track = {}
    for e in spans:
        assert e['ts'] >= 0 and e['dur'] >= 0, e
        by_track.setdefault(tracks[e['tid']], []).append(e)
    step_spans = [e for e in by_track.get('steps', []) if e['name'].startswith('step ')]
    names = [e['name'] for e in step_spans]
    assert names == ['step %d' % (k + 1) for k in range(steps)], names[:5]
    assert all('loss' in e['args'] for e in step_spans)
    assert len(by_track.get('evaluation', [])) == evals, by_track.get('evaluation')
    assert len(by_track.get('checkpoint writes', [])) == checkpoints
    loaded = sum(len(v) for k, v in by_track.items() if k.startswith('data loading'))
    assert loaded >= steps, loaded
    print('OK: %d step spans, %d evaluations, %d checkpoint writes, %d batches loaded' % (
        steps, evals, checkpoints, loaded))


def check_kernels(path, steps):
    trace = json.load(open(path))
    tracks = {e['tid']: e['args']['name'] for e in trace['traceEvents']
              if e['ph'] == 'M' and e['name'] == 'thread_name'}
    spans = [e for e in trace['traceEvents'] if e['ph'] == 'X']
    kernels = [e for e in spans if tracks[e['tid']] == 'kernels']
    outer = [e for e in spans if tracks[e['tid']] in ('steps', 'evaluation')
             and e['name'] != 'wait for data']
    per_step = {}
    for k in kernels:
        assert k['name'].startswith('kernel_'), k
        inside = [o for o in outer if o['ts'] <= k['ts'] and k['ts'] + k['dur'] <= o['ts'] + o['dur']]
        assert inside, 'kernel span outside every step: %r' % k
        per_step[inside[0]['name']] = per_step.get(inside[0]['name'], 0) + 1
    counts = {per_step.get('step %d' % (s + 1), 0) for s in range(steps)}
    assert len(counts) == 1 and 0 not in counts, per_step
    print('OK: %d kernel spans per step' % counts.pop())


def check_records(folder):
    files = glob.glob(folder + '/events.out.tfevents.*')
    assert len(files) == 1, files
    data = open(files[0], 'rb').read()
    count, at = 0, 0
    while at < len(data):
        header = data[at:at + 8]
        length, = struct.unpack('<Q', header)
        crc, = struct.unpack('<I', data[at + 8:at + 12])
        assert crc == masked(header), 'record %d: bad length CRC' % count
        body = data[at + 12:at + 12 + length]
        crc, = struct.unpack('<I', data[at + 12 + length:at + 16 + length])
        assert len(body) == length and crc == masked(body), 'record %d: bad data CRC' % count
        at += 16 + length
        count += 1
    print('OK: %d records' % count)


def poison(src, dst, sample, value):
    shape, xs = read_npy(src + '/features.npy')
    width = len(xs) // shape[0]
    xs = list(xs)
    xs[sample * width:(sample + 1) * width] = [value] * width
    write_npy(dst + '/features.npy', '<f4', list(shape), xs)
    shape, ys = read_npy(src + '/y.npy')
    write_npy(dst + '/y.npy', '<i8', list(shape), ys)


def drop(src, dst, first, end):
    for name, dtype in (('features', '<f4'), ('y', '<i8')):
        shape, xs = read_npy('%s/%s.npy' % (src, name))
        width = len(xs) // shape[0]
        xs = list(xs[:first * width]) + list(xs[end * width:])
        write_npy('%s/%s.npy' % (dst, name), dtype, [shape[0] - (end - first)] + list(shape[1:]), xs)


def same_params(checkpoint, params):
    a, b = read_safetensors(checkpoint), read_safetensors(params)
    for name, tensor in b.items():
        assert name in a, name + ' is not in ' + checkpoint
        assert a[name] == tensor, name + ' differs'
    print('OK: %d parameters are bitwise equal' % len(b))


def main(argv):
    if argv[1] == 'trace':
        check_trace(argv[2], int(argv[3]), int(argv[4]), int(argv[5]))
    elif argv[1] == 'records':
        check_records(argv[2])
    elif argv[1] == 'kernels':
        check_kernels(argv[2], int(argv[3]))
    elif argv[1] == 'same-params':
        same_params(argv[2], argv[3])
    elif argv[1] == 'drop':
        drop(argv[2], argv[3], int(argv[4]), int(argv[5]))
    elif argv[1] == 'poison':
        poison(argv[2], argv[3], int(argv[4]), float(argv[5]))
    else:
        print(__doc__)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
