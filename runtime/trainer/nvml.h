//===- nvml.h - device memory and utilization from NVML -------------------===//
//
// What --tensorboard records of a CUDA run's device besides the loss: the
// memory in use (and its peak over the run's samples) and the utilization,
// from NVIDIA's management library, loaded with dlopen like the driver, so
// that the runtime loads where it is absent (then there are no such
// scalars, and one line says why).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_NVML_H
#define TCC_RUNTIME_TRAINER_NVML_H

#include <cstdint>
#include <string>

namespace tcc::train {

/// The device of one CUDA ordinal, as NVML sees it.
class DeviceMonitor {
public:
  /// Finds the device of CUDA ORDINAL (by its PCI bus id: NVML numbers
  /// devices in another order than CUDA may). On failure active() is false
  /// and why() says what was missing.
  explicit DeviceMonitor(int ordinal);
  ~DeviceMonitor();
  DeviceMonitor(const DeviceMonitor &) = delete;
  DeviceMonitor &operator=(const DeviceMonitor &) = delete;

  bool active() const { return device_ != nullptr; }
  const std::string &why() const { return why_; }

  struct Sample {
    uint64_t usedBytes = 0, peakBytes = 0; // the device's, all processes
    unsigned utilization = 0;              // percent of the last sample period
  };
  /// Reads the device now; false if NVML failed (the sample is left as is).
  bool sample(Sample &out);

private:
  void *library_ = nullptr;
  void *device_ = nullptr;
  uint64_t peak_ = 0;
  std::string why_;
  // The few NVML entry points used (C ABI, nvml.h is not installed here).
  int (*getMemoryInfo_)(void *, void *) = nullptr;
  int (*getUtilization_)(void *, void *) = nullptr;
  int (*shutdown_)() = nullptr;
};

} // namespace tcc::train

#endif // TCC_RUNTIME_TRAINER_NVML_H
