//===- CheckpointMetadataFuzzer.cpp - libFuzzer target for checkpoint metadata ===//
//
// Feeds arbitrary files to tcc_checkpoint_get_metadata, the C API through
// which tcc-run's --resume reads a checkpoint's step, schedule and stopping
// state. The first input byte chooses the size of the output buffer (an exact
// heap allocation, so AddressSanitizer sees any write past it), the rest is
// the file. For every metadata key the reader finds, and for keys it does
// not, the call must keep tcc.h's contract: the value NUL-terminated when it
// fits, TCC_ERROR_INVALID_ARGUMENT when not, TCC_ERROR_NOT_FOUND for a
// missing key, TCC_ERROR_FORMAT for a malformed file, a message on failure.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzUtil.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/include/tcc/tcc.h"

#include <cstring>
#include <memory>

using namespace tcc::rt;
using tcc::fuzz::check;

namespace {

/// Calls tcc_checkpoint_get_metadata for KEY with an OUT_SIZE-byte buffer and
/// checks the outcome against EXPECTED (nullptr: the key is absent).
void query(const std::string &path, const std::string &key, const std::string *expected,
           size_t outSize) {
  std::unique_ptr<char[]> out(new char[outSize ? outSize : 1]);
  tcc_status status = tcc_checkpoint_get_metadata(path.c_str(), key.c_str(), out.get(), outSize);
  if (!expected) {
    check(status == TCC_ERROR_NOT_FOUND, "a missing key is not TCC_ERROR_NOT_FOUND");
  } else if (expected->find('\0') != std::string::npos) {
    // A C string cannot carry it: refused rather than read back truncated.
    check(status == TCC_ERROR_FORMAT, "a value holding NUL is not TCC_ERROR_FORMAT");
  } else if (expected->size() + 1 > outSize) {
    check(status == TCC_ERROR_INVALID_ARGUMENT, "a short buffer is not TCC_ERROR_INVALID_ARGUMENT");
  } else {
    check(status == TCC_OK, "a present key that fits is not TCC_OK");
    check(std::memcmp(out.get(), expected->c_str(), expected->size() + 1) == 0,
          "the value copied is not the file's");
  }
  check((status == TCC_OK) == (*tcc_last_error() == '\0'), "the last error does not match");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  size_t outSize = data[0];
  ++data;
  --size;
  tcc::fuzz::MemFile file(data, size);

  // The reference: what the reader itself accepts.
  SafetensorsReader reader;
  std::string error;
  bool ok = reader.parse(data, size, "fuzz.safetensors", &error);
  if (!ok) {
    std::unique_ptr<char[]> out(new char[outSize ? outSize : 1]);
    tcc_status status = tcc_checkpoint_get_metadata(file.path().c_str(), "step", out.get(), outSize);
    check(status == TCC_ERROR_FORMAT, "a malformed file is not TCC_ERROR_FORMAT");
    check(*tcc_last_error() != '\0', "a failure without a message");
    return 0;
  }
  size_t queried = 0;
  for (const auto &[key, value] : reader.metadata()) {
    // A C string key ends at its first NUL: such keys cannot be asked for.
    if (key.find('\0') != std::string::npos)
      continue;
    if (++queried > 16)
      break;
    query(file.path(), key, &value, outSize);
    query(file.path(), key, &value, value.size() + 1);
  }
  for (const char *key : {"step", "tcc.fingerprint", ""}) {
    auto it = reader.metadata().find(key);
    query(file.path(), key, it == reader.metadata().end() ? nullptr : &it->second, outSize);
  }
  return 0;
}
