//===- file_io.cpp - reading, mapping and atomically writing files -------===//
//
// POSIX implementations of file_io.h: every system call's failure becomes a
// message naming the file; descriptors never leak on an error path.
//
//===----------------------------------------------------------------------===//

#include "runtime/support/file_io.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tcc::rt {

std::string errnoString(int errnum) {
  char buffer[256];
  // The GNU strerror_r may return a static string instead of filling buffer.
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(errnum, buffer, sizeof(buffer));
#else
  if (strerror_r(errnum, buffer, sizeof(buffer)) != 0)
    return "error " + std::to_string(errnum);
  return buffer;
#endif
}

namespace {

/// Closes a descriptor on scope exit.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0)
      ::close(fd);
  }
};

bool fail(std::string *error, const std::string &path, const std::string &what) {
  if (error)
    *error = path + ": " + what;
  return false;
}

/// "a FIFO", "a folder", ...: what a path that is not a regular file is, if
/// it is something with a name.
const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a folder";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  return nullptr;
}

/// Opens PATH for reading and checks that it is a regular file. O_NONBLOCK:
/// opening a FIFO for reading would otherwise wait for a writer forever (it
/// changes nothing for a regular file, whose reads never block).
int openRegular(const std::string &path, struct stat *outStat, std::string *error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    fail(error, path, "cannot open: " + errnoString(errno));
    return -1;
  }
  if (::fstat(fd, outStat) != 0) {
    fail(error, path, "cannot stat: " + errnoString(errno));
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(outStat->st_mode)) {
    const char *kind = fileKind(outStat->st_mode);
    fail(error, path, kind ? std::string("is ") + kind + ", not a regular file" : "not a regular file");
    ::close(fd);
    return -1;
  }
  return fd;
}

int openRegular(const std::string &path, size_t *outSize, std::string *error) {
  struct stat st;
  int fd = openRegular(path, &st, error);
  if (fd >= 0)
    *outSize = static_cast<size_t>(st.st_size);
  return fd;
}

bool writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

} // namespace

bool readFile(const std::string &path, std::vector<uint8_t> &out, std::string *error) {
  size_t size = 0;
  int fd = openRegular(path, &size, error);
  if (fd < 0)
    return false;
  FdCloser closer{fd};
  out.resize(size);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, out.data() + done, size - done);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return fail(error, path, "read failed: " + errnoString(errno));
    }
    if (n == 0)
      break; // The file shrank while we read it.
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return true;
}

MappedFile::MappedFile(MappedFile &&other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

MappedFile::~MappedFile() { reset(); }

void MappedFile::reset() {
  if (data_)
    ::munmap(const_cast<uint8_t *>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

bool MappedFile::open(const std::string &path, std::string *error) {
  reset();
  size_t size = 0;
  int fd = openRegular(path, &size, error);
  if (fd < 0)
    return false;
  FdCloser closer{fd};
  if (size == 0)
    return true;
  void *p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED)
    return fail(error, path, "cannot map: " + errnoString(errno));
  data_ = static_cast<const uint8_t *>(p);
  size_ = size;
  return true;
}

FileReader::FileReader(FileReader &&other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), size_(other.size_),
      mtimeSec_(other.mtimeSec_), mtimeNsec_(other.mtimeNsec_) {
  other.fd_ = -1;
}

FileReader &FileReader::operator=(FileReader &&other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    size_ = other.size_;
    mtimeSec_ = other.mtimeSec_;
    mtimeNsec_ = other.mtimeNsec_;
    other.fd_ = -1;
  }
  return *this;
}

FileReader::~FileReader() { reset(); }

void FileReader::reset() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

bool FileReader::open(const std::string &path, std::string *error) {
  reset();
  struct stat st;
  int fd = openRegular(path, &st, error);
  if (fd < 0)
    return false;
  fd_ = fd;
  path_ = path;
  size_ = uint64_t(st.st_size);
  mtimeSec_ = int64_t(st.st_mtim.tv_sec);
  mtimeNsec_ = int64_t(st.st_mtim.tv_nsec);
  return true;
}

bool FileReader::readAt(uint64_t offset, void *out, size_t size, std::string *error) const {
  char *p = static_cast<char *>(out);
  uint64_t at = offset;
  while (size > 0) {
    ssize_t n = ::pread(fd_, p, size, off_t(at));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return fail(error, path_, "read failed: " + errnoString(errno));
    }
    if (n == 0)
      return fail(error, path_,
                  "the file shrank while in use: it held " + std::to_string(size_) +
                      " bytes when opened, now ends before byte " + std::to_string(at + 1));
    p += n;
    at += uint64_t(n);
    size -= size_t(n);
  }
  return true;
}

