//===- SafetensorsFuzzer.cpp - libFuzzer target for the safetensors reader ===//
//
// Feeds arbitrary bytes to SafetensorsReader, from a buffer and from a file
// (the way sessions load parameters and checkpoints). An accepted file must
// keep every promise of safetensors.h: each tensor's bytes match its dtype and
// shape, lie inside the data and tile it exactly, names are unique; and what
// was read must survive writeSafetensors and a second open unchanged.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzUtil.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/dtype.h"

#include <cstring>
#include <set>

using namespace tcc::rt;
using tcc::fuzz::check;

namespace {

/// A folder for the round trip's file, on tmpfs where there is one (the
/// writer fsyncs), removed at exit.
const std::string &scratchFile() {
  static const std::string path = [] {
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/tcc-fuzz.XXXXXX";
    check(mkdtemp(pattern.data()) != nullptr, "mkdtemp failed");
    static std::string dir = pattern;
    std::atexit([] {
      ::unlink((dir + "/t.safetensors").c_str());
      ::rmdir(dir.c_str());
    });
    return pattern + "/t.safetensors";
  }();
  return path;
}

bool sameTensors(const SafetensorsReader &a, const SafetensorsReader &b) {
  if (a.tensors().size() != b.tensors().size() || a.metadata() != b.metadata())
    return false;
  for (size_t i = 0; i < a.tensors().size(); ++i) {
    const SafetensorsTensor &x = a.tensors()[i], &y = b.tensors()[i];
    if (x.name != y.name || x.dtype != y.dtype || x.shape != y.shape || x.size != y.size ||
        (x.size && std::memcmp(x.data, y.data, x.size) != 0))
      return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  SafetensorsReader reader;
  std::string error;
  bool ok = reader.parse(data, size, "fuzz.safetensors", &error);
  check(ok || !error.empty(), "parse failed without a message");
  if (ok) {
    uint64_t headerSize = 0;
    for (int i = 0; i < 8; ++i)
      headerSize |= uint64_t(data[i]) << (8 * i);
    const uint8_t *base = data + 8 + headerSize;
    uint64_t total = 0;
    std::set<std::string> names;
    for (const SafetensorsTensor &t : reader.tensors()) {
      int64_t bytes;
      check(tensorByteSize(t.dtype, t.shape, &bytes) && uint64_t(bytes) == t.size,
            "a tensor's size does not match its dtype and shape");
      const auto *p = static_cast<const uint8_t *>(t.data);
      check(p >= base && p + t.size <= data + size, "a tensor lies outside the data");
      check(names.insert(t.name).second, "a tensor name appears twice");
      check(t.name != "__metadata__", "the metadata is read as a tensor");
      check(reader.find(t.name) == &t, "find does not return the tensor");
      total += t.size;
    }
    check(total == uint64_t(data + size - base), "the tensors do not tile the data");

    // What was read, written again and reopened, is the same.
    const std::string &path = scratchFile();
    check(writeSafetensors(path, reader.tensors(), reader.metadata(), &error),
          "writeSafetensors refused what the reader accepted");
    SafetensorsReader again;
    check(again.open(path, &error), "the reader refused what writeSafetensors wrote");
    check(sameTensors(reader, again), "write + read changed the tensors or metadata");
  }

  tcc::fuzz::MemFile file(data, size);
  SafetensorsReader fromFile;
  check(fromFile.open(file.path(), &error) == ok, "open and parse disagree");
  if (ok)
    check(sameTensors(reader, fromFile), "open and parse read different tensors");
  return 0;
}
