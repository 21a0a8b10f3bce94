//===- safetensors.cpp - read and write safetensors files -----------------===//
//
// The reader trusts nothing in the file: every length, offset and shape is
// checked against the others before a pointer into the mapping is returned.
// Neither side throws: allocation failure becomes an error message.
//
//===----------------------------------------------------------------------===//

#include "runtime/checkpoint/safetensors.h"

#include "runtime/checkpoint/json.h"
#include "runtime/dtype.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <set>

namespace tcc::rt {

namespace {

/// The limit of the reference implementation: a bigger header is an attack
/// or corruption, never a real model.
constexpr uint64_t kMaxHeaderSize = 100'000'000;
/// What the parsed header may take (json::parse's count). A typical entry
/// takes ~10-15 times its text, so this admits ~40 MB of real header
/// (~500,000 tensors); text of nothing but tiny values ("[0,0,...]") takes
/// ~50 times its size, and a 100 MB header of it asked for 5.8 GB.
constexpr size_t kMaxHeaderMemory = size_t(512) << 20;

struct DtypeName {
  tcc_dtype dtype;
  const char *name;
};

constexpr DtypeName kDtypeNames[] = {
    {TCC_DTYPE_F32, "F32"},   {TCC_DTYPE_F64, "F64"}, {TCC_DTYPE_F16, "F16"},
    {TCC_DTYPE_BF16, "BF16"}, {TCC_DTYPE_I8, "I8"},   {TCC_DTYPE_I16, "I16"},
    {TCC_DTYPE_I32, "I32"},   {TCC_DTYPE_I64, "I64"}, {TCC_DTYPE_U8, "U8"},
    {TCC_DTYPE_U16, "U16"},   {TCC_DTYPE_U32, "U32"}, {TCC_DTYPE_U64, "U64"},
    {TCC_DTYPE_BOOL, "BOOL"},
};

bool fail(std::string *error, const std::string &message) {
  if (error)
    *error = message;
  return false;
}

std::string quoted(const std::string &name) {
  std::string out;
  json::appendQuoted(out, name);
  return out;
}

} // namespace

const char *safetensorsDtypeName(int32_t dtype) {
  for (const DtypeName &entry : kDtypeNames)
    if (entry.dtype == dtype)
      return entry.name;
  return nullptr;
}

bool parseSafetensorsDtype(const std::string &name, tcc_dtype *out) {
  for (const DtypeName &entry : kDtypeNames)
    if (name == entry.name) {
      *out = entry.dtype;
      return true;
    }
  return false;
}

bool writeSafetensors(const std::string &path, const std::vector<SafetensorsTensor> &tensors,
                      const SafetensorsMetadata &metadata, std::string *error) {
  try {
    std::string header = "{";
    bool first = true;
    if (!metadata.empty()) {
      header += "\"__metadata__\":{";
      for (const auto &[key, value] : metadata) {
        if (!json::isValidUtf8(key) || !json::isValidUtf8(value))
          return fail(error, path + ": metadata " + quoted(key) + " is not valid UTF-8");
        if (!first)
          header += ",";
        first = false;
        json::appendQuoted(header, key);
        header += ":";
        json::appendQuoted(header, value);
      }
      header += "}";
    }
    std::set<std::string> names;
    uint64_t offset = 0;
    std::vector<ByteRange> pieces;
    pieces.push_back({nullptr, 0}); // the length and header, filled in below
    for (const SafetensorsTensor &t : tensors) {
      std::string where = path + ": tensor " + quoted(t.name) + ": ";
      if (t.name == "__metadata__")
        return fail(error, where + "the name is reserved for metadata");
      if (!json::isValidUtf8(t.name))
        return fail(error, where + "the name is not valid UTF-8");
      if (!names.insert(t.name).second)
        return fail(error, where + "the name appears twice");
      const char *dtype = safetensorsDtypeName(t.dtype);
      if (!dtype)
        return fail(error, where + "unknown dtype " + std::to_string(int(t.dtype)));
      int64_t bytes;
      if (!tensorByteSize(t.dtype, t.shape, &bytes))
        return fail(error, where + "invalid shape " + shapeString(t.shape));
      if (uint64_t(bytes) != t.size)
        return fail(error, where + "has " + std::to_string(t.size) + " bytes, but " + dtype +
                               shapeString(t.shape) + " needs " + std::to_string(bytes));
      if (t.size > 0 && !t.data)
        return fail(error, where + "no data");
      header += first ? "" : ",";
      first = false;
      json::appendQuoted(header, t.name);
      header += ":{\"dtype\":\"";
      header += dtype;
      header += "\",\"shape\":[";
      for (size_t i = 0; i < t.shape.size(); ++i)
        header += (i ? "," : "") + std::to_string(t.shape[i]);
      header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
                std::to_string(offset + t.size) + "]}";
      offset += t.size;
      pieces.push_back({t.data, t.size});
    }
    header += "}";
    // Pad with spaces (which the format allows) so the data starts 64-byte
    // aligned in the file, and so in a page-aligned mapping.
    while ((8 + header.size()) % 64 != 0)
      header += ' ';
    std::string prefix(8, '\0');
    uint64_t length = header.size();
    for (int i = 0; i < 8; ++i)
      prefix[i] = char((length >> (8 * i)) & 0xFF);
    prefix += header;
    pieces[0] = {prefix.data(), prefix.size()};
    return writeFileAtomic(path, pieces, /*durable=*/true, error);
  } catch (const std::bad_alloc &) {
    return fail(error, path + ": out of memory while writing");
  }
}

const SafetensorsTensor *SafetensorsReader::find(const std::string &name) const {
  for (const SafetensorsTensor &t : tensors_)
    if (t.name == name)
      return &t;
  return nullptr;
}

bool SafetensorsReader::open(const std::string &path, std::string *error) {
  tensors_.clear();
  metadata_.clear();
  file_ = FileReader();
  try {
    if (!readFile(path, bytes_, error))
      return false;
  } catch (const std::bad_alloc &) {
    return fail(error, path + ": out of memory reading the file");
  }
  return parseHeader(bytes_.data(), bytes_.size(), bytes_.size(), bytes_.data(), path, error);
}

bool SafetensorsReader::openFile(const std::string &path, std::string *error) {
  tensors_.clear();
  metadata_.clear();
  bytes_.clear();
  return file_.open(path, error);
}

bool SafetensorsReader::readHeader(std::string *error) {
  const std::string &path = file_.path();
  uint64_t size = file_.size();
  // The length, then the header it announces when the file can hold it
  // (parseHeader says why not otherwise).
  bytes_.assign(size_t(std::min<uint64_t>(size, 8)), 0);
  if (!file_.readAt(0, bytes_.data(), bytes_.size(), error))
    return false;
  if (bytes_.size() == 8) {
    uint64_t headerSize = 0;
    for (int i = 0; i < 8; ++i)
      headerSize |= uint64_t(bytes_[size_t(i)]) << (8 * i);
    if (headerSize <= kMaxHeaderSize && headerSize <= size - 8) {
      bytes_.resize(size_t(8 + headerSize));
      if (!file_.readAt(8, bytes_.data() + 8, size_t(headerSize), error))
        return false;
    }
  }
  return parseHeader(bytes_.data(), bytes_.size(), size, nullptr, path, error);
}

bool SafetensorsReader::readTensor(const SafetensorsTensor &t, void *out,
                                   std::string *error) const {
  if (t.data) {
    if (t.size)
      std::memcpy(out, t.data, t.size);
    return true;
  }
  if (file_.readAt(t.offset, out, t.size, error))
    return true;
  if (error)
    *error += " (reading tensor " + quoted(t.name) + ")";
  return false;
}

bool SafetensorsReader::parse(const uint8_t *data, size_t size, const std::string &what,
                              std::string *error) {
  return parseHeader(data, size, size, data, what, error);
}

bool SafetensorsReader::parseHeader(const uint8_t *data, size_t headSize, uint64_t size,
                                    const uint8_t *image, const std::string &what,
                                    std::string *error) {
  tensors_.clear();
  metadata_.clear();
  try {
    if (size < 8)
      return fail(error, what + ": truncated: " + std::to_string(size) +
                             " bytes, too short for the 8-byte header length");
    uint64_t headerSize = 0;
    for (int i = 0; i < 8; ++i)
      headerSize |= uint64_t(data[i]) << (8 * i);
    if (headerSize > kMaxHeaderSize)
      return fail(error, what + ": header length " + std::to_string(headerSize) +
                             " exceeds the 100000000-byte limit (not a safetensors file?)");
    if (headerSize > size - 8)
      return fail(error, what + ": truncated: header length " + std::to_string(headerSize) +
                             " exceeds the " + std::to_string(size - 8) + " bytes after it");
    if (headSize < 8 + headerSize)
      return fail(error, what + ": the header was not read whole");
    if (headerSize == 0 || data[8] != '{')
      return fail(error, what + ": the header is not a JSON object");
    json::Value root;
    std::string jsonError;
    if (!json::parse(reinterpret_cast<const char *>(data + 8), headerSize, root, &jsonError,
                     kMaxHeaderMemory))
      return fail(error, what + ": invalid JSON header: " + jsonError);
    if (root.kind != json::Value::Kind::Object)
      return fail(error, what + ": the header is not a JSON object");

    uint64_t dataStart = 8 + headerSize;
    uint64_t dataSize = size - dataStart;
    for (size_t i = 0; i < root.keys.size(); ++i) {
      const std::string &name = root.keys[i];
      const json::Value &entry = root.items[i];
      if (name == "__metadata__") {
        if (entry.kind != json::Value::Kind::Object)
          return fail(error, what + ": __metadata__ is not an object");
        for (size_t m = 0; m < entry.keys.size(); ++m) {
          if (entry.items[m].kind != json::Value::Kind::String)
            return fail(error, what + ": __metadata__ value " + quoted(entry.keys[m]) +
                                   " is not a string");
          metadata_[entry.keys[m]] = entry.items[m].text;
        }
        continue;
      }
      std::string where = what + ": tensor " + quoted(name) + ": ";
      if (entry.kind != json::Value::Kind::Object)
        return fail(error, where + "not an object");
      for (const std::string &key : entry.keys)
        if (key != "dtype" && key != "shape" && key != "data_offsets")
          return fail(error, where + "unknown field " + quoted(key));
      const json::Value *dtype = entry.find("dtype");
      const json::Value *shape = entry.find("shape");
      const json::Value *offsets = entry.find("data_offsets");
      if (!dtype || !shape || !offsets)
        return fail(error, where + "needs dtype, shape and data_offsets");
      SafetensorsTensor t;
      t.name = name;
      if (dtype->kind != json::Value::Kind::String || !parseSafetensorsDtype(dtype->text, &t.dtype))
        return fail(error, where + "unsupported dtype " +
                               (dtype->kind == json::Value::Kind::String ? quoted(dtype->text)
                                                                         : "(not a string)"));
      if (shape->kind != json::Value::Kind::Array)
        return fail(error, where + "shape is not an array");
      for (const json::Value &dim : shape->items) {
        uint64_t d;
        if (!dim.asUint64(&d) || d > uint64_t(INT64_MAX))
          return fail(error, where + "shape holds something other than a non-negative integer");
        t.shape.push_back(int64_t(d));
      }
      uint64_t begin, end;
      if (offsets->kind != json::Value::Kind::Array || offsets->items.size() != 2 ||
          !offsets->items[0].asUint64(&begin) || !offsets->items[1].asUint64(&end))
        return fail(error, where + "data_offsets is not a pair of non-negative integers");
      if (begin > end)
        return fail(error, where + "data_offsets [" + std::to_string(begin) + ", " +
                               std::to_string(end) + "] end before they begin");
      if (end > dataSize)
        return fail(error, where + "data_offsets [" + std::to_string(begin) + ", " +
                               std::to_string(end) + "] exceed the " + std::to_string(dataSize) +
                               " data bytes (truncated file?)");
      int64_t bytes;
      if (!tensorByteSize(t.dtype, t.shape, &bytes))
        return fail(error, where + "shape " + shapeString(t.shape) + " is too large");
      if (uint64_t(bytes) != end - begin)
        return fail(error, where + dtype->text + shapeString(t.shape) + " needs " +
                               std::to_string(bytes) + " bytes, but data_offsets give " +
                               std::to_string(end - begin));
      t.offset = dataStart + begin;
      t.data = image ? image + t.offset : nullptr;
      t.size = size_t(end - begin);
      tensors_.push_back(std::move(t));
    }

    // The byte ranges must tile the data exactly: overlapping tensors would
    // alias, and holes hide data that no tensor accounts for.
    std::vector<const SafetensorsTensor *> byOffset;
    for (const SafetensorsTensor &t : tensors_)
      byOffset.push_back(&t);
    std::sort(byOffset.begin(), byOffset.end(),
              [](const SafetensorsTensor *a, const SafetensorsTensor *b) {
                return a->offset != b->offset ? a->offset < b->offset : a->size < b->size;
              });
    uint64_t covered = 0;
    const SafetensorsTensor *previous = nullptr;
    for (const SafetensorsTensor *t : byOffset) {
      uint64_t begin = t->offset - dataStart;
      if (begin < covered)
        return fail(error, what + ": tensor " + quoted(t->name) + " overlaps tensor " +
                               quoted(previous->name));
      if (begin > covered)
        return fail(error, what + ": bytes [" + std::to_string(covered) + ", " +
                               std::to_string(begin) + ") before tensor " + quoted(t->name) +
                               " belong to no tensor");
      covered = begin + t->size;
      previous = t;
    }
    if (covered != dataSize)
      return fail(error, what + ": " + std::to_string(dataSize - covered) +
                             " bytes at the end of the data belong to no tensor");
    return true;
  } catch (const std::bad_alloc &) {
    tensors_.clear();
    metadata_.clear();
    return fail(error, what + ": out of memory while reading the header");
  }
}

} // namespace tcc::rt
