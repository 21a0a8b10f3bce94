//===- npy.cpp - read and write NumPy .npy files ---------------------------===//
//
// The header is a Python dict literal; it is parsed by a small grammar that
// accepts exactly what NumPy writes (string keys, a descr string, a bool, a
// tuple of ints) and names the problem otherwise.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/npy.h"

#include "runtime/dtype.h"
#include "runtime/support/file_io.h"

#include <cstring>
#include <new>

namespace tcc::rt {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

bool fail(std::string *error, const std::string &message) {
  if (error)
    *error = message;
  return false;
}

/// One value of the header dict.
struct PyValue {
  enum class Kind { String, Bool, Tuple, Other } kind = Kind::Other;
  std::string text;
  bool boolean = false;
  std::vector<int64_t> ints;
};

/// A parser for the dict literal that NumPy writes as the header.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &s) : s_(s) {}

  bool parseDict(std::vector<std::pair<std::string, PyValue>> &out, std::string *message) {
    skip();
    if (!eat('{'))
      return err(message, "the header is not a dict");
    while (true) {
      skip();
      if (eat('}'))
        break;
      std::string key;
      if (!parseString(key))
        return err(message, "expected a string key in the header dict");
      skip();
      if (!eat(':'))
        return err(message, "expected ':' after key '" + key + "'");
      skip();
      PyValue value;
      if (!parseValue(value))
        return err(message, "cannot parse the value of '" + key + "'");
      out.emplace_back(std::move(key), std::move(value));
      skip();
      if (eat(','))
        continue;
      skip();
      if (eat('}'))
        break;
      return err(message, "expected ',' or '}' in the header dict");
    }
    skip();
    if (pos_ != s_.size())
      return err(message, "unexpected text after the header dict");
    return true;
  }

private:
  bool err(std::string *message, const std::string &what) {
    *message = what;
    return false;
  }
  void skip() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool eatWord(const char *word) {
    size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) == 0) {
      pos_ += n;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
      return false;
    char quote = s_[pos_++];
    size_t end = s_.find(quote, pos_);
    if (end == std::string::npos)
      return false;
    out = s_.substr(pos_, end - pos_);
    if (out.find('\\') != std::string::npos)
      return false; // NumPy never escapes anything in these strings
    pos_ = end + 1;
    return true;
  }
  bool parseInt(int64_t &out) {
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[pos_] - '0', &v))
        return false;
      ++pos_;
    }
    if (pos_ == start)
      return false;
    eat('L'); // Python 2 long literals in old files
    out = v;
    return true;
  }
  bool parseValue(PyValue &out) {
    if (pos_ < s_.size() && (s_[pos_] == '\'' || s_[pos_] == '"')) {
      out.kind = PyValue::Kind::String;
      return parseString(out.text);
    }
    if (eatWord("True")) {
      out.kind = PyValue::Kind::Bool;
      out.boolean = true;
      return true;
    }
    if (eatWord("False")) {
      out.kind = PyValue::Kind::Bool;
      out.boolean = false;
      return true;
    }
    if (eat('(')) {
      out.kind = PyValue::Kind::Tuple;
      while (true) {
        skip();
        if (eat(')'))
          return true;
        int64_t v;
        if (!parseInt(v))
          return false;
        out.ints.push_back(v);
        skip();
        if (eat(','))
          continue;
        skip();
        return eat(')');
      }
    }
    // A list (structured dtype) or anything else: skip to a plausible end so
    // the caller can say which key is unsupported.
    out.kind = PyValue::Kind::Other;
    int depth = 0;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '[' || c == '(' || c == '{')
        ++depth;
      else if (c == ']' || c == ')' || c == '}') {
        if (depth == 0)
          break;
        --depth;
      } else if (c == ',' && depth == 0)
        break;
      ++pos_;
    }
    return depth == 0;
  }

  const std::string &s_;
  size_t pos_ = 0;
};

/// Maps a descr string ("<f4") to a dtype, or explains why not.
bool parseDescr(const std::string &descr, tcc_dtype *out, std::string *message) {
  if (descr.size() < 2) {
    *message = "unsupported dtype '" + descr + "'";
    return false;
  }
  char order = descr[0];
  std::string code = descr.substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    order = '=';
    code = descr;
  }
  char kind = code[0];
  if (kind == 'O') {
    *message = "object arrays (dtype '" + descr + "') are not supported";
    return false;
  }
  if (kind == 'U' || kind == 'S' || kind == 'a') {
    *message = "string arrays (dtype '" + descr + "') are not supported";
    return false;
  }
  if (kind == 'c') {
    *message = "complex arrays (dtype '" + descr + "') are not supported";
    return false;
  }
  static const struct {
    const char *code;
    tcc_dtype dtype;
  } table[] = {{"f2", TCC_DTYPE_F16}, {"f4", TCC_DTYPE_F32}, {"f8", TCC_DTYPE_F64},
               {"i1", TCC_DTYPE_I8},  {"i2", TCC_DTYPE_I16}, {"i4", TCC_DTYPE_I32},
               {"i8", TCC_DTYPE_I64}, {"u1", TCC_DTYPE_U8},  {"u2", TCC_DTYPE_U16},
               {"u4", TCC_DTYPE_U32}, {"u8", TCC_DTYPE_U64}, {"b1", TCC_DTYPE_BOOL}};
  for (const auto &entry : table) {
    if (code != entry.code)
      continue;
    if (order == '>' && dtypeSize(entry.dtype) > 1) {
      *message = "big-endian arrays (dtype '" + descr + "') are not supported; use '<" + code + "'";
      return false;
    }
    *out = entry.dtype;
    return true;
  }
  *message = "unsupported dtype '" + descr + "'";
  return false;
}

