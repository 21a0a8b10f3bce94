//===- file_roles.cpp - outputs never overwrite inputs -------------------===//
//
// Identity is the file's (device, inode) when it exists, which sees through
// symbolic and hard links; else the path it will have: the longest existing
// prefix resolved by realpath, the rest with "." and ".." removed.
//
//===----------------------------------------------------------------------===//

#include "runtime/support/file_roles.h"

#include <climits>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

namespace tcc::rt {
namespace {

/// PATH made absolute, its existing part resolved through links, the rest
/// normalized lexically.
std::string resolvedPath(const std::string &path) {
  std::string absolute = path;
  if (absolute.empty() || absolute[0] != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd))
      absolute = std::string(cwd) + "/" + path;
  }
  // Lexical normalization first, so that "dir/../x" of a missing dir works.
  std::vector<std::string> parts;
  for (size_t begin = 0; begin <= absolute.size();) {
    size_t end = absolute.find('/', begin);
    if (end == std::string::npos)
      end = absolute.size();
    std::string part = absolute.substr(begin, end - begin);
    if (part == "..") {
      if (!parts.empty())
        parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    begin = end + 1;
  }
  // The longest prefix that exists, resolved; the rest appended.
  for (size_t keep = parts.size(); keep > 0; --keep) {
    std::string prefix;
    for (size_t i = 0; i < keep; ++i)
      prefix += "/" + parts[i];
    char buffer[PATH_MAX];
    if (!::realpath(prefix.c_str(), buffer))
      continue;
    std::string out = buffer;
    for (size_t i = keep; i < parts.size(); ++i)
      out += (out == "/" ? "" : "/") + parts[i];
    return out;
  }
  std::string out;
  for (const std::string &p : parts)
    out += "/" + p;
  return out.empty() ? "/" : out;
}

} // namespace

std::string paramsBeside(const std::string &artifact) {
  const std::string suffix = ".so";
  if (artifact.size() > suffix.size() &&
      artifact.compare(artifact.size() - suffix.size(), suffix.size(), suffix) == 0)
    return artifact.substr(0, artifact.size() - suffix.size()) + ".safetensors";
  return artifact + ".safetensors";
}

bool sameFile(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  bool hasA = ::stat(a.c_str(), &sa) == 0, hasB = ::stat(b.c_str(), &sb) == 0;
  if (hasA && hasB)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (hasA != hasB)
    return false;
  return resolvedPath(a) == resolvedPath(b);
}

bool checkOutputsApart(const std::vector<FileRole> &inputs, const std::vector<FileRole> &outputs,
                       std::string *error) {
  auto describe = [](const FileRole &f) {
    return f.role[0] == '-' ? f.role + " " + f.path : f.role + " (" + f.path + ")";
  };
  // A character device (/dev/null) takes any number of writers.
  auto device = [](const std::string &path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
  };
  for (size_t o = 0; o < outputs.size(); ++o) {
    const FileRole &out = outputs[o];
    if (out.path.empty() || device(out.path))
      continue;
    for (const FileRole &in : inputs)
      if (!in.path.empty() && sameFile(out.path, in.path)) {
        if (error)
          *error = describe(out) + " is " + describe(in) +
                   ": writing it would destroy an input; choose another output path";
        return false;
      }
    for (size_t p = 0; p < o; ++p)
      if (!outputs[p].path.empty() && sameFile(out.path, outputs[p].path)) {
        if (error)
          *error = describe(out) + " is also " + describe(outputs[p]) +
                   ": one would overwrite the other; choose another path for one of them";
        return false;
      }
  }
  return true;
}

} // namespace tcc::rt
