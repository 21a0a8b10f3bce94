"""stochastic_depth_check.py - infer of Inputs/stochastic_depth.onnx against
PyTorch's eval mode, where StochasticDepth is the identity: logits =
head(x + relu(fc(x))) in float64 from the parameters file tcc wrote beside
the artifact. Standard library only (Debian's python3).

    stochastic_depth_check.py PARAMS.safetensors X.npy LOGITS.npy"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npy_io import read_npy, read_safetensors  # noqa: E402


def floats(raw):
    return struct.unpack('<%df' % (len(raw) // 4), raw)


def main():
    params = {name: floats(raw) for name, (_, _, raw) in read_safetensors(sys.argv[1]).items()}
    (n, d), x = read_npy(sys.argv[2])
    shape, got = read_npy(sys.argv[3])
    fw, fb, hw, hb = params['fc.weight'], params['fc.bias'], params['head.weight'], params['head.bias']
    worst = 0.0
    for r in range(n):
        row = x[r * d:(r + 1) * d]
        hidden = [max(0.0, fb[o] + sum(fw[o * d + i] * row[i] for i in range(d))) for o in range(d)]
        res = [row[i] + hidden[i] for i in range(d)]
        for c in range(3):
            want = hb[c] + sum(hw[c * d + i] * res[i] for i in range(d))
            worst = max(worst, abs(got[r * 3 + c] - want) / max(abs(want), 1e-3))
    ok = shape == (n, 3) and worst <= 1e-5
    print('stochastic depth in eval mode: %s (worst relative error %.1e)'
          % ('identity' if ok else 'NOT the identity', worst))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
