//===- tensor_proto.cpp - read ONNX TensorProto files ----------------------===//
//
// A protobuf wire-format walk over one message: varints, fixed32/64 and
// length-delimited fields, packed or not. Every read is bounds-checked; an
// unknown field is skipped by its wire type as protobuf requires.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/tensor_proto.h"

#include "runtime/dtype.h"
#include "runtime/support/file_io.h"

#include <cstring>
#include <new>

namespace tcc::rt {

namespace {

enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

/// ONNX TensorProto.DataType values.
enum OnnxType {
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBfloat16 = 16,
};

const char *onnxTypeName(int64_t t) {
  static const char *names[] = {
      "UNDEFINED",      "FLOAT",      "UINT8",          "INT8",       "UINT16",   "INT16",
      "INT32",          "INT64",      "STRING",         "BOOL",       "FLOAT16",  "DOUBLE",
      "UINT32",         "UINT64",     "COMPLEX64",      "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN",
      "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4",     "FLOAT4E2M1"};
  if (t >= 0 && t < int64_t(sizeof(names) / sizeof(names[0])))
    return names[t];
  return "unknown";
}

bool toDtype(int64_t t, tcc_dtype *out) {
  switch (t) {
  case kFloat:
    *out = TCC_DTYPE_F32;
    return true;
  case kUint8:
    *out = TCC_DTYPE_U8;
    return true;
  case kInt8:
    *out = TCC_DTYPE_I8;
    return true;
  case kUint16:
    *out = TCC_DTYPE_U16;
    return true;
  case kInt16:
    *out = TCC_DTYPE_I16;
    return true;
  case kInt32:
    *out = TCC_DTYPE_I32;
    return true;
  case kInt64:
    *out = TCC_DTYPE_I64;
    return true;
  case kBool:
    *out = TCC_DTYPE_BOOL;
    return true;
  case kFloat16:
    *out = TCC_DTYPE_F16;
    return true;
  case kDouble:
    *out = TCC_DTYPE_F64;
    return true;
  case kUint32:
    *out = TCC_DTYPE_U32;
    return true;
  case kUint64:
    *out = TCC_DTYPE_U64;
    return true;
  case kBfloat16:
    *out = TCC_DTYPE_BF16;
    return true;
  default:
    return false;
  }
}

/// A bounds-checked cursor over protobuf bytes.
struct Reader {
  const uint8_t *p;
  const uint8_t *end;

  bool atEnd() const { return p == end; }
  bool varint(uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end)
        return false;
      uint8_t b = *p++;
      v |= uint64_t(b & 0x7F) << shift;
      if (!(b & 0x80)) {
        *out = v;
        return true;
      }
    }
    return false; // more than 10 bytes
  }
  bool fixed(size_t n, uint64_t *out) {
    if (size_t(end - p) < n)
      return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i)
      v |= uint64_t(p[i]) << (8 * i);
    p += n;
    *out = v;
    return true;
  }
  /// A varint of at most 5 bytes whose value is at most MAX: protobuf reads
  /// field tags and length prefixes this way and refuses a longer encoding,
  /// even an overlong one of a small value.
  bool varint32(uint64_t max, uint64_t *out) {
    const uint8_t *start = p;
    return varint(out) && p - start <= 5 && *out <= max;
  }
  /// A length prefix, as protobuf reads one: below 2^31.
  bool size(uint64_t *out) { return varint32(uint64_t(INT32_MAX), out); }
  bool bytes(Reader *out) {
    uint64_t n;
    if (!size(&n) || n > uint64_t(end - p))
      return false;
    *out = {p, p + n};
    p += n;
    return true;
  }
  bool skip(int wireType) {
    uint64_t ignored;
    Reader ignoredBytes;
    switch (wireType) {
    case kVarint:
      return varint(&ignored);
    case kFixed64:
      return fixed(8, &ignored);
    case kFixed32:
      return fixed(4, &ignored);
    case kLengthDelimited:
      return bytes(&ignoredBytes);
    default:
      return false; // groups (3, 4) and invalid types
    }
  }
};

/// Appends the values of a repeated scalar field, packed or not. ELEMENT is
/// the wire type of one unpacked element.
bool readRepeated(Reader &r, int wireType, int elementType, std::vector<uint64_t> &out) {
  auto one = [&](Reader &from) {
    uint64_t v;
    bool ok =
        elementType == kVarint ? from.varint(&v) : from.fixed(elementType == kFixed32 ? 4 : 8, &v);
    if (ok)
      out.push_back(v);
    return ok;
  };
  if (wireType == elementType)
    return one(r);
  if (wireType != kLengthDelimited)
    return false;
  Reader packed;
  if (!r.bytes(&packed))
    return false;
  while (!packed.atEnd())
    if (!one(packed))
      return false;
  return true;
}

