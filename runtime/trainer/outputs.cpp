//===- outputs.cpp - where tcc-run writes, checked before any work --------===//

#include "runtime/trainer/outputs.h"

#include "runtime/support/file_io.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace tcc::train {
namespace {

std::string folderOf(const std::string &file) {
  size_t slash = file.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
}

std::string realPath(const std::string &path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) ? std::string(buffer) : std::string();
}

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// Whether NAME is what writeFileAtomic names its temporary for BASE:
/// "." BASE ".tmp." and six characters of mkstemp's.
bool isTemporaryOf(const std::string &name, const std::string &base) {
  std::string prefix = "." + base + ".tmp.";
  return name.size() == prefix.size() + 6 && name.compare(0, prefix.size(), prefix) == 0;
}

} // namespace

void checkWritableFile(const std::string &file, const std::string &option) {
  struct stat st;
  if (::stat(file.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    die(option + " " + file + ": is a folder, not a file");
  checkWritableFolder(folderOf(file), option + " " + file);
}

CheckpointFolder::~CheckpointFolder() {
  if (fd_ >= 0)
    ::close(fd_); // releases the lock
}

void CheckpointFolder::open(const std::string &dir, const std::string &resume, bool overwrite) {
  makeDirectory(dir);
  checkWritableFolder(dir, "--checkpoint-dir");
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    die("--checkpoint-dir " + dir + ": cannot open: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int saved = errno;
    ::close(fd);
    die("--checkpoint-dir " + dir +
        (saved == EWOULDBLOCK ? std::string(": in use by another tcc-run (two runs would overwrite "
                                            "each other's checkpoints)")
                              : ": cannot lock: " + std::string(std::strerror(saved))));
  }
  fd_ = fd;
  dir_ = dir;

  // Under the lock no other run writes here: a temporary is what a killed
  // write left (a whole model's worth of bytes each).
  if (DIR *d = ::opendir(dir.c_str())) {
    std::vector<std::string> stale;
    while (dirent *e = ::readdir(d))
      for (const char *base : kCheckpointFiles)
        if (isTemporaryOf(e->d_name, base))
          stale.push_back(dir + "/" + e->d_name);
    ::closedir(d);
    for (const std::string &path : stale)
      if (::unlink(path.c_str()) == 0)
        std::fprintf(stderr, "tcc-run: removed %s, left by an interrupted checkpoint write\n",
                     path.c_str());
  }

  if (overwrite)
    return;
  bool continues = !resume.empty() && realPath(folderOf(resume)) == realPath(dir);
  for (const char *base : kCheckpointFiles) {
    std::string path = dir + "/" + base;
    if (continues || !isRegularFile(path))
      continue;
    char step[64] = "";
    tcc_checkpoint_get_metadata(path.c_str(), "step", step, sizeof step);
    die(path + " holds a checkpoint" + (step[0] ? std::string(" at step ") + step : "") +
        " that this run would replace; continue it with --resume " + dir +
        "/checkpoint.safetensors, or pass --overwrite to start over");
  }
}

MetricsFile::~MetricsFile() {
  if (file_)
    std::fclose(file_);
}

void MetricsFile::open(const std::string &path, bool resumed, long first,
                       const std::string &unwritten) {
  path_ = path;
  if (resumed && isRegularFile(path)) {
    // Keep the steps before FIRST, and FIRST's line: the file's, else the
    // one the checkpoint carries (the run stopped when writing it failed).
    // The resumed run takes the later ones again.
    std::vector<uint8_t> bytes;
    std::string error;
    if (!tcc::rt::readFile(path, bytes, &error))
      die("--metrics " + error);
    const std::string prefix = "{\"step\": ";
    std::string kept;
    bool hasFirst = false;
    long number = 0;
    for (size_t begin = 0; begin < bytes.size();) {
      size_t end = begin;
      while (end < bytes.size() && bytes[end] != '\n')
        ++end;
      std::string line(bytes.begin() + long(begin), bytes.begin() + long(end));
      bool whole = end < bytes.size();
      begin = end + 1;
      ++number;
      // Only a file of tcc-run's lines is rewritten: anything else is a
      // file of the user's named by mistake. (The last line may be cut
      // short anywhere by a crash.)
      bool ours = line.compare(0, prefix.size(), prefix) == 0 ||
                  (!whole && prefix.compare(0, line.size(), line) == 0);
      if (!ours)
        die("--metrics " + path + ": line " + std::to_string(number) +
            " is not a metrics line of tcc-run; a resumed run rewrites this file, so it must be "
            "the metrics file of the run it continues (pass another --metrics file)");
      long step = std::strtol(line.c_str() + std::min(prefix.size(), line.size()), nullptr, 10);
      if (!whole || step < 1 || step > first)
        continue;
      kept += line + "\n";
      hasFirst |= step == first;
    }
    if (!hasFirst && !unwritten.empty())
      kept += unwritten + "\n";
    if (!tcc::rt::writeFileAtomic(path, {{kept.data(), kept.size()}}, /*durable=*/false, &error))
      die("--metrics " + error);
    file_ = std::fopen(path.c_str(), "a");
  } else {
    file_ = std::fopen(path.c_str(), "w");
  }
  if (!file_)
    die("--metrics " + path + ": cannot open for writing: " + std::strerror(errno));
}

void MetricsFile::write(const std::string &line) {
  if (std::fputs(line.c_str(), file_) < 0 || std::fputc('\n', file_) == EOF ||
      std::fflush(file_) != 0)
    die("--metrics " + path_ + ": write failed: " + std::strerror(errno));
}

} // namespace tcc::train
