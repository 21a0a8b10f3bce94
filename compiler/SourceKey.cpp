//===- SourceKey.cpp - the artifact's cache key, before the import --------===//
//
// The model's bytes are hashed; the external-data files, which hold nearly
// all of a large model's bytes, are named by their stamps, as build tools
// name their inputs. Keys are only stored for files that had settled and
// did not change during the compile.
//
//===----------------------------------------------------------------------===//

#include "compiler/SourceKey.h"

#include "compiler/CompileCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

using namespace llvm;

namespace {

/// The ONNX messages on the way from a ModelProto to its tensors'
/// external-data entries (onnx.proto's field numbers below).
enum class Message { Model, Training, Graph, Function, Node, Attribute, Sparse, Tensor, Entry };

/// The message in field FIELD of a message of kind M, if it is on the way.
std::optional<Message> child(Message m, uint64_t field) {
  switch (m) {
  case Message::Model: // graph, training_info, functions
    return field == 7    ? std::optional(Message::Graph)
           : field == 20 ? std::optional(Message::Training)
           : field == 25 ? std::optional(Message::Function)
                         : std::nullopt;
  case Message::Training: // initialization, algorithm
    return field == 1 || field == 2 ? std::optional(Message::Graph) : std::nullopt;
  case Message::Graph: // node, initializer, sparse_initializer
    return field == 1    ? std::optional(Message::Node)
           : field == 5  ? std::optional(Message::Tensor)
           : field == 15 ? std::optional(Message::Sparse)
                         : std::nullopt;
  case Message::Function: // node
    return field == 7 ? std::optional(Message::Node) : std::nullopt;
  case Message::Node: // attribute
    return field == 5 ? std::optional(Message::Attribute) : std::nullopt;
  case Message::Attribute: // t, tensors; g, graphs; sparse_tensor(s)
    return field == 5 || field == 10   ? std::optional(Message::Tensor)
           : field == 6 || field == 11 ? std::optional(Message::Graph)
           : field == 22 || field == 23 ? std::optional(Message::Sparse)
                                        : std::nullopt;
  case Message::Sparse: // values, indices
    return field == 1 || field == 2 ? std::optional(Message::Tensor) : std::nullopt;
  case Message::Tensor: // external_data
    return field == 13 ? std::optional(Message::Entry) : std::nullopt;
  case Message::Entry:
    return std::nullopt;
  }
  return std::nullopt;
}

/// Protobuf's wire format, one field at a time.
class WireReader {
public:
  explicit WireReader(StringRef bytes) : p(bytes.bytes_begin()), end(bytes.bytes_end()) {}
  bool done() const { return p == end; }

  /// The next field's number, and its bytes when it is length-delimited
  /// (else it is skipped). False when the field is malformed.
  bool next(uint64_t &field, std::optional<StringRef> &bytes) {
    uint64_t tag, n;
    if (!varint(tag) || (tag >> 3) == 0)
      return false;
    field = tag >> 3;
    bytes.reset();
    switch (tag & 7) {
    case 0:
      return varint(n);
    case 1:
      return skip(8);
    case 5:
      return skip(4);
    case 2:
      if (!varint(n) || n > uint64_t(end - p))
        return false;
      bytes = StringRef(reinterpret_cast<const char *>(p), n);
      p += n;
      return true;
    default: // groups, which ONNX does not use
      return false;
    }
  }

private:
  bool varint(uint64_t &v) {
    v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (p == end)
        return false;
      uint8_t b = *p++;
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80))
        return true;
    }
    return false;
  }
  bool skip(size_t n) {
    if (size_t(end - p) < n)
      return false;
    p += n;
    return true;
  }

  const uint8_t *p, *end;
};

