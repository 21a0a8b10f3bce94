#!/usr/bin/python3
"""Checks of test/frontend/dsl/export.test, run by Debian's python3 (onnx,
numpy; onnxruntime when importable). Usage:
  onnx_check.py random OUT.npy DTYPE SHAPE [HIGH]   random normal floats, or
                                                   integers in [0, HIGH)
  onnx_check.py check MODEL.onnx                   onnx's full checker, then
                                                   the model's op types
  onnx_check.py compare A.npy B.npy TOL            max |A - B|, exit 1 above TOL
                                                   (folders: each NAME.npy of B)
  onnx_check.py ort MODEL.onnx REF.npy TOL NAME=IN.npy...
                                                   onnxruntime's first output
                                                   against REF, or SKIP
"""
import os
import sys

import numpy as np


def random(out, dtype, shape, high=None):
    rng = np.random.default_rng(7)
    dims = [int(d) for d in shape.split('x')]
    if high is None:
        value = rng.standard_normal(dims).astype(dtype)
    else:
        value = rng.integers(0, int(high), dims).astype(dtype)
    np.save(out, value)


def check(path):
    import onnx
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    ops = sorted({n.op_type for n in model.graph.node})
    print('valid: opset %d, %d nodes, %d initializers' %
          (model.opset_import[0].version, len(model.graph.node), len(model.graph.initializer)))
    print('ops: ' + ' '.join(ops))


def compare(a, b, tol):
    if os.path.isdir(b):
        names = sorted(f for f in os.listdir(b) if f.endswith('.npy'))
        failed = 0
        for name in names:
            print(name[:-4] + ': ', end='')
            failed |= compare(os.path.join(a, name), os.path.join(b, name), tol)
        return failed
    x, y = np.load(a), np.load(b)
    if x.shape != y.shape:
        print('MISMATCH: shapes %s and %s' % (x.shape, y.shape))
        return 1
    diff = float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64))))
    print('max |difference| %g over %d values' % (diff, x.size))
    if not diff <= float(tol):
        print('MISMATCH: above %s' % tol)
        return 1
    print('OK')
    return 0


def ort(path, ref, tol, bindings):
    try:
        import onnxruntime
    except ImportError:
        print('SKIP: onnxruntime is not importable')
        return 0
    session = onnxruntime.InferenceSession(path, providers=['CPUExecutionProvider'])
    feeds = {}
    for binding in bindings:
        name, file = binding.split('=', 1)
        feeds[name] = np.load(file)
    got = session.run(None, feeds)[0]
    np.save(ref + '.ort.npy', got)
    return compare(ref + '.ort.npy', ref, tol)


def main(argv):
    if argv[1] == 'random':
        random(*argv[2:])
        return 0
    if argv[1] == 'check':
        check(argv[2])
        return 0
    if argv[1] == 'compare':
        return compare(*argv[2:5])
    if argv[1] == 'ort':
        return ort(argv[2], argv[3], argv[4], argv[5:])
    print(__doc__)
    return 2


sys.exit(main(sys.argv))
