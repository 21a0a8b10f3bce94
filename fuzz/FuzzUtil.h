//===- FuzzUtil.h - shared helpers of the runtime's fuzz targets ----------===//
//
// The runtime's readers take paths as well as buffers: a fuzz input is put in
// an anonymous in-memory file (memfd) so that the path-taking readers see the
// same bytes without touching the disk, and a broken invariant aborts with a
// message, which libFuzzer reports as a crash.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FUZZ_FUZZUTIL_H
#define TCC_FUZZ_FUZZUTIL_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace tcc::fuzz {

/// Aborts with WHAT when COND is false: an invariant of the reader broke.
inline void check(bool cond, const char *what) {
  if (!cond) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
  }
}

/// The bytes of one input as a regular file, named by path(), removed when
/// this goes out of scope. A memfd is a regular file to fstat and mmap.
class MemFile {
public:
  MemFile(const uint8_t *data, size_t size) {
    fd_ = memfd_create("fuzz-input", MFD_CLOEXEC);
    check(fd_ >= 0, "memfd_create failed");
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::write(fd_, data + done, size - done);
      check(n > 0, "write to the memfd failed");
      done += size_t(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile &) = delete;
  MemFile &operator=(const MemFile &) = delete;

  const std::string &path() const { return path_; }

private:
  int fd_ = -1;
  std::string path_;
};

} // namespace tcc::fuzz

#endif // TCC_FUZZ_FUZZUTIL_H
