//===- driver.cpp - the CUDA driver API, loaded with dlopen ----------------===//
//
// libcuda.so.1 is the driver's stable name (the unversioned libcuda.so is a
// link-time stub in the toolkit). Functions are resolved for the lower of the
// driver's version and the headers' CUDA_VERSION, so each pointer has the
// signature its typedef promises.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/driver.h"

#include "runtime/cuda/emulator.h"
#include "runtime/dist/communicator.h"

#include "runtime/error.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <mutex>

namespace tcc::rt::cuda {

namespace {

[[noreturn]] void noDevice(const std::string &reason) {
  fail(TCC_ERROR_UNSUPPORTED, "no CUDA device: " + reason);
}

} // namespace

const Driver &driver() {
  // Only the explicit setting selects the emulation, never a missing GPU.
  if (emulationSelected())
    return emulatedDriver();
  static std::mutex mutex;
  static Driver *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded)
    return *loaded;
  dlerror();
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    noDevice(std::string("libcuda.so.1 not found (is the NVIDIA driver installed?): ") +
             (why ? why : "dlopen failed"));
  }
  auto getProc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(handle, "cuGetProcAddress_v2"));
  if (!getProc)
    noDevice("libcuda.so.1 has no cuGetProcAddress_v2: the NVIDIA driver is older than CUDA 12");
  auto d = std::make_unique<Driver>();
  auto resolve = [&](const char *name, int version, void **out) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = getProc(name, out, version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (r != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || !*out)
      noDevice(std::string("the NVIDIA driver has no ") + name + " for CUDA " +
               std::to_string(version) + " (cuGetProcAddress result " + std::to_string(int(r)) +
               ", status " + std::to_string(int(found)) + ")");
  };
  resolve("cuDriverGetVersion", 2020, reinterpret_cast<void **>(&d->cuDriverGetVersion));
  if (d->cuDriverGetVersion(&d->version) != CUDA_SUCCESS)
    noDevice("cuDriverGetVersion failed");
  int version = std::min(d->version, CUDA_VERSION);
#define TCC_CUDA_RESOLVE(name, type) resolve(#name, version, reinterpret_cast<void **>(&d->name));
  TCC_CUDA_DRIVER_FUNCTIONS(TCC_CUDA_RESOLVE)
#undef TCC_CUDA_RESOLVE
  // The process-wide driver state; the handle stays open for the process.
  if (CUresult r = d->cuInit(0); r != CUDA_SUCCESS) {
    const char *name = nullptr, *text = nullptr;
    d->cuGetErrorName(r, &name);
    d->cuGetErrorString(r, &text);
    noDevice(std::string("cuInit failed: ") + (name ? name : "?") + " (" + (text ? text : "?") +
             ")");
  }
  if (d->cuDeviceGetCount(&d->deviceCount) != CUDA_SUCCESS || d->deviceCount <= 0)
    noDevice("the NVIDIA driver reports no device");
  loaded = d.release();
  return *loaded;
}