const char *descrOf(tcc_dtype dtype) {
  switch (dtype) {
  case TCC_DTYPE_F16:
    return "<f2";
  case TCC_DTYPE_F32:
    return "<f4";
  case TCC_DTYPE_F64:
    return "<f8";
  case TCC_DTYPE_I8:
    return "|i1";
  case TCC_DTYPE_I16:
    return "<i2";
  case TCC_DTYPE_I32:
    return "<i4";
  case TCC_DTYPE_I64:
    return "<i8";
  case TCC_DTYPE_U8:
    return "|u1";
  case TCC_DTYPE_U16:
    return "<u2";
  case TCC_DTYPE_BF16:
    return "<u2"; // bit patterns; NumPy has no bfloat16
  case TCC_DTYPE_U32:
    return "<u4";
  case TCC_DTYPE_U64:
    return "<u8";
  case TCC_DTYPE_BOOL:
    return "|b1";
  }
  return nullptr;
}

} // namespace

namespace {

/// Parses the header of an in-memory .npy image and checks the data that
/// follows it: on success *dtype, *shape and *dataOffset describe the array,
/// whose bytes are data[*dataOffset, size).
bool parseNpyHeader(const uint8_t *data, size_t size, const std::string &what, tcc_dtype *dtype,
                    std::vector<int64_t> *shape, size_t *dataOffset, std::string *error) {
  if (size < kMagicSize + 2 || std::memcmp(data, kMagic, kMagicSize) != 0)
    return fail(error, what + ": not a .npy file (no \\x93NUMPY magic)");
  unsigned major = data[6], minor = data[7];
  size_t lengthBytes;
  if (major == 1 && minor == 0)
    lengthBytes = 2;
  else if ((major == 2 || major == 3) && minor == 0)
    lengthBytes = 4;
  else
    return fail(error, what + ": unsupported .npy format version " + std::to_string(major) + "." +
                           std::to_string(minor) + " (1.0, 2.0 and 3.0 are supported)");
  size_t pos = kMagicSize + 2;
  if (size - pos < lengthBytes)
    return fail(error, what + ": truncated header");
  uint64_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= uint64_t(data[pos + i]) << (8 * i);
  pos += lengthBytes;
  if (headerLength > size - pos)
    return fail(error, what + ": truncated header (" + std::to_string(headerLength) +
                           " bytes announced, " + std::to_string(size - pos) + " present)");
  std::string header(reinterpret_cast<const char *>(data + pos), size_t(headerLength));
  pos += size_t(headerLength);

  std::vector<std::pair<std::string, PyValue>> dict;
  std::string message;
  if (!HeaderParser(header).parseDict(dict, &message))
    return fail(error, what + ": invalid header: " + message);
  const PyValue *descr = nullptr, *fortran = nullptr, *shapeValue = nullptr;
  for (const auto &[key, value] : dict) {
    const PyValue **slot = key == "descr"           ? &descr
                           : key == "fortran_order" ? &fortran
                           : key == "shape"         ? &shapeValue
                                                    : nullptr;
    if (!slot)
      return fail(error, what + ": invalid header: unknown key '" + key + "'");
    if (*slot)
      return fail(error, what + ": invalid header: key '" + key + "' appears twice");
    *slot = &value;
  }
  if (!descr || !fortran || !shapeValue)
    return fail(error, what + ": invalid header: needs 'descr', 'fortran_order' and 'shape'");
  if (descr->kind != PyValue::Kind::String)
    return fail(error, what + ": structured dtypes are not supported");
  if (fortran->kind != PyValue::Kind::Bool)
    return fail(error, what + ": invalid header: 'fortran_order' is not True or False");
  if (shapeValue->kind != PyValue::Kind::Tuple)
    return fail(error, what + ": invalid header: 'shape' is not a tuple of integers");
  if (!parseDescr(descr->text, dtype, &message))
    return fail(error, what + ": " + message);
  int64_t bytes;
  if (!tensorByteSize(*dtype, shapeValue->ints, &bytes))
    return fail(error, what + ": shape " + shapeString(shapeValue->ints) + " is too large");
  // Fortran order only matters when two dimensions exceed 1.
  size_t bigDims = 0;
  for (int64_t d : shapeValue->ints)
    bigDims += d > 1;
  if (fortran->boolean && bigDims > 1)
    return fail(error, what + ": Fortran-order arrays are not supported; save with "
                              "numpy.ascontiguousarray");
  uint64_t present = size - pos;
  if (present < uint64_t(bytes))
    return fail(error, what + ": truncated data: " + descr->text + shapeString(shapeValue->ints) +
                           " needs " + std::to_string(bytes) + " bytes, the file holds " +
                           std::to_string(present));
  if (present > uint64_t(bytes))
    return fail(error, what + ": " + std::to_string(present - uint64_t(bytes)) +
                           " unexpected bytes after the data");
  if (*dtype == TCC_DTYPE_BOOL)
    for (size_t i = pos; i < size; ++i)
      if (data[i] > 1)
        return fail(error,
                    what + ": a bool element holds " + std::to_string(data[i]) + ", not 0 or 1");
  *shape = shapeValue->ints;
  *dataOffset = pos;
  return true;
}

} // namespace