bool collectLocations(StringRef bytes, Message m, unsigned depth,
                      std::vector<std::string> &locations) {
  if (depth > 100) // deeper than any importable model nests
    return false;
  WireReader reader(bytes);
  std::optional<std::string> key, value;
  while (!reader.done()) {
    uint64_t field;
    std::optional<StringRef> payload;
    if (!reader.next(field, payload))
      return false;
    if (!payload)
      continue;
    if (m == Message::Entry) {
      (field == 1 ? key : value) = payload->str();
      continue;
    }
    if (std::optional<Message> c = child(m, field))
      if (!collectLocations(*payload, *c, depth + 1, locations))
        return false;
  }
  if (m == Message::Entry && key == "location" && value)
    locations.push_back(*value);
  return true;
}

int64_t nanoseconds(const timespec &t) { return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec; }

} // namespace

std::optional<std::vector<std::string>> tcc::onnxExternalDataLocations(StringRef bytes) {
  std::vector<std::string> locations;
  if (!collectLocations(bytes, Message::Model, 0, locations))
    return std::nullopt;
  llvm::sort(locations);
  locations.erase(std::unique(locations.begin(), locations.end()), locations.end());
  return locations;
}

std::string tcc::fileStamp(StringRef path, bool &settled) {
  struct stat st;
  if (::stat(path.str().c_str(), &st) != 0)
    return "missing";
  SmallString<256> real;
  if (sys::fs::real_path(path, real))
    real = "?";
  timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  int64_t changed = std::max(nanoseconds(st.st_mtim), nanoseconds(st.st_ctim));
  if (nanoseconds(now) - changed < 2'000'000'000)
    settled = false;
  return formatv("{0} {1} {2} {3} {4} {5}", int64_t(st.st_size), nanoseconds(st.st_mtim),
                 nanoseconds(st.st_ctim), uint64_t(st.st_ino), uint64_t(st.st_dev), real)
      .str();
}

std::optional<tcc::SourceKey> tcc::SourceKey::compute(StringRef path, StringRef options) {
  StringRef extension = sys::path::extension(path);
  // ONNX's textual syntax is parsed, not walked; such models are small.
  if (extension == ".onnxtxt" || extension == ".txt")
    return std::nullopt;
  bool onnx = extension != ".tcc" && extension != ".mlir";
  // Regular files only, opened without blocking (a FIFO would wait for a
  // writer): anything else is the importer's to refuse.
  int fd = ::open(path.str().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  struct stat st;
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = std::make_error_code(std::errc::invalid_argument);
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    buffer = MemoryBuffer::getOpenFile(fd, path, st.st_size, /*RequiresNullTerminator=*/false);
  ::close(fd);
  if (!buffer)
    return std::nullopt;
  StringRef bytes = (*buffer)->getBuffer();
  SourceKey key;
  // The model's bytes are in the key: only a change during the compile
  // matters for it, not how recently it was written.
  bool anyAge = true;
  key.stamps_.push_back({path.str(), fileStamp(path, anyAge)});
  std::vector<std::string> parts = {
      "source", compilerIdentity().str(), options.str(), extension.str(),
      toHex(BLAKE3::hash<32>(ArrayRef<uint8_t>(bytes.bytes_begin(), bytes.size())),
            /*LowerCase=*/true)};
  if (onnx) {
    std::optional<std::vector<std::string>> locations = onnxExternalDataLocations(bytes);
    if (!locations)
      return std::nullopt;
    StringRef folder = sys::path::parent_path(path);
    for (const std::string &location : *locations) {
      SmallString<256> file(folder);
      sys::path::append(file, location);
      std::string stamp = fileStamp(file, key.settled_);
      key.stamps_.push_back({std::string(file), stamp});
      parts.push_back(location);
      parts.push_back(stamp);
    }
  }
  std::vector<StringRef> refs(parts.begin(), parts.end());
  key.key_ = hashKey(refs);
  return key;
}

bool tcc::SourceKey::storable() const {
  if (!settled_)
    return false;
  bool ignored;
  return llvm::all_of(stamps_, [&](const auto &file) {
    return fileStamp(file.first, ignored) == file.second;
  });
}