std::string errorString(CUresult result) {
  const char *name = nullptr, *text = nullptr;
  const Driver &d = driver();
  if (d.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    return "CUDA error " + std::to_string(int(result));
  d.cuGetErrorString(result, &text);
  return std::string(name) + " (" + (text ? text : "no description") + ")";
}

void check(CUresult result, const char *call, const std::string &what) {
  if (result != CUDA_SUCCESS)
    fail(result == CUDA_ERROR_OUT_OF_MEMORY ? TCC_ERROR_OUT_OF_MEMORY : TCC_ERROR_RUNTIME,
         what + ": " + call + " failed: " + errorString(result));
}

int parseCudaArch(const char *device) {
  static const char prefix[] = "cuda:sm_";
  if (!device || std::strncmp(device, prefix, sizeof prefix - 1) != 0)
    return -1;
  const char *digits = device + sizeof prefix - 1;
  size_t n = std::strlen(digits);
  if (n < 2 || n > 3 || !std::all_of(digits, digits + n, [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::atoi(digits);
}

int deviceOrdinalFromEnv() {
  const char *env = std::getenv("TCC_CUDA_DEVICE");
  if (!env || !*env) {
    // One rank of a data-parallel job per GPU: the rank among those on
    // this host (mpirun, srun) picks its device.
    int rank = localRankFromEnvironment(), count = driver().deviceCount;
    return rank >= 0 && count > 0 ? rank % count : 0;
  }
  if (std::strcmp(env, kEmulatedDeviceSetting) == 0)
    return 0; // the emulated device is the only one
  char *end = nullptr;
  long v = std::strtol(env, &end, 10);
  if (*end != '\0' || v < 0 || v > 1024)
    fail(TCC_ERROR_INVALID_ARGUMENT, std::string("TCC_CUDA_DEVICE='") + env +
                                         "' is neither a device ordinal nor '" +
                                         kEmulatedDeviceSetting + "'");
  return int(v);
}

std::string pciBusId(int ordinal) {
  const Driver &d = driver();
  if (ordinal >= d.deviceCount)
    fail(TCC_ERROR_INVALID_ARGUMENT, "CUDA device " + std::to_string(ordinal) + " does not exist");
  CUdevice device;
  check(d.cuDeviceGet(&device, ordinal), "cuDeviceGet", "the device monitor");
  char bus[64] = "";
  check(d.cuDeviceGetPCIBusId(bus, int(sizeof bus), device), "cuDeviceGetPCIBusId",
        "the device monitor");
  return bus;
}

Context::Context(const Driver &driver, int ordinal, const std::string &what)
    : driver_(&driver), what_(what), ordinal_(ordinal) {
  const Driver &d = driver;
  if (ordinal >= d.deviceCount)
    fail(TCC_ERROR_INVALID_ARGUMENT, what + ": TCC_CUDA_DEVICE=" + std::to_string(ordinal) +
                                         " but there are " + std::to_string(d.deviceCount) +
                                         " CUDA device(s)");
  check(d.cuDeviceGet(&device_, ordinal), "cuDeviceGet", what);
  int major = 0, minor = 0;
  check(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_),
        "cuDeviceGetAttribute(compute capability major)", what);
  check(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_),
        "cuDeviceGetAttribute(compute capability minor)", what);
  cc_ = major * 10 + minor;
  char name[256] = {0};
  check(d.cuDeviceGetName(name, sizeof name - 1, device_), "cuDeviceGetName", what);
  name_ = name;
  check(d.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain", what);
  makeCurrent();
  CUresult r = d.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING);
  if (r == CUDA_SUCCESS)
    r = d.cuStreamCreate(&copyStream_, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) {
    if (stream_)
      d.cuStreamDestroy(stream_);
    d.cuDevicePrimaryCtxRelease(device_);
    check(r, "cuStreamCreate", what);
  }
}

Context::~Context() {
  const Driver &d = *driver_;
  d.cuCtxSetCurrent(context_);
  for (CUstream s : {copyStream_, stream_})
    if (s) {
      d.cuStreamSynchronize(s);
      d.cuStreamDestroy(s);
    }
  d.cuDevicePrimaryCtxRelease(device_);
}

void Context::makeCurrent() const {
  check(driver_->cuCtxSetCurrent(context_), "cuCtxSetCurrent", what_);
}

void Context::synchronize(const std::string &what) const {
  check(driver_->cuStreamSynchronize(stream_), "cuStreamSynchronize", what);
}

DeviceBuffer::DeviceBuffer(const Context &context, size_t size, const std::string &what)
    : driver_(&context.driver()), size_(size) {
  const Driver &d = *driver_;
  // Never a null pointer, even for an empty region: entries form addresses.
  size_t bytes = std::max<size_t>(size, 256);
  check(d.cuMemAlloc(&ptr_, bytes), "cuMemAlloc", "allocating " + std::to_string(size) +
                                                      " bytes of device memory for the " + what);
  check(d.cuMemsetD8(ptr_, 0, bytes), "cuMemsetD8", "zeroing the " + what);
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_)
    driver_->cuMemFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : driver_(other.driver_), ptr_(other.ptr_), size_(other.size_) {
  other.ptr_ = 0;
  other.size_ = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    if (ptr_)
      driver_->cuMemFree(ptr_);
    driver_ = other.driver_;
    ptr_ = other.ptr_;
    size_ = other.size_;
    other.ptr_ = 0;
    other.size_ = 0;
  }
  return *this;
}

HostRegistration::HostRegistration(const Context &context, void *data, size_t size,
                                   const std::string &what)
    : driver_(&context.driver()) {
  if (!data || size == 0)
    return;
  check(driver_->cuMemHostRegister(data, size, 0), "cuMemHostRegister",
        "page-locking the host copy of the " + what);
  data_ = data;
}

HostRegistration::~HostRegistration() {
  if (data_)
    driver_->cuMemHostUnregister(data_);
}

HostRegistration::HostRegistration(HostRegistration &&other) noexcept
    : driver_(other.driver_), data_(other.data_) {
  other.data_ = nullptr;
}

HostRegistration &HostRegistration::operator=(HostRegistration &&other) noexcept {
  if (this != &other) {
    if (data_)
      driver_->cuMemHostUnregister(data_);
    driver_ = other.driver_;
    data_ = other.data_;
    other.data_ = nullptr;
  }
  return *this;
}

} // namespace tcc::rt::cuda
