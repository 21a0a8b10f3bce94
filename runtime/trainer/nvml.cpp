//===- nvml.cpp - device memory and utilization from NVML -----------------===//

#include "runtime/trainer/nvml.h"

#include "runtime/cuda/driver.h"
#include "runtime/error.h"

#include <algorithm>
#include <dlfcn.h>

namespace tcc::train {
namespace {

// nvml.h's layouts (stable since NVML 1; the header ships with the driver,
// not with the toolkit headers the runtime builds against).
struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlUtilization {
  unsigned int gpu, memory;
};
constexpr int kNvmlSuccess = 0;

} // namespace

DeviceMonitor::DeviceMonitor(int ordinal) {
  std::string bus;
  try {
    bus = tcc::rt::cuda::pciBusId(ordinal);
  } catch (const tcc::rt::Error &e) {
    why_ = e.what();
    return;
  }
  library_ = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    const char *error = ::dlerror();
    why_ = std::string("cannot load libnvidia-ml.so.1: ") + (error ? error : "dlopen failed");
    return;
  }
  auto init = reinterpret_cast<int (*)()>(::dlsym(library_, "nvmlInit_v2"));
  auto byBus = reinterpret_cast<int (*)(const char *, void **)>(
      ::dlsym(library_, "nvmlDeviceGetHandleByPciBusId_v2"));
  getMemoryInfo_ = reinterpret_cast<int (*)(void *, void *)>(
      ::dlsym(library_, "nvmlDeviceGetMemoryInfo"));
  getUtilization_ = reinterpret_cast<int (*)(void *, void *)>(
      ::dlsym(library_, "nvmlDeviceGetUtilizationRates"));
  shutdown_ = reinterpret_cast<int (*)()>(::dlsym(library_, "nvmlShutdown"));
  if (!init || !byBus || !getMemoryInfo_ || !getUtilization_ || !shutdown_) {
    why_ = "libnvidia-ml.so.1 lacks the NVML functions used";
    return;
  }
  if (init() != kNvmlSuccess) {
    why_ = "nvmlInit failed";
    shutdown_ = nullptr;
    return;
  }
  void *device = nullptr;
  if (byBus(bus.c_str(), &device) != kNvmlSuccess || !device) {
    why_ = "NVML has no device at PCI bus " + bus;
    return;
  }
  device_ = device;
}

DeviceMonitor::~DeviceMonitor() {
  if (shutdown_)
    shutdown_();
  if (library_)
    ::dlclose(library_);
}

bool DeviceMonitor::sample(Sample &out) {
  NvmlMemory memory;
  NvmlUtilization utilization;
  if (!device_ || getMemoryInfo_(device_, &memory) != kNvmlSuccess ||
      getUtilization_(device_, &utilization) != kNvmlSuccess)
    return false;
  peak_ = std::max<uint64_t>(peak_, memory.used);
  out.usedBytes = memory.used;
  out.peakBytes = peak_;
  out.utilization = utilization.gpu;
  return true;
}

} // namespace tcc::train
