//===- host_tensor.cpp - choose a tensor reader by file extension ---------===//
//
// tcc-run takes each input as a .npy or a .pb; the extension decides which
// reader parses it, and anything else is refused by name.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/host_tensor.h"

#include "runtime/data/npy.h"
#include "runtime/data/tensor_proto.h"

namespace tcc::rt {

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool readTensorFile(const std::string &path, HostTensor &out, std::string *error) {
  if (endsWith(path, ".npy"))
    return readNpy(path, out, error);
  if (endsWith(path, ".pb"))
    return readTensorProto(path, out, error);
  if (error)
    *error = path + ": unknown tensor file type (expected .npy or .pb)";
  return false;
}

} // namespace tcc::rt