bool parseNpy(const uint8_t *data, size_t size, const std::string &what, HostTensor &out,
              std::string *error) {
  try {
    size_t offset;
    if (!parseNpyHeader(data, size, what, &out.dtype, &out.shape, &offset, error))
      return false;
    out.bytes.assign(data + offset, data + size);
    out.name.clear();
    return true;
  } catch (const std::bad_alloc &) {
    return fail(error, what + ": out of memory");
  }
}

bool MappedNpy::open(const std::string &path, std::string *error) {
  try {
    if (!file_.open(path, error))
      return false;
    size_t offset;
    if (!parseNpyHeader(file_.data(), file_.size(), path, &dtype_, &shape_, &offset, error)) {
      file_ = MappedFile();
      return false;
    }
    data_ = file_.data() + offset;
    bytes_ = file_.size() - offset;
    return true;
  } catch (const std::bad_alloc &) {
    file_ = MappedFile();
    return fail(error, path + ": out of memory");
  }
}

bool readNpy(const std::string &path, HostTensor &out, std::string *error) {
  // Read, not mapped: a file truncated meanwhile is a parse error, never a
  // SIGBUS.
  std::vector<uint8_t> bytes;
  if (!readFile(path, bytes, error))
    return false;
  return parseNpy(bytes.data(), bytes.size(), path, out, error);
}

bool encodeNpy(tcc_dtype dtype, const std::vector<int64_t> &shape, const void *data, size_t size,
               std::vector<uint8_t> &out, std::string *error) {
  const char *descr = descrOf(dtype);
  int64_t bytes;
  if (!descr || !tensorByteSize(dtype, shape, &bytes))
    return fail(error,
                std::string("cannot write ") + dtypeName(dtype) + shapeString(shape) + " as .npy");
  if (uint64_t(bytes) != size)
    return fail(error, "tensor of " + std::to_string(size) + " bytes, but " + dtypeName(dtype) +
                           shapeString(shape) + " needs " + std::to_string(bytes));
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    header += (i ? ", " : "") + std::to_string(shape[i]);
  header += shape.size() == 1 ? ",), }" : "), }";
  // NumPy pads the whole preamble to a multiple of 64 and ends it with '\n'.
  size_t lengthBytes = 2;
  auto padded = [&](size_t lb) {
    size_t total = kMagicSize + 2 + lb + header.size() + 1;
    return header.size() + 1 + (64 - total % 64) % 64;
  };
  size_t headerLength = padded(2);
  if (headerLength > 0xFFFF) {
    lengthBytes = 4;
    headerLength = padded(4);
  }
  header.resize(headerLength - 1, ' ');
  header += '\n';
  try {
    out.clear();
    out.reserve(kMagicSize + 2 + lengthBytes + header.size() + size);
    out.insert(out.end(), kMagic, kMagic + kMagicSize);
    out.push_back(lengthBytes == 2 ? 1 : 2);
    out.push_back(0);
    for (size_t i = 0; i < lengthBytes; ++i)
      out.push_back(uint8_t((headerLength >> (8 * i)) & 0xFF));
    out.insert(out.end(), header.begin(), header.end());
    const auto *p = static_cast<const uint8_t *>(data);
    out.insert(out.end(), p, p + size);
  } catch (const std::bad_alloc &) {
    return fail(error, "out of memory");
  }
  return true;
}

bool writeNpy(const std::string &path, tcc_dtype dtype, const std::vector<int64_t> &shape,
              const void *data, size_t size, std::string *error) {
  std::vector<uint8_t> image;
  std::string message;
  if (!encodeNpy(dtype, shape, data, size, image, &message))
    return fail(error, path + ": " + message);
  return writeFileAtomic(path, {{image.data(), image.size()}},
                         /*durable=*/false, error);
}

} // namespace tcc::rt
