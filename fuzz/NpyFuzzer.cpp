//===- NpyFuzzer.cpp - libFuzzer target for the .npy reader ---------------===//
//
// Feeds arbitrary bytes to parseNpy, readNpy and MappedNpy::open (the three
// ways tcc-run reads a .npy). They must agree, accept only what describes its
// data exactly, and never crash, hang or allocate beyond the input; an
// accepted tensor must survive encodeNpy and parseNpy unchanged.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzUtil.h"
#include "runtime/data/npy.h"
#include "runtime/dtype.h"

#include <cstring>

using namespace tcc::rt;
using tcc::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  HostTensor t;
  std::string error;
  bool ok = parseNpy(data, size, "fuzz.npy", t, &error);
  check(ok || !error.empty(), "parseNpy failed without a message");
  if (ok) {
    int64_t bytes;
    check(tensorByteSize(t.dtype, t.shape, &bytes) && uint64_t(bytes) == t.bytes.size(),
          "accepted tensor's bytes do not match its dtype and shape");
    std::vector<uint8_t> image;
    check(encodeNpy(t.dtype, t.shape, t.bytes.data(), t.bytes.size(), image, &error),
          "encodeNpy refused an accepted tensor");
    HostTensor again;
    check(parseNpy(image.data(), image.size(), "again.npy", again, &error),
          "parseNpy refused encodeNpy's image");
    check(again.dtype == t.dtype && again.shape == t.shape && again.bytes == t.bytes,
          "encodeNpy + parseNpy changed the tensor");
  }

  // The path-taking readers see the same bytes through a file.
  tcc::fuzz::MemFile file(data, size);
  HostTensor read;
  bool readOk = readNpy(file.path(), read, &error);
  check(readOk == ok, "readNpy and parseNpy disagree");
  if (ok)
    check(read.dtype == t.dtype && read.shape == t.shape && read.bytes == t.bytes,
          "readNpy and parseNpy read different tensors");
  MappedNpy mapped;
  bool mapOk = mapped.open(file.path(), &error);
  check(mapOk == ok, "MappedNpy::open and parseNpy disagree");
  if (ok)
    check(mapped.dtype() == t.dtype && mapped.shape() == t.shape &&
              mapped.bytes() == t.bytes.size() &&
              (t.bytes.empty() || std::memcmp(mapped.data(), t.bytes.data(), t.bytes.size()) == 0),
          "MappedNpy and parseNpy read different tensors");
  return 0;
}
