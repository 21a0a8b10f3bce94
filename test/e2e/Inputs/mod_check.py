"""Oracle for test/e2e/onnx-mod-gradient.test: an ONNX Mod(x, w) with w a
parameter, trained one SGD step under MSE; the update of w against float64
finite differences of the same loss (Debian's python3 with numpy and onnx).

  mod_check.py make FMOD MODEL.onnx DATA     the model and its data (seeded)
  mod_check.py check FMOD MODEL.onnx DATA SAVED.safetensors LR
"""
import sys, numpy as np, onnx, json, struct
from onnx import helper as h, TensorProto as T, numpy_helper as nh
cmd = sys.argv[1]
if cmd == 'make':
    fmod = int(sys.argv[2]); out = sys.argv[3]; data = sys.argv[4]
    r = np.random.default_rng(7)
    w = (r.uniform(0.7, 1.9, 3)).astype(np.float32)
    x = r.uniform(-5, 5, (8, 3)).astype(np.float32)
    y = r.uniform(-1, 1, (8, 3)).astype(np.float32)
    g = h.make_graph([h.make_node('Mod', ['x', 'w'], ['out'], fmod=fmod, name='mod')], 'g',
                     [h.make_tensor_value_info('x', T.FLOAT, [8, 3])], [h.make_tensor_value_info('out', T.FLOAT, [8, 3])],
                     [nh.from_array(w, 'w')])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 17)]), out)
    import os; os.makedirs(data, exist_ok=True)
    np.save(data + '/x.npy', x); np.save(data + '/y.npy', y)
else:
    fmod = int(sys.argv[2]); model, data, saved, lr = sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6])
    w = nh.to_array(onnx.load(model).graph.initializer[0]).astype(np.float64)
    x = np.load(data + '/x.npy').astype(np.float64); y = np.load(data + '/y.npy').astype(np.float64)
    def loss(w):
        q = x / w
        whole = np.trunc(q) if fmod else np.floor(q)
        return np.mean((x - whole * w - y) ** 2)
    grad = np.zeros(3)
    for i in range(3):
        e = np.zeros(3); e[i] = 1e-6
        grad[i] = (loss(w + e) - loss(w - e)) / 2e-6
    expected = w - lr * grad
    blob = open(saved, 'rb').read(); n = struct.unpack('<Q', blob[:8])[0]
    hdr = json.loads(blob[8:8 + n]); a, b = hdr['w']['data_offsets']
    got = np.frombuffer(blob[8 + n + a:8 + n + b], np.float32).astype(np.float64)
    err = np.max(np.abs(got - expected) / np.maximum(np.abs(w - expected), 1e-12))
    print('update error %.2e' % err)
    assert err < 1e-4, (got, expected)
    print('OK: Mod fmod=%d: the SGD update of w matches float64 finite differences' % fmod)