bool fail(std::string *error, const std::string &message) {
  if (error)
    *error = message;
  return false;
}

/// The fields of a TensorProto as read off the wire, not yet checked
/// against each other.
struct TensorFields {
  std::vector<uint64_t> dims, floats, int32s, int64s, doubles, uint64s;
  int64_t dataType = 0;
  bool hasRaw = false;
  Reader raw{nullptr, nullptr};
  std::string name;

  /// The number of values in the typed fields.
  size_t typedValues() const {
    return floats.size() + int32s.size() + int64s.size() + doubles.size() + uint64s.size();
  }
  /// The typed field each ONNX type is stored in.
  const std::vector<uint64_t> &typedField() const {
    switch (dataType) {
    case kFloat:
      return floats;
    case kDouble:
      return doubles;
    case kInt64:
      return int64s;
    case kUint32:
    case kUint64:
      return uint64s;
    default:
      return int32s;
    }
  }
};

/// Walks the message R into F, refusing malformed fields and what tcc does
/// not read (segments, strings, external data).
bool readFields(Reader r, const std::string &what, TensorFields &f, std::string *error) {
  while (!r.atEnd()) {
    // A tag is a 32-bit varint of at most 5 bytes (field numbers end at
    // 2^29 - 1): protobuf refuses a longer one, so accepting it would read
    // files no other ONNX tool reads.
    uint64_t tag;
    if (!r.varint32(UINT32_MAX, &tag))
      return fail(error, what + ": not a TensorProto: malformed field tag");
    uint64_t field = tag >> 3;
    int wire = int(tag & 7);
    bool ok = true;
    switch (field) {
    case 1:
      ok = readRepeated(r, wire, kVarint, f.dims);
      break;
    case 2: {
      uint64_t v = 0;
      ok = wire == kVarint && r.varint(&v);
      f.dataType = int64_t(v);
      break;
    }
    case 3:
      return fail(error, what + ": segmented TensorProto is not supported");
    case 4:
      ok = readRepeated(r, wire, kFixed32, f.floats);
      break;
    case 5:
      ok = readRepeated(r, wire, kVarint, f.int32s);
      break;
    case 6:
      return fail(error, what + ": string tensors are not supported");
    case 7:
      ok = readRepeated(r, wire, kVarint, f.int64s);
      break;
    case 8: {
      Reader s;
      ok = wire == kLengthDelimited && r.bytes(&s);
      if (ok)
        f.name.assign(reinterpret_cast<const char *>(s.p), size_t(s.end - s.p));
      break;
    }
    case 9:
      ok = wire == kLengthDelimited && r.bytes(&f.raw);
      f.hasRaw = true;
      break;
    case 10:
      ok = readRepeated(r, wire, kFixed64, f.doubles);
      break;
    case 11:
      ok = readRepeated(r, wire, kVarint, f.uint64s);
      break;
    case 13:
      return fail(error, what + ": tensors with external data are not supported");
    case 14: {
      uint64_t v = 0;
      ok = wire == kVarint && r.varint(&v);
      if (ok && v == 1)
        return fail(error, what + ": tensors with external data are not supported");
      break;
    }
    default:
      if (field == 0)
        return fail(error, what + ": not a TensorProto: field number 0");
      ok = r.skip(wire);
    }
    if (!ok)
      return fail(error, what + ": not a TensorProto: malformed or truncated field " +
                             std::to_string(field));
  }
  return true;
}

/// The range of values int32_data may hold for DTYPE: int32_data holds
/// sign-extended int32 varints, and narrow types must fit.
void int32DataRange(tcc_dtype dtype, int64_t *lo, int64_t *hi) {
  switch (dtype) {
  case TCC_DTYPE_I8:
    *lo = INT8_MIN;
    *hi = INT8_MAX;
    break;
  case TCC_DTYPE_I16:
    *lo = INT16_MIN;
    *hi = INT16_MAX;
    break;
  case TCC_DTYPE_I32:
    *lo = INT32_MIN;
    *hi = INT32_MAX;
    break;
  case TCC_DTYPE_BOOL:
    *lo = 0;
    *hi = 1;
    break;
  default:
    *lo = 0;
    *hi = UINT16_MAX;
    break; // u8/u16, and f16/bf16 bits
  }
  if (dtype == TCC_DTYPE_U8)
    *hi = UINT8_MAX;
}

