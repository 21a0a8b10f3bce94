//===- tensorboard.cpp - TensorBoard event files of a training run --------===//

#include "runtime/trainer/tensorboard.h"
#include "runtime/trainer/support.h"

#include "runtime/trainer/tensorboard_events.h"

#include <boost/crc.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <unistd.h>

namespace tcc::train {
namespace {

double wallTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The plugin that serializes Events (tensorboard_events.h), loaded once:
/// from the runtime's own folder, else the library search path.
struct Plugin {
  tcc_tensorboard_encode_fn encode = nullptr;
  tcc_tensorboard_free_fn free = nullptr;
};

const Plugin &plugin() {
  static const Plugin loaded = [] {
    Plugin p;
    std::string path = TCC_TENSORBOARD_PLUGIN;
    Dl_info self;
    if (::dladdr(reinterpret_cast<void *>(&crc32c), &self) && self.dli_fname) {
      std::string me = self.dli_fname;
      size_t slash = me.rfind('/');
      if (slash != std::string::npos)
        path = me.substr(0, slash + 1) + TCC_TENSORBOARD_PLUGIN;
    }
    void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      handle = ::dlopen(TCC_TENSORBOARD_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *why = ::dlerror();
      die(std::string("--tensorboard needs ") + TCC_TENSORBOARD_PLUGIN +
          " beside the runtime (and protobuf's libprotobuf-lite): " +
          (why ? why : "dlopen failed"));
    }
    p.encode = reinterpret_cast<tcc_tensorboard_encode_fn>(
        ::dlsym(handle, TCC_TENSORBOARD_ENCODE_SYMBOL));
    p.free = reinterpret_cast<tcc_tensorboard_free_fn>(::dlsym(handle, TCC_TENSORBOARD_FREE_SYMBOL));
    if (!p.encode || !p.free)
      die(path + " is not tcc's TensorBoard plugin (no " TCC_TENSORBOARD_ENCODE_SYMBOL ")");
    return p;
  }();
  return loaded;
}

/// EVENT serialized by the plugin.
std::string encode(tcc_tensorboard_event event) {
  event.wall_time = wallTime();
  char *data = nullptr;
  size_t size = 0;
  if (plugin().encode(&event, &data, &size) != 0)
    die("--tensorboard: the plugin could not serialize an event (out of memory)");
  std::unique_ptr<char, tcc_tensorboard_free_fn> owned(data, plugin().free);
  return std::string(data, size);
}

} // namespace

uint32_t crc32c(const void *data, size_t size) {
  // Castagnoli's polynomial, initial and final XOR all ones, reflected in
  // and out.
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data, size);
  return crc.checksum();
}

uint32_t maskedCrc32c(const void *data, size_t size) {
  uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file_)
    std::fclose(file_);
}

void TensorBoardWriter::open(const std::string &dir, long first) {
  makeDirectory(dir);
  checkWritableFolder(dir, "--tensorboard");
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  // TensorBoard reads every file whose name holds "tfevents", in name
  // order; the seconds first keep a resumed run's file after the earlier.
  path_ = dir + "/events.out.tfevents." + std::to_string(long(wallTime())) + "." + host + "." +
          std::to_string(long(::getpid())) + ".tcc";
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_)
    die("--tensorboard " + path_ + ": cannot create: " + std::strerror(errno));
  tcc_tensorboard_event version = {};
  version.kind = TCC_TENSORBOARD_FILE_VERSION;
  writeRecord(encode(version));
  tcc_tensorboard_event start = {};
  start.kind = TCC_TENSORBOARD_SESSION_START;
  start.step = first + 1;
  writeRecord(encode(start));
}

void TensorBoardWriter::scalars(long step,
                                const std::vector<std::pair<std::string, double>> &values) {
  std::vector<const char *> tags;
  std::vector<float> numbers;
  for (const auto &[tag, value] : values) {
    tags.push_back(tag.c_str());
    numbers.push_back(float(value));
  }
  tcc_tensorboard_event event = {};
  event.kind = TCC_TENSORBOARD_SCALARS;
  event.step = step;
  event.num_scalars = int32_t(values.size());
  event.tags = tags.data();
  event.values = numbers.data();
  writeRecord(encode(event));
}

void TensorBoardWriter::text(long step, const std::string &tag, const std::string &markdown) {
  tcc_tensorboard_event event = {};
  event.kind = TCC_TENSORBOARD_TEXT;
  event.step = step;
  event.text_tag = tag.c_str();
  event.text = markdown.c_str();
  writeRecord(encode(event));
}

void TensorBoardWriter::writeRecord(const std::string &bytes) {
  // TFRecord's length and CRCs are little-endian, as these hosts are.
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "TFRecord is little-endian");
  uint64_t length = bytes.size();
  uint32_t lengthCrc = maskedCrc32c(&length, sizeof length);
  uint32_t dataCrc = maskedCrc32c(bytes.data(), bytes.size());
  if (std::fwrite(&length, sizeof length, 1, file_) != 1 ||
      std::fwrite(&lengthCrc, sizeof lengthCrc, 1, file_) != 1 ||
      std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size() ||
      std::fwrite(&dataCrc, sizeof dataCrc, 1, file_) != 1 || std::fflush(file_) != 0)
    die("--tensorboard " + path_ + ": write failed: " + std::strerror(errno));
}

} // namespace tcc::train