bool FileReader::unchanged(std::string *error) const {
  struct stat st;
  if (::fstat(fd_, &st) != 0)
    return fail(error, path_, "cannot stat: " + errnoString(errno));
  if (uint64_t(st.st_size) != size_)
    return fail(error, path_,
                std::string(uint64_t(st.st_size) < size_ ? "the file shrank" : "the file grew") +
                    " while in use: it held " + std::to_string(size_) + " bytes when opened, now " +
                    std::to_string(uint64_t(st.st_size)));
  if (int64_t(st.st_mtim.tv_sec) != mtimeSec_ || int64_t(st.st_mtim.tv_nsec) != mtimeNsec_)
    return fail(error, path_, "the file changed while in use (it was modified since it was opened)");
  return true;
}

bool writeFileAtomic(const std::string &path, const std::vector<ByteRange> &pieces, bool durable,
                     std::string *error) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty())
    return fail(error, path, "not a file name");
  // A device or a FIFO (/dev/null, /dev/full, a pipe) is written into, as
  // any program would: renaming a temporary over it would replace the
  // device node itself (as root, in /dev).
  struct stat existing;
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    if (S_ISDIR(existing.st_mode))
      return fail(error, path, "is a folder, not a file");
    int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
      return fail(error, path, "cannot open for writing: " + errnoString(errno));
    FdCloser closer{fd};
    for (const ByteRange &piece : pieces)
      if (piece.size > 0 && !writeAll(fd, piece.data, piece.size))
        return fail(error, path, "write failed: " + errnoString(errno));
    return true;
  }
  // A dot-prefixed temporary in the same folder: rename() is atomic only
  // within one file system.
  std::string tmp = (dir == "/" ? "/" : dir + "/") + "." + base + ".tmp.XXXXXX";
  std::vector<char> tmpName(tmp.begin(), tmp.end());
  tmpName.push_back('\0');
  int fd = ::mkostemp(tmpName.data(), O_CLOEXEC);
  if (fd < 0)
    return fail(error, path,
                "cannot create a temporary file in " + dir + ": " + errnoString(errno));
  auto abandon = [&](const std::string &what) {
    int saved = errno;
    ::close(fd);
    ::unlink(tmpName.data());
    return fail(error, path, what + ": " + errnoString(saved));
  };
  if (::fchmod(fd, 0644) != 0)
    return abandon("cannot set the mode");
  for (const ByteRange &piece : pieces)
    if (piece.size > 0 && !writeAll(fd, piece.data, piece.size))
      return abandon("write failed");
  if (durable && ::fsync(fd) != 0)
    return abandon("fsync failed");
  if (::close(fd) != 0) {
    int saved = errno;
    ::unlink(tmpName.data());
    return fail(error, path, "close failed: " + errnoString(saved));
  }
  if (::rename(tmpName.data(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(tmpName.data());
    return fail(error, path, "cannot rename the temporary file into place: " + errnoString(saved));
  }
  if (durable) {
    // The rename itself is durable only once the folder is synced.
    int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd >= 0) {
      ::fsync(dirFd);
      ::close(dirFd);
    }
  }
  return true;
}

} // namespace tcc::rt