/// Copies raw_data, of BYTES bytes, into OUT.
bool copyRawData(const TensorFields &f, const std::string &where, tcc_dtype dtype,
                 const std::vector<int64_t> &shape, int64_t bytes, HostTensor &out,
                 std::string *error) {
  if (f.typedValues())
    return fail(error, where + "holds both raw_data and typed data");
  if (uint64_t(f.raw.end - f.raw.p) != uint64_t(bytes))
    return fail(error, where + "raw_data has " + std::to_string(f.raw.end - f.raw.p) +
                           " bytes, but " + dtypeName(dtype) + shapeString(shape) + " needs " +
                           std::to_string(bytes));
  out.bytes.assign(f.raw.p, f.raw.end);
  if (dtype == TCC_DTYPE_BOOL)
    for (uint8_t b : out.bytes)
      if (b > 1)
        return fail(error, where + "a bool element holds " + std::to_string(b));
  return true;
}

/// Copies the typed field of F's data_type, each value checked to fit
/// DTYPE, into OUT as BYTES bytes of COUNT elements.
bool copyTypedValues(const TensorFields &f, const std::string &where, tcc_dtype dtype,
                     const std::vector<int64_t> &shape, int64_t bytes, uint64_t count,
                     HostTensor &out, std::string *error) {
  const std::vector<uint64_t> &values = f.typedField();
  if (values.size() != f.typedValues())
    return fail(error, where + "holds values in a field that does not match data_type " +
                           onnxTypeName(f.dataType));
  if (values.size() != count)
    return fail(error, where + "holds " + std::to_string(values.size()) + " values, but shape " +
                           shapeString(shape) + " needs " + std::to_string(count));
  size_t elementSize = dtypeSize(dtype);
  out.bytes.resize(size_t(bytes));
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t v = values[i];
    if (&values == &f.int32s) {
      int64_t s = int64_t(v);
      int64_t lo, hi;
      int32DataRange(dtype, &lo, &hi);
      if (s < lo || s > hi)
        return fail(error,
                    where + "value " + std::to_string(s) + " does not fit " + dtypeName(dtype));
    } else if (dtype == TCC_DTYPE_U32 && v > UINT32_MAX) {
      return fail(error, where + "value " + std::to_string(v) + " does not fit u32");
    }
    // Little-endian host: the low bytes of the 64-bit value are the element.
    std::memcpy(out.bytes.data() + i * elementSize, &v, elementSize);
  }
  return true;
}

} // namespace

bool parseTensorProto(const uint8_t *data, size_t size, const std::string &what, HostTensor &out,
                      std::string *error) {
  try {
    TensorFields f;
    if (!readFields(Reader{data, data + size}, what, f, error))
      return false;

    std::string where = f.name.empty() ? what + ": " : what + ": tensor '" + f.name + "': ";
    tcc_dtype dtype;
    if (f.dataType == kString)
      return fail(error, where + "string tensors are not supported");
    if (!toDtype(f.dataType, &dtype))
      return fail(error, where + "unsupported data_type " + std::to_string(f.dataType) + " (" +
                             onnxTypeName(f.dataType) + ")");
    std::vector<int64_t> shape;
    for (uint64_t d : f.dims) {
      if (int64_t(d) < 0)
        return fail(error, where + "negative dimension " + std::to_string(int64_t(d)));
      shape.push_back(int64_t(d));
    }
    int64_t bytes;
    if (!tensorByteSize(dtype, shape, &bytes))
      return fail(error, where + "shape " + shapeString(shape) + " is too large");
    uint64_t count = uint64_t(bytes) / dtypeSize(dtype);

    out.dtype = dtype;
    out.shape = shape;
    out.name = f.name;
    out.bytes.clear();
    if (f.hasRaw)
      return copyRawData(f, where, dtype, shape, bytes, out, error);
    return copyTypedValues(f, where, dtype, shape, bytes, count, out, error);
  } catch (const std::bad_alloc &) {
    return fail(error, what + ": out of memory");
  }
}

bool readTensorProto(const std::string &path, HostTensor &out, std::string *error) {
  // Read, not mapped: a file truncated meanwhile is a parse error, never a
  // SIGBUS.
  std::vector<uint8_t> bytes;
  if (!readFile(path, bytes, error))
    return false;
  return parseTensorProto(bytes.data(), bytes.size(), path, out, error);
}

} // namespace tcc::rt
