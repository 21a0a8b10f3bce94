//===- TestUtil.h - temporary folders and files for the runtime's tests ----===//
//
// Each test writes into its own fresh folder, removed afterwards, so tests
// can run in parallel and leave nothing behind.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_TEST_UNIT_RUNTIME_TESTUTIL_H
#define TCC_TEST_UNIT_RUNTIME_TESTUTIL_H

#include <cstdint>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace tcc::test {

/// A fresh folder under $TMPDIR (or /tmp), removed with its files at scope end.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/tcc-runtime-test.XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()))
      path_ = buffer.data();
  }
  ~TempDir() {
    if (path_.empty())
      return;
    for (const std::string &name : list())
      ::unlink((path_ + "/" + name).c_str());
    ::rmdir(path_.c_str());
  }
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }
  /// The names in the folder, "." and ".." excluded.
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    if (DIR *dir = ::opendir(path_.c_str())) {
      while (dirent *entry = ::readdir(dir)) {
        std::string name = entry->d_name;
        if (name != "." && name != "..")
          names.push_back(name);
      }
      ::closedir(dir);
    }
    return names;
  }

private:
  std::string path_;
};

inline void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

inline void writeBytes(const std::string &path, const std::string &bytes) {
  writeBytes(path, std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

inline std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline bool copyFile(const std::string &from, const std::string &to) {
  std::vector<uint8_t> bytes = readBytes(from);
  if (bytes.empty())
    return false;
  writeBytes(to, bytes);
  return true;
}

} // namespace tcc::test

#endif // TCC_TEST_UNIT_RUNTIME_TESTUTIL_H
