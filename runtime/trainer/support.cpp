//===- support.cpp - the trainer's failure and C API helpers --------------===//

#include "runtime/trainer/support.h"

#include "runtime/dtype.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace tcc::train {

void die(const std::string &message, tcc_status status) { throw UsageError{message, status}; }

void check(tcc_status status) {
  if (status != TCC_OK)
    die(tcc_last_error(), status);
}

void makeDirectory(const std::string &dir) {
  // Create each missing component, like mkdir -p.
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/')
      continue;
    std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      die(prefix + ": cannot create the output directory: " + std::strerror(errno));
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    die(dir + ": not a directory");
}

void checkWritableFolder(const std::string &dir, const std::string &option) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    die(option + ": the folder " + dir + " does not exist (" + std::strerror(errno) + ")");
  if (!S_ISDIR(st.st_mode))
    die(option + ": " + dir + " is not a folder");
  // access(W_OK) would miss a read-only file system and ACLs; a probe not.
  std::string probe = (dir == "/" ? "" : dir) + "/.tcc-run-probe.XXXXXX";
  std::vector<char> name(probe.begin(), probe.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0)
    die(option + ": cannot create a file in " + dir + ": " + std::strerror(errno));
  ::close(fd);
  ::unlink(name.data());
}

std::string typeString(const tcc_tensor_info &t) {
  return std::string(tcc::rt::dtypeName(t.dtype)) + tcc::rt::shapeString(t.shape, size_t(t.rank));
}

namespace {
const int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
std::atomic<int> stopSignal{0};
static_assert(std::atomic<int>::is_always_lock_free, "read in a signal handler");
extern "C" void onStopSignal(int signal) { stopSignal.store(signal); }
} // namespace

StopSignals::StopSignals() {
  static_assert(sizeof kStopSignals / sizeof kStopSignals[0] == kCount, "one slot per signal");
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  for (int i = 0; i < kCount; ++i)
    sigaction(kStopSignals[i], &action, &previous_[i]);
}

StopSignals::~StopSignals() {
  for (int i = 0; i < kCount; ++i)
    sigaction(kStopSignals[i], &previous_[i], nullptr);
}

const char *StopSignals::pending() {
  switch (stopSignal.load()) {
  case 0:
    return nullptr;
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  default:
    return "SIGHUP";
  }
}

const char *const kCheckpointFiles[2] = {"checkpoint.safetensors", "best.safetensors"};

std::string npyFileName(const std::string &name) {
  std::string out = name;
  for (char &c : out)
    if (c == '/')
      c = '_';
  if (out.empty() || out == "." || out == "..")
    out = "_" + out;
  return out + ".npy";
}

std::string artifactMetadata(tcc_artifact_t artifact, const char *key, const std::string &fallback) {
  const char *value = nullptr;
  tcc_status status = tcc_artifact_get_metadata(artifact, key, &value);
  if (status == TCC_ERROR_NOT_FOUND)
    return fallback;
  check(status);
  return value;
}

bool hasEntry(tcc_artifact_t artifact, const char *name) {
  int32_t index;
  return tcc_artifact_find_entry(artifact, name, &index) == TCC_OK;
}

std::vector<tcc_tensor_info> entryTensors(tcc_artifact_t artifact, const char *name) {
  int32_t entryIndex;
  check(tcc_artifact_find_entry(artifact, name, &entryIndex));
  tcc_entry_info entry;
  check(tcc_artifact_entry_info(artifact, entryIndex, &entry));
  std::vector<tcc_tensor_info> tensors(size_t(entry.num_tensors));
  for (int32_t k = 0; k < entry.num_tensors; ++k)
    check(tcc_artifact_tensor_info(artifact, entry.tensor_indices[k], &tensors[size_t(k)]));
  return tensors;
}

} // namespace tcc::train
