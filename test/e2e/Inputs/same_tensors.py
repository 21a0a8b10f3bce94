"""same_tensors.py A.safetensors B.safetensors - prints SAME when every tensor
of A has the same name, dtype, shape and bytes in B (the headers' metadata,
such as the artifact fingerprint, may differ), else the first difference.
Any Python 3, standard library only."""
import json
import struct
import sys


def tensors(path):
    data = open(path, 'rb').read()
    n = struct.unpack('<Q', data[:8])[0]
    header = json.loads(data[8:8 + n])
    header.pop('__metadata__', None)
    body = data[8 + n:]
    return {k: (v['dtype'], v['shape'], body[v['data_offsets'][0]:v['data_offsets'][1]])
            for k, v in header.items()}


def main():
    a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
    if sorted(a) != sorted(b):
        print('DIFFERENT: names', sorted(set(a) ^ set(b)))
        return
    for k in sorted(a):
        if a[k] != b[k]:
            print('DIFFERENT:', k)
            return
    print('SAME: %d tensors' % len(a))


if __name__ == '__main__':
    main()
