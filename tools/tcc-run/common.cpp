//===- common.cpp - what every part of tcc-run shares ---------------------===//

#include "tools/tcc-run/common.h"

#include "runtime/dtype.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace tcc::run {

void die(const std::string &message) { throw UsageError{message}; }

void check(tcc_status status) {
  if (status != TCC_OK)
    die(tcc_last_error());
}

std::string typeString(const tcc_tensor_info &t) {
  return std::string(tcc::rt::dtypeName(t.dtype)) + tcc::rt::shapeString(t.shape, size_t(t.rank));
}

std::string npyFileName(const std::string &name) {
  std::string out = name;
  for (char &c : out)
    if (c == '/')
      c = '_';
  if (out.empty() || out == "." || out == "..")
    out = "_" + out;
  return out + ".npy";
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

SessionHandle createSession(tcc_artifact_t artifact, const Options &o) {
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.num_threads = o.threads;
  options.poison_arena = o.poison;
  options.skip_default_params = !o.params.empty();
  SessionHandle handle;
  tcc_status created = tcc_session_create(artifact, &options, &handle.s);
  if (created == TCC_ERROR_NOT_FOUND && o.params.empty())
    die(std::string(tcc_last_error()) + "; or pass --params FILE");
  check(created);
  if (!o.params.empty())
    check(tcc_session_load_params(handle.s, o.params.c_str()));
  return handle;
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

} // namespace tcc::run
