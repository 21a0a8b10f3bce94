#!/usr/bin/env python3
"""Writes the runtime fuzz targets' binary inputs into the build tree.

The source tree holds no binary files, so CMake runs this at configure time:

  make_inputs.py seeds OUT        small valid .npy, safetensors, JSON and
                                  TensorProto files, OUT/<target>/...
  make_inputs.py regressions SRC OUT
                                  every SRC/<target>/*.txt turned into
                                  OUT/<target>/<name>: lines starting with '#'
                                  are the comment (what broke), the rest is the
                                  input with Python bytes escapes (\\xNN, \\n),
                                  newlines between lines dropped; write '\\n'
                                  for a newline byte.

Standard library only; the layouts follow NumPy, the safetensors reference
implementation and protobuf's wire format, not tcc's writers, so the seeds do
not inherit the writers' habits.
"""

import codecs
import json
import os
import struct
import sys


def npy(descr, shape, data, version=1, fortran=False, pad=True):
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape_text)
    length_bytes = 2 if version == 1 else 4
    if pad:
        total = 6 + 2 + length_bytes + len(header) + 1
        header += " " * ((64 - total % 64) % 64)
    header += "\n"
    out = b"\x93NUMPY" + bytes([version, 0])
    out += struct.pack("<H" if version == 1 else "<I", len(header))
    return out + header.encode("latin-1") + data


def npy_seeds():
    yield "f32_2x3", npy("<f4", [2, 3], struct.pack("<6f", 1, -2, 3.5, 0, 1e-3, 7))
    yield "f64_vector", npy("<f8", [3], struct.pack("<3d", 1, 2, 3))
    yield "f16_scalar", npy("<f2", [], b"\x00\x3c")
    yield "i64_labels", npy("<i8", [4], struct.pack("<4q", 0, 3, 9, -1))
    yield "i32_v2", npy("<i4", [2, 2], struct.pack("<4i", 1, 2, 3, 4), version=2)
    yield "u8_v3", npy("|u1", [2, 2, 2], bytes(range(8)), version=3)
    yield "i8", npy("|i1", [3], b"\x80\x00\x7f")
    yield "u16", npy("<u2", [2], b"\x01\x00\xff\xff")
    yield "u32_u64", npy("<u4", [1], b"\x01\x02\x03\x04")
    yield "u64", npy("<u8", [1], b"\x01" * 8)
    yield "i16", npy("<i2", [1], b"\x01\x80")
    yield "bool", npy("|b1", [4], b"\x00\x01\x01\x00")
    yield "empty", npy("<f4", [0, 5], b"")
    yield "fortran_vector", npy("<f4", [2], struct.pack("<2f", 1, 2), fortran=True)
    yield "unpadded", npy("<f4", [1], struct.pack("<f", 1), pad=False)
    yield "big_endian", npy(">f4", [1], struct.pack(">f", 1))
    yield "no_order", npy("f4", [1], struct.pack("<f", 1))
    # Key order and quoting as older NumPy and other writers produce them.
    header = "{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<i4\"}\n"
    yield "python2", (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
                      header.encode() + struct.pack("<2i", 5, 6))


