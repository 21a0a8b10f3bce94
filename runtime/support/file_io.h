//===- file_io.h - reading, mapping and atomically writing files ---------===//
//
// The few file operations the runtime's formats share. A file is written
// atomically (temporary file in the same folder, then rename) so a crash
// never leaves a half-written checkpoint or output behind.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_SUPPORT_FILE_IO_H
#define TCC_RUNTIME_SUPPORT_FILE_IO_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tcc::rt {

/// Reads a whole regular file. On failure returns false and sets *error to
/// "PATH: reason".
bool readFile(const std::string &path, std::vector<uint8_t> &out, std::string *error);

/// A read-only memory mapping of a whole file; unmapped on destruction.
/// Move-only. An empty file maps to data() == nullptr, size() == 0.
class MappedFile {
public:
  MappedFile() = default;
  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  /// Maps PATH (which must be a regular file). On failure returns false,
  /// sets *error to "PATH: reason" and leaves *this empty.
  bool open(const std::string &path, std::string *error);

  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

private:
  void reset();
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

/// A regular file read at offsets (pread) for as long as it stays open: for
/// data read piecewise over a long run (tcc-run's data sets). Unlike a
/// mapping, a file truncated or rewritten underneath becomes a message from
/// readAt or unchanged, never a SIGBUS. Opening a FIFO, a device or a folder
/// fails at once (it never blocks). Move-only.
class FileReader {
public:
  FileReader() = default;
  FileReader(FileReader &&other) noexcept;
  FileReader &operator=(FileReader &&other) noexcept;
  FileReader(const FileReader &) = delete;
  FileReader &operator=(const FileReader &) = delete;
  ~FileReader();

  /// Opens PATH (a regular file). On failure returns false, sets *error to
  /// "PATH: reason" and leaves *this closed.
  bool open(const std::string &path, std::string *error);

  const std::string &path() const { return path_; }
  /// The file's size when it was opened.
  uint64_t size() const { return size_; }

  /// Reads SIZE bytes at OFFSET into OUT. False with *error "PATH: ..." if
  /// the read fails or the file no longer holds them (it shrank).
  bool readAt(uint64_t offset, void *out, size_t size, std::string *error) const;

  /// False with *error "PATH: ..." if the file's size or modification time
  /// differs from when it was opened (someone rewrote it).
  bool unchanged(std::string *error) const;

private:
  void reset();
  int fd_ = -1;
  std::string path_;
  uint64_t size_ = 0;
  int64_t mtimeSec_ = 0, mtimeNsec_ = 0;
};

/// One contiguous piece of a file being written.
struct ByteRange {
  const void *data;
  size_t size;
};

/// Writes the concatenation of PIECES to PATH atomically: the bytes go to a
/// temporary file in PATH's folder, which is renamed over PATH only when
/// complete. With DURABLE the file and its folder are fsync'ed too, so the new
/// file survives a power loss (checkpoints); without it a crash can lose the
/// new file but never expose a partial one. The file gets mode 0644.
bool writeFileAtomic(const std::string &path, const std::vector<ByteRange> &pieces, bool durable,
                     std::string *error);

/// strerror(errnum) as a std::string.
std::string errnoString(int errnum);

} // namespace tcc::rt

#endif // TCC_RUNTIME_SUPPORT_FILE_IO_H
