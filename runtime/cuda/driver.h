//===- driver.h - the CUDA driver API, loaded with dlopen -------------------===//
//
// The runtime never links libcuda: the driver is opened on first use and every
// function is resolved through cuGetProcAddress (CUDA 13 renames several entry
// points behind macros, so plain dlsym would find the wrong versions). A
// machine without a driver or without a device gets one clear error.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CUDA_DRIVER_H
#define TCC_RUNTIME_CUDA_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tcc::rt::cuda {

/// Every driver function the runtime uses, with the typedef of the version
/// that CUDA_VERSION's headers describe.
#define TCC_CUDA_DRIVER_FUNCTIONS(X)                                           \
  X(cuInit, PFN_cuInit_v2000)                                                  \
  X(cuDriverGetVersion, PFN_cuDriverGetVersion_v2020)                          \
  X(cuGetErrorName, PFN_cuGetErrorName_v6000)                                  \
  X(cuGetErrorString, PFN_cuGetErrorString_v6000)                              \
  X(cuDeviceGetCount, PFN_cuDeviceGetCount_v2000)                              \
  X(cuDeviceGet, PFN_cuDeviceGet_v2000)                                        \
  X(cuDeviceGetName, PFN_cuDeviceGetName_v2000)                                \
  X(cuDeviceGetPCIBusId, PFN_cuDeviceGetPCIBusId_v4010)                        \
  X(cuDeviceGetAttribute, PFN_cuDeviceGetAttribute_v2000)                      \
  X(cuDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain_v7000)              \
  X(cuDevicePrimaryCtxRelease, PFN_cuDevicePrimaryCtxRelease_v11000)           \
  X(cuCtxSetCurrent, PFN_cuCtxSetCurrent_v4000)                                \
  X(cuStreamCreate, PFN_cuStreamCreate_v2000)                                  \
  X(cuStreamDestroy, PFN_cuStreamDestroy_v4000)                                \
  X(cuStreamSynchronize, PFN_cuStreamSynchronize_v2000)                        \
  X(cuStreamWaitEvent, PFN_cuStreamWaitEvent_v3020)                            \
  X(cuMemAlloc, PFN_cuMemAlloc_v3020)                                          \
  X(cuMemFree, PFN_cuMemFree_v3020)                                            \
  X(cuMemsetD8, PFN_cuMemsetD8_v3020)                                          \
  X(cuMemcpyHtoD, PFN_cuMemcpyHtoD_v3020)                                      \
  X(cuMemcpyDtoH, PFN_cuMemcpyDtoH_v3020)                                      \
  X(cuMemcpyHtoDAsync, PFN_cuMemcpyHtoDAsync_v3020)                            \
  X(cuMemcpyDtoHAsync, PFN_cuMemcpyDtoHAsync_v3020)                            \
  X(cuMemcpyDtoDAsync, PFN_cuMemcpyDtoDAsync_v3020)                            \
  X(cuMemHostRegister, PFN_cuMemHostRegister_v6050)                            \
  X(cuMemHostUnregister, PFN_cuMemHostUnregister_v4000)                        \
  X(cuModuleLoadData, PFN_cuModuleLoadData_v2000)                              \
  X(cuModuleUnload, PFN_cuModuleUnload_v2000)                                  \
  X(cuModuleGetFunction, PFN_cuModuleGetFunction_v2000)                        \
  X(cuLaunchKernel, PFN_cuLaunchKernel_v4000)                                  \
  X(cuStreamBeginCapture, PFN_cuStreamBeginCapture_v10010)                     \
  X(cuStreamEndCapture, PFN_cuStreamEndCapture_v10000)                         \
  X(cuGraphInstantiateWithFlags, PFN_cuGraphInstantiateWithFlags_v11040)       \
  X(cuGraphLaunch, PFN_cuGraphLaunch_v10000)                                   \
  X(cuGraphDestroy, PFN_cuGraphDestroy_v10000)                                 \
  X(cuGraphExecDestroy, PFN_cuGraphExecDestroy_v10000)                         \
  X(cuEventCreate, PFN_cuEventCreate_v2000)                                    \
  X(cuEventRecord, PFN_cuEventRecord_v2000)                                    \
  X(cuEventSynchronize, PFN_cuEventSynchronize_v2000)                          \
  X(cuEventQuery, PFN_cuEventQuery_v2000)                                      \
  X(cuEventDestroy, PFN_cuEventDestroy_v4000)                                  \
  X(cuEventElapsedTime, PFN_cuEventElapsedTime_v12080)

