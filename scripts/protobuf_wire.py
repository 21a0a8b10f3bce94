"""protobuf_wire.py - just enough of protobuf's wire format to read ONNX
ModelProto and TensorProto files without the protobuf package. Standard
library only; shared by onnx_conformance.py and onnx_backend_tests.py."""


def varint(buf, pos):
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def fields(buf):
    """Yields (field number, wire type, value); a length-delimited value is
    its bytes, a fixed one its raw bytes, a varint an int."""
    pos = 0
    n = len(buf)
    while pos < n:
        key, pos = varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            ln, pos = varint(buf, pos)
            value, pos = buf[pos:pos + ln], pos + ln
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError("unsupported wire type %d" % wire)
        yield field, wire, value


def string_field(msg, number):
    for field, wire, value in fields(msg):
        if field == number and wire == 2:
            return value.decode("utf-8", "replace")
    return ""