def safetensors(tensors, metadata=None, pad=True):
    """TENSORS: [(name, dtype, shape, bytes)] laid out in order."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors)


def checkpoint_metadata():
    return {"tcc.fingerprint": "0123456789abcdef", "tcc.producer": "tcc 0.1.0",
            "tcc.kind": "checkpoint", "step": "120", "plateau_lr": "0x1.99999ap-4",
            "best_metric": "inf", "stop_bad": "0", "window_loss_sum": "12.5",
            "data_order": "shuffle", "seed": "42"}


def safetensors_seeds():
    yield "empty", safetensors([])
    yield "one_f32", safetensors([("w", "F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4))])
    yield "params", safetensors([
        ("fc1.weight", "F32", [3, 2], struct.pack("<6f", *range(6))),
        ("fc1.bias", "F32", [3], struct.pack("<3f", 0, 0, 1)),
        ("step", "I64", [], struct.pack("<q", 7)),
        ("mask", "BOOL", [2], b"\x01\x00"),
        ("half", "F16", [1], b"\x00\x3c"),
        ("brain", "BF16", [1], b"\x80\x3f"),
    ], metadata={"tcc.kind": "parameters"})
    yield "checkpoint", safetensors([
        ("p", "F32", [1], struct.pack("<f", 0.5)),
        ("adam.m.p", "F32", [1], struct.pack("<f", 0)),
        ("adam.v.p", "F32", [1], struct.pack("<f", 0)),
    ], metadata=checkpoint_metadata())
    yield "zero_sized", safetensors([("a", "U8", [0], b""), ("b", "I32", [0, 3], b""),
                                      ("c", "U8", [1], b"\x05")])
    yield "every_int", safetensors([(d, d, [1], b"\x01" * n) for d, n in
                                    [("I8", 1), ("I16", 2), ("I32", 4), ("U8", 1),
                                     ("U16", 2), ("U32", 4), ("U64", 8), ("F64", 8)]])
    yield "unicode", safetensors([("\u00e9t\u00e9/\U0001f600", "F32", [1], b"\0\0\0\0")],
                                 metadata={"note": "line\nbreak \"quoted\" \\ \u2603"})
    yield "unpadded", safetensors([("x", "F32", [1], b"\0\0\x80\x3f")], pad=False)


JSON_SEEDS = {
    "object": b'{"a": 1, "b": [true, false, null], "c": {"d": "e"}}',
    "numbers": b'[0, -0, 1.5, -2.25e-3, 1E+10, 18446744073709551615, 18446744073709551616]',
    "escapes": b'["\\"\\\\\\/\\b\\f\\n\\r\\t", "\\u00e9\\u2603", "\\ud83d\\ude00", "\\u0000"]',
    "utf8": '{"\u00e9": "\u2603\U0001f600"}'.encode(),
    "nested": b'[[[[[[[[{"x": [[[]]]}]]]]]]]]',
    "spaces": b' \t\r\n{ "k" :\n[ ]\t} \n',
    "header": b'{"__metadata__":{"tcc.kind":"checkpoint","step":"3"},'
              b'"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}',
    "empty_string": b'""',
    "scalar": b'12345',
}


def varint(v):
    out = b""
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(number, wire, payload):
    tag = varint(number << 3 | wire)
    if wire == 2:
        return tag + varint(len(payload)) + payload
    return tag + payload


def packed(number, values):
    return field(number, 2, b"".join(varint(v) for v in values))


def tensor_proto_seeds():
    yield "raw_f32", (packed(1, [2, 2]) + field(2, 0, varint(1)) + field(8, 2, b"x") +
                      field(9, 2, struct.pack("<4f", 1, 2, 3, 4)))
    yield "float_data_unpacked", (field(1, 0, varint(3)) + field(2, 0, varint(1)) +
                                  b"".join(field(4, 5, struct.pack("<f", v)) for v in (1, 2, 3)))
    yield "float_data_packed", (packed(1, [2]) + field(2, 0, varint(1)) +
                                field(4, 2, struct.pack("<2f", 0.5, -1)))
    yield "int32_i8", (packed(1, [3]) + field(2, 0, varint(3)) + packed(5, [-128, 0, 127]))
    yield "int32_bool", (packed(1, [2]) + field(2, 0, varint(9)) + packed(5, [0, 1]))
    yield "int32_f16", (packed(1, [1]) + field(2, 0, varint(10)) + packed(5, [0x3C00]))
    yield "int64_data", (packed(1, [2]) + field(2, 0, varint(7)) + packed(7, [-1, 1 << 40]))
    yield "double_data", (packed(1, [1]) + field(2, 0, varint(11)) +
                          field(10, 2, struct.pack("<d", 3.25)))
    yield "uint64_data", (packed(1, [2]) + field(2, 0, varint(13)) + packed(11, [1, 1 << 63]))
    yield "uint32_data", (packed(1, [1]) + field(2, 0, varint(12)) + packed(11, [0xFFFFFFFF]))
    yield "scalar_bf16_raw", (field(2, 0, varint(16)) + field(9, 2, b"\x80\x3f"))
    yield "doc_and_unknown", (packed(1, [1]) + field(2, 0, varint(2)) + field(12, 2, b"doc") +
                              field(99, 5, b"\0\0\0\0") + field(9, 2, b"\x07"))
    yield "empty", packed(1, [0, 3]) + field(2, 0, varint(1))


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def seeds(out):
    for name, data in npy_seeds():
        write(os.path.join(out, "npy", name + ".npy"), data)
    for name, data in safetensors_seeds():
        write(os.path.join(out, "safetensors", name + ".safetensors"), data)
        # The metadata target: the first byte is the output buffer's size.
        for size in (0, 8, 128, 255):
            write(os.path.join(out, "checkpoint-metadata", "%s_%d" % (name, size)),
                  bytes([size]) + data)
    for name, data in JSON_SEEDS.items():
        write(os.path.join(out, "json", name + ".json"), data)
    for name, data in safetensors_seeds():
        write(os.path.join(out, "json", "header_" + name + ".json"),
              data[8:8 + struct.unpack("<Q", data[:8])[0]])
    for name, data in tensor_proto_seeds():
        write(os.path.join(out, "tensor-proto", name + ".pb"), data)


def regressions(src, out):
    for target in sorted(os.listdir(src)):
        folder = os.path.join(src, target)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".txt"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                lines = [l.rstrip("\n") for l in f if not l.startswith("#")]
            text = "".join(lines).encode("utf-8")
            data = codecs.escape_decode(text)[0]
            write(os.path.join(out, target, name[:-4]), data)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "seeds":
        seeds(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "regressions":
        regressions(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