struct Driver {
#define TCC_CUDA_POINTER(name, type) type name = nullptr;
  TCC_CUDA_DRIVER_FUNCTIONS(TCC_CUDA_POINTER)
#undef TCC_CUDA_POINTER
  int version = 0; ///< cuDriverGetVersion, e.g. 13000
  int deviceCount = 0;
};

/// The driver table TCC_CUDA_DEVICE selects now: the emulated device's with
/// TCC_CUDA_DEVICE=emulated (emulator.h), else libcuda's, loaded and
/// initialized once per process. Throws Error(TCC_ERROR_UNSUPPORTED) whose
/// message starts with "no CUDA device: " and gives the reason (no
/// libcuda.so.1, cuInit failed, no device); a later call tries again. A
/// device chooses once: its Context takes the table, and everything made for
/// it (buffers, registrations, collectives) uses the Context's, so a session
/// never mixes the two tables whatever the variable says later.
const Driver &driver();

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string errorString(CUresult result);

/// Throws Error(TCC_ERROR_RUNTIME, "<what>: <call> failed: <error>") unless
/// RESULT is CUDA_SUCCESS.
void check(CUresult result, const char *call, const std::string &what);

/// Parses "cuda:sm_90" into 90; returns -1 for anything else.
int parseCudaArch(const char *device);

/// The device ordinal from TCC_CUDA_DEVICE (default 0; 0 for "emulated");
/// throws Error(TCC_ERROR_INVALID_ARGUMENT) when it is neither.
int deviceOrdinalFromEnv();

/// The PCI bus id of device ORDINAL ("0000:3b:00.0"), which names it to
/// NVML; throws Error as driver() does, or for an ordinal out of range.
std::string pciBusId(int ordinal);

/// The primary context of one device, current on the calling thread, and two
/// non-blocking streams on it: one for the runs (kernels, library calls and
/// their copies) and one for uploading the next inputs meanwhile.
class Context {
public:
  /// On device ORDINAL of DRIVER's; WHAT names the artifact in messages.
  Context(const Driver &driver, int ordinal, const std::string &what);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  /// Makes the context current on the calling thread (every API call may
  /// come from another application thread).
  void makeCurrent() const;
  /// The driver table the context was made with.
  const Driver &driver() const { return *driver_; }
  CUstream stream() const { return stream_; }
  /// The stream that uploads inputs while a run computes (InputStaging).
  CUstream copyStream() const { return copyStream_; }
  int ordinal() const { return ordinal_; }
  /// Compute capability as 10 * major + minor (90 for sm_90).
  int computeCapability() const { return cc_; }
  const std::string &name() const { return name_; }
  /// Waits for the stream; throws naming WHAT.
  void synchronize(const std::string &what) const;

private:
  const Driver *driver_;
  std::string what_;
  int ordinal_ = 0;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr, copyStream_ = nullptr;
  int cc_ = 0;
  std::string name_;
};

/// cuMemAlloc'ed device memory of CONTEXT's device, zero-filled, freed on
/// destruction (the context must be current).
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(const Context &context, size_t size, const std::string &what);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  CUdeviceptr ptr() const { return ptr_; }
  /// The driver table of the context it was allocated in.
  const Driver &driver() const { return *driver_; }
  uint8_t *data() const { return reinterpret_cast<uint8_t *>(ptr_); }
  size_t size() const { return size_; }

private:
  const Driver *driver_ = nullptr;
  CUdeviceptr ptr_ = 0;
  size_t size_ = 0;
};

/// Page-locks host memory the runtime already owns (the host mirrors), so
/// async copies from and to it are real DMA; unregistered on destruction.
class HostRegistration {
public:
  HostRegistration() = default;
  /// For copies to and from CONTEXT's device.
  HostRegistration(const Context &context, void *data, size_t size, const std::string &what);
  ~HostRegistration();
  HostRegistration(HostRegistration &&other) noexcept;
  HostRegistration &operator=(HostRegistration &&other) noexcept;
  HostRegistration(const HostRegistration &) = delete;
  HostRegistration &operator=(const HostRegistration &) = delete;

private:
  const Driver *driver_ = nullptr;
  void *data_ = nullptr;
};

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DRIVER_H
