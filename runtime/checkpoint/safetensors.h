//===- safetensors.h - read and write safetensors files -------------------===//
//
// The format of tcc's parameter files and checkpoints: an 8-byte
// little-endian header length, a JSON header giving each tensor's dtype, shape
// and byte range, an optional "__metadata__" map of strings, then the data.
// The compiler writes model.safetensors with writeSafetensors; the runtime
// reads it with SafetensorsReader, which checks everything before handing out
// a pointer. This library has no dependencies beyond the C++ library and is
// position-independent, so both the compiler and libtcc_runtime link it.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CHECKPOINT_SAFETENSORS_H
#define TCC_RUNTIME_CHECKPOINT_SAFETENSORS_H

#include "runtime/include/tcc/abi.h"
#include "runtime/support/file_io.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tcc::rt {

/// One tensor of a safetensors file. The data is not owned: for writing it
/// points at the caller's bytes, for reading into the reader's mapping (which
/// keeps the alignment of the file, so it may be unaligned for the dtype).
struct SafetensorsTensor {
  std::string name;
  tcc_dtype dtype;
  std::vector<int64_t> shape;
  /// The bytes in memory (an image parsed in memory, or a file open()
  /// read whole); null for a file read at offsets (readTensor).
  const void *data;
  /// Bytes; always the product of the shape times the element size.
  size_t size;
  /// Where the bytes start in the file.
  uint64_t offset = 0;
};

/// "__metadata__": free-form string pairs (producer, step, fingerprint, ...).
using SafetensorsMetadata = std::map<std::string, std::string>;

/// Writes TENSORS (in the given order, contiguously) and METADATA to PATH,
/// atomically and durably: a temporary file in the same folder is written,
/// fsync'ed and renamed over PATH, so PATH is either the old file or the
/// complete new one. Names must be unique, valid UTF-8 and not "__metadata__";
/// each size must match its dtype and shape. On failure returns false, sets
/// *error to a message naming the file (and the tensor), and leaves PATH as
/// it was.
bool writeSafetensors(const std::string &path, const std::vector<SafetensorsTensor> &tensors,
                      const SafetensorsMetadata &metadata, std::string *error);

/// The safetensors name of a dtype ("F32", "BF16", "BOOL"), or nullptr.
const char *safetensorsDtypeName(int32_t dtype);
/// The dtype of a safetensors name; false for names tcc does not support
/// (e.g. "F8_E4M3").
bool parseSafetensorsDtype(const std::string &name, tcc_dtype *out);

/// A validated, memory-mapped safetensors file. Pointers stay valid while the
/// reader lives (and is not reopened). Not copyable; movable.
class SafetensorsReader {
public:
  /// Reads PATH whole into memory and validates it: header length within the file (and at most
  /// 100 MB, taking at most 512 MiB once parsed), strict JSON, known dtypes, shapes of non-negative integers,
  /// byte ranges in bounds, matching their shapes without overflow, and
  /// covering the data exactly once (no overlap, no hole). On failure returns
  /// false with *error naming the file and, where one is at fault, the tensor.
  bool open(const std::string &path, std::string *error);

  /// Opens PATH to be read at offsets (pread), for files as large as a
  /// model's parameters: only the header is read (readHeader), each tensor
  /// when asked (readTensor), so a file truncated or rewritten meanwhile is
  /// an error from readTensor, never a SIGBUS as from a mapping, and nothing
  /// is held twice in memory. False with *error "PATH: ..." when it cannot be
  /// opened (I/O); then readHeader validates it as open() does (format).
  bool openFile(const std::string &path, std::string *error);
  bool readHeader(std::string *error);

  /// Copies tensor T's bytes (T.size of them) to OUT: from memory, or read
  /// from the file openFile opened. False with *error naming the file and the
  /// tensor when the file no longer holds them.
  bool readTensor(const SafetensorsTensor &t, void *out, std::string *error) const;

  /// Validates an in-memory file image (kept by the caller while this reader
  /// is used). WHAT names it in messages.
  bool parse(const uint8_t *data, size_t size, const std::string &what, std::string *error);

  /// The tensors in header order.
  const std::vector<SafetensorsTensor> &tensors() const { return tensors_; }
  /// The tensor named NAME, or nullptr.
  const SafetensorsTensor *find(const std::string &name) const;
  const SafetensorsMetadata &metadata() const { return metadata_; }

private:
  /// Validates the header in HEAD (at least its first 8 + length bytes, or
  /// all the file has) of a file of FILE_SIZE bytes; IMAGE, when not null,
  /// is the whole file in memory (the tensors' data point into it).
  bool parseHeader(const uint8_t *head, size_t headSize, uint64_t fileSize, const uint8_t *image,
                   const std::string &what, std::string *error);

  FileReader file_;
  std::vector<uint8_t> bytes_; // open(): the file; openFile(): its header
  std::vector<SafetensorsTensor> tensors_;
  SafetensorsMetadata metadata_;
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_CHECKPOINT_SAFETENSORS_H
