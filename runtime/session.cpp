//===- session.cpp - the memory and parameters for running one artifact ---===//
//
// Every check happens before any byte moves, so a failing call leaves the
// session as it was. The regions are allocated in the constructor and never
// again: a run only calls the entry point.
//
//===----------------------------------------------------------------------===//

#include "runtime/session.h"

#include "runtime/checkpoint/safetensors.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/nccl.h"
#include "runtime/dtype.h"
#include "runtime/error.h"
#include "runtime/support/file_io.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>

namespace tcc::rt {

namespace {
/// x86-64's huge page, and the smallest buffer worth one.
constexpr size_t kHugePage = size_t(2) << 20;

/// Whether large buffers go on transparent huge pages: TCC_HUGE_PAGES is
/// unset, "on" or "1"; "off" or "0" keeps 4 KiB pages.
bool hugePages() {
  static const bool on = [] {
    const char *env = std::getenv("TCC_HUGE_PAGES");
    std::string choice = env ? env : "on";
    if (choice != "on" && choice != "1" && choice != "off" && choice != "0")
      fail(TCC_ERROR_INVALID_ARGUMENT,
           "TCC_HUGE_PAGES is '" + choice + "'; expected on, off, 1 or 0");
    return choice == "on" || choice == "1";
  }();
  return on;
}
} // namespace

AlignedBuffer::AlignedBuffer(size_t size, size_t alignment, const std::string &what) {
  // A buffer of 2 MiB or more (the arena, the state) starts on a huge page
  // and asks the kernel for transparent huge pages before it is touched:
  // the training step walks tens of MiB per step, and with 4 KiB pages the
  // TLB misses cost gpt4's bf16 step 7% and zoo resnet18's 10% (Xeon with
  // AMX, 1 thread, 2026-12-07; docs/memory.md). Where THP is off, or no
  // huge page is free, the kernel gives 4 KiB pages as before.
  bool huge = size >= kHugePage && hugePages();
  if (huge)
    alignment = std::max(alignment, kHugePage);
  // Never a null pointer, even for an empty region: entry points may form
  // addresses from it.
  size_t rounded = std::max(alignment, (size + alignment - 1) / alignment * alignment);
  void *p = nullptr;
  if (rounded < size || posix_memalign(&p, alignment, rounded) != 0)
    fail(TCC_ERROR_OUT_OF_MEMORY, "cannot allocate the " + std::to_string(size) + "-byte " + what);
  if (huge)
    (void)madvise(p, rounded, MADV_HUGEPAGE); // advice: failure leaves 4 KiB pages
  std::memset(p, 0, rounded);
  data_ = static_cast<uint8_t *>(p);
  size_ = size;
}

AlignedBuffer::AlignedBuffer(AlignedBuffer &&other) noexcept
    : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

AlignedBuffer &AlignedBuffer::operator=(AlignedBuffer &&other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

Session::Use::Use(Session &session) : session_(session) {
  if (session_.busy_.exchange(true, std::memory_order_acquire))
    fail(TCC_ERROR_INVALID_STATE,
         session_.artifact_->path() + ": the session is already in use by another thread");
}

Session::Use::~Use() { session_.busy_.store(false, std::memory_order_release); }

/// Declared in this order so that they go in the reverse one: the page-locked
/// mirrors and device buffers before the device (its context) is released.
struct Session::DeviceRegions {
  std::unique_ptr<cuda::Device> device;
  cuda::DeviceBuffer arena; ///< the planned arena, then the library workspace
  cuda::DeviceBuffer state;
  cuda::HostRegistration arenaMirror, stateMirror;
  std::unique_ptr<cuda::InputStaging> inputs;
  /// Data parallel over several ranks: the collectives on NCCL (before the
  /// device in destruction order).
  std::unique_ptr<cuda::NcclCollectives> nccl;
  /// Recorded on the run's stream after a run's last copy (its outputs).
  CUevent runDone = nullptr;
  ~DeviceRegions() {
    if (!device)
      return;
    // A run may still be writing the regions and the mirrors.
    device->context().makeCurrent();
    device->driver().cuStreamSynchronize(device->context().stream());
    if (runDone)
      device->driver().cuEventDestroy(runDone);
  }
};

Session::~Session() = default;

Session::Session(std::shared_ptr<Artifact> artifact, const tcc_session_options &options)
    : artifact_(std::move(artifact)) {
  const tcc_abi_descriptor &d = artifact_->descriptor();
  if (options.num_threads < 0)
    fail(TCC_ERROR_INVALID_ARGUMENT,
         "num_threads is " + std::to_string(options.num_threads) + "; use 0 for the default");
  int cpus = availableCpus();
  numThreads_ = options.num_threads == 0 ? cpus : std::min(options.num_threads, cpus);
  // oneDNN fixes a primitive's thread count when it creates it.
  ParallelThreadsScope threads(numThreads_);

  size_t alignment = size_t(artifact_->alignment());
  const char *env = std::getenv("TCC_POISON_ARENA");
  poisoned_ = options.poison_arena != 0 || (env && std::strcmp(env, "1") == 0);
  if (isDeviceArtifact(d)) {
    // The regions live on the device; arena_ and state_ become page-locked
    // host mirrors that inputs, outputs and parameters pass through.
    const std::string &path = artifact_->path();
    device_ = std::make_unique<DeviceRegions>();
    device_->device = std::make_unique<cuda::Device>(d, path);
    cuda::Device &dev = *device_->device;
    size_t workspaceOffset = (size_t(d.arena_size) + 255) / 256 * 256;
    device_->arena = cuda::DeviceBuffer(dev.context(), workspaceOffset + dev.workspaceSize(),
                                        "arena of " + path);
    dev.setWorkspace(device_->arena.ptr() + workspaceOffset);
    device_->state = cuda::DeviceBuffer(dev.context(), size_t(d.state_size), "state of " + path);
    arena_ = AlignedBuffer(size_t(d.arena_size), alignment, "host arena of " + path);
    state_ = AlignedBuffer(size_t(d.state_size), alignment, "host state of " + path);
    device_->arenaMirror =
        cuda::HostRegistration(dev.context(), arena_.data(), arena_.size(), "arena of " + path);
    device_->stateMirror =
        cuda::HostRegistration(dev.context(), state_.data(), state_.size(), "state of " + path);
    device_->inputs = std::make_unique<cuda::InputStaging>(d, dev.context(), path);
    cuda::check(device_->device->driver().cuEventCreate(&device_->runDone, CU_EVENT_DISABLE_TIMING),
                "cuEventCreate", path);
    if (poisoned_) {
      std::memset(arena_.data(), 0xFF, arena_.size());
      cuda::check(device_->device->driver().cuMemsetD8(device_->arena.ptr(), 0xFF,
                                                       device_->arena.size()),
                  "cuMemsetD8", path + ": poisoning the device arena");
    }
    runtime_.library_call = &cuda::Device::libraryCall;
    runtime_.library_context = &dev;
    runtime_.launch_kernel = &cuda::Device::launchKernel;
    runtime_.device_context = &dev;
  } else {
    allocateHostRegions(alignment);
  }
  runtime_.struct_size = sizeof(tcc_abi_runtime);
  runtime_.parallel_for = &Session::parallelFor;
  runtime_.pool = &numThreads_;
  runtime_.profile_kernel = &Session::profileKernel;
  runtime_.profile_context = this;
  if (int32_t n = numCollectives(d); n > 0)
    collectives_ = std::make_unique<Collectives>(d.collectives, n, artifact_->path());
  if (isZeroArtifact(*artifact_)) {
    if (device_)
      fail(TCC_ERROR_UNSUPPORTED, artifact_->path() + ": ZeRO-1 (--zero=1) runs on the CPU only");
    zero_ = std::make_unique<ZeroOptimizer>(*artifact_);
  }
  runtime_.collective = &Collectives::run;
  runtime_.collective_context = collectives_.get();
  if (device_ && device_->device->emulated() && collectives_) {
    // The emulated device runs the CPU's collectives on its host pointers,
    // in stream order, so that a captured graph holds them as NCCL's would.
    device_->device->useHostCollectives(collectives_.get(), d.collectives, numCollectives(d));
    runtime_.collective = &cuda::Device::collective;
    runtime_.collective_context = device_->device.get();
  }

  size_t n = size_t(d.num_tensors);
  inputSet_.assign(n, false);
  inputSamples_.assign(n, 0);
  outputReadable_.assign(n, false);
  outputClobberedBy_.assign(n, -1);
  findInputDefaults();
}

void Session::profileKernel(void *context, int32_t index, void *const *) {
  auto *self = static_cast<Session *>(context);
  if (self->kernelObserver_)
    self->kernelObserver_(self->kernelObserverUser_, index >> 1, index & 1);
}

void Session::findInputDefaults() {
  const tcc_abi_descriptor &d = artifact_->descriptor();
  // DEFAULT_PREFIX + NAME: the compile-time value of a hyperparameter.
  auto metadataNumber = [&](const std::string &name) {
    const char *value = artifact_->metadata((TCC_METADATA_DEFAULT_PREFIX + name).c_str());
    if (!value)
      return double(NAN);
    char *end = nullptr;
    double v = std::strtod(value, &end);
    return *end ? double(NAN) : v;
  };
  inputDefault_.assign(size_t(d.num_tensors), NAN);
  for (int32_t i = 0; i < d.num_tensors; ++i) {
    const tcc_abi_tensor &t = artifact_->tensor(i);
    if (t.role != TCC_ROLE_INPUT || t.dtype != TCC_DTYPE_F32 || t.rank != 0)
      continue;
    std::string name = t.name;
    // Adam's 1 - beta: the difference in double, as the trainer writes it.
    if (name == TCC_INPUT_ONE_MINUS_BETA1 || name == TCC_INPUT_ONE_MINUS_BETA2)
      inputDefault_[size_t(i)] =
          float(1.0 - metadataNumber(name == TCC_INPUT_ONE_MINUS_BETA1 ? TCC_INPUT_BETA1
                                                                       : TCC_INPUT_BETA2));
    else
      inputDefault_[size_t(i)] = float(metadataNumber(name));
  }
}

void Session::allocateHostRegions(size_t alignment) {
  const tcc_abi_descriptor &d = artifact_->descriptor();
  // Library calls first: their scratchpad extends the arena.
  size_t arenaSize = size_t(d.arena_size), scratchOffset = 0;
  filterSetOf_.assign(size_t(d.num_tensors), -1);
  if (int32_t calls = numLibraryCalls(d); calls > 0) {
    std::vector<std::vector<int32_t>> filterTensors;
    std::vector<std::vector<int32_t>> filterSets = readFilterSets(&filterTensors);
    libraryCalls_ = std::make_unique<LibraryCalls>(
        d.library_calls, calls, artifact_->path(), MatmulLibrary::Auto, SixteenBitCalls::Auto,
        LibraryMath::RefuseTf32, filterSets);
    for (size_t set = 0; set < filterSets.size(); ++set) {
      if (!libraryCalls_->keepsFilterLayout(set))
        continue;
      for (int32_t index : filterTensors[set]) {
        const tcc_abi_tensor &t = d.tensors[index];
        int64_t elements = 1;
        for (int32_t i = 0; i < t.rank; ++i)
          elements *= t.shape[i];
        if (elements != libraryCalls_->filterElements(set))
          fail(TCC_ERROR_FORMAT, artifact_->path() + ": filter layout set " +
                                     std::to_string(set) + ": tensor '" + t.name +
                                     "' is not of its filter's size");
        filterSetOf_[size_t(index)] = int32_t(set);
      }
    }
    scratchOffset = (arenaSize + alignment - 1) / alignment * alignment;
    arenaSize = scratchOffset + libraryCalls_->scratchpadSize();
  }
  arena_ = AlignedBuffer(arenaSize, alignment, "arena of " + artifact_->path());
  if (libraryCalls_)
    libraryCalls_->setScratchpad(arena_.data() + scratchOffset);
  state_ = AlignedBuffer(size_t(d.state_size), alignment, "state of " + artifact_->path());
  if (poisoned_)
    std::memset(arena_.data(), 0xFF, arena_.size());
  runtime_.library_call = &LibraryCalls::run;
  runtime_.library_context = libraryCalls_.get();
}

std::vector<std::vector<int32_t>> Session::readFilterSets(
    std::vector<std::vector<int32_t>> *filterTensors) const {
  std::vector<std::vector<int32_t>> sets;
  filterTensors->clear();
  const tcc_abi_descriptor &d = artifact_->descriptor();
  // Ranks exchange gradients and state in the order of their bytes: a
  // data-parallel artifact stays plain (its compiler marks no sets).
  if (numCollectives(d) > 0 || isZeroArtifact(*artifact_))
    return sets;
  const std::string &path = artifact_->path();
  std::vector<bool> member(size_t(d.num_tensors), false);
  for (size_t k = 0;; ++k) {
    std::string key = TCC_METADATA_FILTER_LAYOUT_PREFIX + std::to_string(k);
    const char *calls = artifact_->metadata((key + ".calls").c_str());
    const char *tensors = artifact_->metadata((key + ".tensors").c_str());
    if (!calls || !tensors)
      break;
    std::string where = path + ": metadata " + key;
    std::vector<int32_t> rows;
    std::stringstream callList(calls);
    for (std::string item; std::getline(callList, item, ',');) {
      char *end = nullptr;
      long row = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || row < 0 || row > INT32_MAX)
        fail(TCC_ERROR_FORMAT, where + ".calls: '" + item + "' is not a call's row");
      rows.push_back(int32_t(row));
    }
    std::vector<int32_t> members;
    std::stringstream tensorList(tensors);
    for (std::string name; std::getline(tensorList, name, ';');) {
      int32_t index = artifact_->findTensor(name, TCC_ROLE_PARAM);
      if (index < 0)
        index = artifact_->findTensor(name, TCC_ROLE_STATE);
      if (index < 0)
        fail(TCC_ERROR_FORMAT, where + ".tensors: '" + name + "' is no parameter or state tensor");
      if (member[size_t(index)])
        fail(TCC_ERROR_FORMAT, where + ".tensors: '" + name + "' is in another set too");
      member[size_t(index)] = true;
      int32_t dtype = d.tensors[index].dtype;
      if (dtype != TCC_DTYPE_F32 && dtype != TCC_DTYPE_BF16 && dtype != TCC_DTYPE_F16)
        fail(TCC_ERROR_FORMAT, where + ".tensors: '" + name + "' is " + dtypeName(dtype) +
                                   ", not f32, bf16 or f16");
      members.push_back(index);
    }
    if (rows.empty() || members.empty())
      fail(TCC_ERROR_FORMAT, where + ": a set without calls or tensors");
    sets.push_back(std::move(rows));
    filterTensors->push_back(std::move(members));
  }
  return sets;
}

void Session::writeState(int32_t index, const void *from) {
  const tcc_abi_tensor &t = artifact_->tensor(index);
  uint8_t *to = state_.data() + t.offset;
  if (int32_t set = filterSetOf_.empty() ? -1 : filterSetOf_[size_t(index)]; set >= 0) {
    ParallelThreadsScope threads(numThreads_);
    libraryCalls_->convertFilter(size_t(set), t.dtype, from, to, true);
  } else {
    std::memcpy(to, from, size_t(t.size_bytes));
  }
}

void Session::readState(int32_t index, void *to) {
  const tcc_abi_tensor &t = artifact_->tensor(index);
  const uint8_t *from = state_.data() + t.offset;
  if (int32_t set = filterSetOf_.empty() ? -1 : filterSetOf_[size_t(index)]; set >= 0) {
    ParallelThreadsScope threads(numThreads_);
    libraryCalls_->convertFilter(size_t(set), t.dtype, from, to, false);
  } else {
    std::memcpy(to, from, size_t(t.size_bytes));
  }
}

void Session::parallelFor(void *pool, int64_t begin, int64_t end,
                          void (*body)(void *context, int64_t i), void *context) {
  tcc::rt::parallelFor(begin, end, *static_cast<int *>(pool), body, context);
}

void Session::loadDefaultParams() {
  std::string path = artifact_->defaultParamsPath();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
    int32_t params = artifact_->countTensors(TCC_ROLE_PARAM);
    if (params == 0)
      return;
    fail(TCC_ERROR_NOT_FOUND, artifact_->path() + " has " + std::to_string(params) +
                                  " parameter(s) but there is no parameters file " + path +
                                  " beside it (set skip_default_params to start from zeros)");
  }
  loadParams(path);
}

void Session::loadParams(const std::string &path) { loadTensors(path, false); }

void Session::loadCheckpoint(const std::string &path) { loadTensors(path, true); }

void Session::loadTensors(const std::string &path, bool checkpoint) {
  // Read at offsets, never mapped: a file truncated while it loads is an
  // error, not a SIGBUS.
  std::string message;
  SafetensorsReader reader;
  if (!reader.openFile(path, &message))
    fail(TCC_ERROR_IO, message);
  if (!reader.readHeader(&message))
    fail(TCC_ERROR_FORMAT, message);
  std::vector<std::string> zeroNames = zero_ && checkpoint ? zero_->stateNames()
                                                           : std::vector<std::string>();
  const char *kind = checkpoint ? "checkpoint" : "parameters file";
  auto kindIt = reader.metadata().find("tcc.kind");
  bool fileIsCheckpoint = kindIt != reader.metadata().end() && kindIt->second == "checkpoint";
  // A checkpoint of this very compilation holds exactly its state. One of
  // another compilation of the model (another batch, precision, --profile)
  // is taken by tensor name: every parameter and optimizer state tensor of
  // this artifact must be there, alike; the 16-bit weight copies are
  // recomputed from the parameters and fp16 loss scaling starts afresh
  // when the checkpoint has none. Anything else is a real mismatch.
  bool sameCompilation = false;
  if (checkpoint) {
    auto it = reader.metadata().find("tcc.fingerprint");
    if (!fileIsCheckpoint || it == reader.metadata().end())
      fail(TCC_ERROR_INVALID_ARGUMENT,
           path + ": not a checkpoint of tcc (no tcc.kind 'checkpoint' and tcc.fingerprint; "
                  "a parameters file loads with --params)");
    sameCompilation = it->second == artifact_->fingerprint() || it->second == stateFingerprint();
  }
  // Tensors that a checkpoint of another compilation may lack or hold
  // besides this artifact's: derived or restarted state.
  // A 16-bit copy is PARAM.bf16, or PARAM[window].bf16 for the taps of a
  // trimmed filter (passes/training/Precision.cpp).
  auto optional = [&](const std::string &name) {
    if (name == TCC_STATE_LOSS_SCALE || name == TCC_STATE_GROWTH_TRACKER)
      return true;
    size_t dot = name.rfind('.');
    if (dot == std::string::npos || (name.compare(dot, std::string::npos, ".bf16") != 0 &&
                                     name.compare(dot, std::string::npos, ".fp16") != 0))
      return false;
    std::string param = name.substr(0, dot);
    if (!param.empty() && param.back() == ']' && param.find('[') != std::string::npos)
      param.erase(param.rfind('['));
    return artifact_->findTensor(param, TCC_ROLE_PARAM) >= 0;
  };

  // Check everything, then copy: a failing load changes nothing.
  const tcc_abi_descriptor &d = artifact_->descriptor();
  std::string missing;
  std::vector<std::pair<const tcc_abi_tensor *, const SafetensorsTensor *>> copies;
  for (int32_t i = 0; i < d.num_tensors; ++i) {
    const tcc_abi_tensor &t = d.tensors[i];
    if (!inFiles(t, checkpoint))
      continue;
    const SafetensorsTensor *found = reader.find(t.name);
    if (!found && checkpoint && !sameCompilation && optional(t.name))
      continue;
    if (!found) {
      missing += (missing.empty() ? "'" : ", '") + std::string(t.name) + "'";
      continue;
    }
    std::string where = path + ": " + roleName(t.role) + " '" + t.name + "' of " + artifact_->path();
    if (found->dtype != t.dtype)
      fail(TCC_ERROR_DTYPE,
           where + " is " + dtypeName(t.dtype) + ", the file holds " + dtypeName(found->dtype));
    if (found->shape != std::vector<int64_t>(t.shape, t.shape + t.rank))
      fail(TCC_ERROR_SHAPE, where + " has shape " + shapeString(t.shape, size_t(t.rank)) +
                                ", the file holds " + shapeString(found->shape));
    copies.emplace_back(&t, found);
  }
  // ZeRO-1: each optimizer state tensor is shaped like its parameter.
  std::vector<const SafetensorsTensor *> zeroCopies;
  for (const std::string &name : zeroNames) {
    const SafetensorsTensor *found = reader.find(name);
    if (!found) {
      missing += (missing.empty() ? "'" : ", '") + name + "'";
      continue;
    }
    const tcc_abi_tensor &param =
        artifact_->tensor(artifact_->findTensor(name.substr(0, name.rfind('.')), TCC_ROLE_PARAM));
    std::string where = path + ": optimizer state '" + name + "' of " + artifact_->path();
    if (found->dtype != TCC_DTYPE_F32)
      fail(TCC_ERROR_DTYPE, where + " is f32, the file holds " + dtypeName(found->dtype));
    if (found->shape != std::vector<int64_t>(param.shape, param.shape + param.rank))
      fail(TCC_ERROR_SHAPE, where + " has shape " + shapeString(param.shape, size_t(param.rank)) +
                                ", the file holds " + shapeString(found->shape));
    zeroCopies.push_back(found);
  }
  if (!missing.empty())
    fail(TCC_ERROR_NOT_FOUND,
         path + ": missing " + (checkpoint ? "tensor(s) " : "parameter(s) ") + missing + " of " +
             artifact_->path() +
             (checkpoint && !sameCompilation
                  ? " (the checkpoint is of another compilation: another optimizer or model?)"
                  : ""));
  for (const SafetensorsTensor &t : reader.tensors()) {
    if (artifact_->findTensor(t.name, TCC_ROLE_PARAM) >= 0 ||
        std::find(zeroNames.begin(), zeroNames.end(), t.name) != zeroNames.end())
      continue;
    // --params from a checkpoint takes its parameters (running statistics
    // are parameters too) and leaves the optimizer state.
    if (!checkpoint && fileIsCheckpoint)
      continue;
    if (checkpoint && (artifact_->findTensor(t.name, TCC_ROLE_STATE) >= 0 ||
                       (!sameCompilation && optional(t.name))))
      continue;
    fail(TCC_ERROR_NOT_FOUND, path + ": tensor '" + t.name + "' is not a " +
                                  (checkpoint ? "parameter or state tensor" : "parameter") +
                                  " of " + artifact_->path() + " (is this a " + kind +
                                  (checkpoint ? " of this model, with its optimizer?)" : "?)"));
  }
  // A pending run still updates the device state; the host mirror changes
  // below only after it (downloadState may still bring its result back).
  finishRun();
  // One tensor at a time through a buffer of its size. A file that no
  // longer holds its bytes (truncated after its header was read) fails
  // here, with the state partly loaded: the message says so.
  std::vector<uint8_t> bytes;
  auto read = [&](const SafetensorsTensor &source) {
    bytes.resize(source.size);
    if (!reader.readTensor(source, bytes.data(), &message)) {
      derivedStale_ = true;
      fail(TCC_ERROR_IO, message + "; the tensors before it are loaded, the rest are not: load "
                                   "the file again once it is whole");
    }
    return bytes.data();
  };
  for (const auto &[tensor, source] : copies)
    writeState(int32_t(tensor - d.tensors), read(*source));
  for (const SafetensorsTensor *source : zeroCopies)
    zero_->loadState(source->name, read(*source));
  derivedStale_ = true;
  if (device_) {
    // Upload what was loaded; the rest of the mirror may be stale.
    for (const auto &[tensor, source] : copies)
      uploadState(size_t(tensor->offset), source->size,
                  path + ": uploading " + roleName(tensor->role) + " '" + tensor->name + "'");
  }
}

void Session::uploadState(size_t offset, size_t size, const std::string &what) {
  device_->device->context().makeCurrent();
  cuda::check(device_->device->driver().cuMemcpyHtoD(device_->state.ptr() + CUdeviceptr(offset),
                                          state_.data() + offset, size),
              "cuMemcpyHtoD", what);
}

void Session::finishRun() {
  if (!runPending_)
    return;
  runPending_ = false;
  device_->device->context().makeCurrent();
  if (device_->nccl) {
    // A run that waits for other ranks waits with the communicator's
    // deadline; a hang ends in an error, not a wait forever.
    try {
      device_->nccl->waitForRun(device_->runDone, pendingRun_);
    } catch (const Error &) {
      std::fill(outputReadable_.begin(), outputReadable_.end(), false);
      lastEntry_.clear();
      throw;
    }
    return;
  }
  CUresult r = device_->device->driver().cuEventSynchronize(device_->runDone);
  if (r != CUDA_SUCCESS) {
    // Kernel faults surface here: nothing the run computed is readable.
    std::fill(outputReadable_.begin(), outputReadable_.end(), false);
    lastEntry_.clear();
    cuda::check(r, "cuEventSynchronize", pendingRun_);
  }
}

void Session::downloadState() {
  if (!device_)
    return;
  finishRun();
  if (!hostStateStale_ || state_.size() == 0)
    return;
  device_->device->context().makeCurrent();
  cuda::check(device_->device->driver().cuMemcpyDtoH(state_.data(), device_->state.ptr(),
                                                     state_.size()),
              "cuMemcpyDtoH", artifact_->path() + ": downloading the state (parameters)");
  hostStateStale_ = false;
}

void Session::saveParams(const std::string &path) { saveTensors(path, false, {}); }

void Session::saveCheckpoint(const std::string &path,
                             const std::map<std::string, std::string> &metadata) {
  saveTensors(path, true, metadata);
}

void Session::saveTensors(const std::string &path, bool checkpoint,
                          const std::map<std::string, std::string> &extra) {
  // A checkpoint holds the 16-bit copies too: current ones (a ZeRO-1 update
  // leaves them to init_state, which runs before the next entry otherwise).
  if (checkpoint)
    refreshDerivedState();
  downloadState();
  const tcc_abi_descriptor &d = artifact_->descriptor();
  std::vector<SafetensorsTensor> tensors;
  // Tensors kept in a library's layout are written from plain copies.
  std::deque<std::vector<uint8_t>> plainCopies;
  for (int32_t i = 0; i < d.num_tensors; ++i) {
    const tcc_abi_tensor &t = d.tensors[i];
    if (!inFiles(t, checkpoint))
      continue;
    const uint8_t *bytes = state_.data() + t.offset;
    if (!filterSetOf_.empty() && filterSetOf_[size_t(i)] >= 0) {
      plainCopies.emplace_back(size_t(t.size_bytes));
      readState(i, plainCopies.back().data());
      bytes = plainCopies.back().data();
    }
    tensors.push_back({t.name, tcc_dtype(t.dtype), std::vector<int64_t>(t.shape, t.shape + t.rank),
                       bytes, size_t(t.size_bytes)});
  }
  if (zero_ && checkpoint)
    for (SafetensorsTensor &t : zero_->checkpointTensors())
      tensors.push_back(std::move(t));
  SafetensorsMetadata metadata(extra.begin(), extra.end());
  metadata["tcc.fingerprint"] = checkpoint ? stateFingerprint() : artifact_->fingerprint();
  metadata["tcc.producer"] = artifact_->producer();
  metadata["tcc.kind"] = checkpoint ? "checkpoint" : "parameters";
  std::string message;
  if (!writeSafetensors(path, tensors, metadata, &message))
    fail(TCC_ERROR_IO, message);
}

namespace {

/// The checks of data handed in for tensor T (WHERE names it): a valid rank
/// and shape, T's dtype, shape and byte size, data unless empty.
void checkTensorData(const tcc_abi_tensor &t, const std::string &where, int32_t dtype,
                     int32_t rank, const int64_t *shape, const void *data, size_t size) {
  if (rank < 0 || (rank > 0 && !shape))
    fail(TCC_ERROR_INVALID_ARGUMENT,
         where + ": invalid rank " + std::to_string(rank) + " or no shape");
  if (dtype != t.dtype)
    fail(TCC_ERROR_DTYPE, where + " is " + dtypeName(t.dtype) + ", got " + dtypeName(dtype));
  // SHAPE is read only once RANK is known to be T's: with another rank the
  // caller's array may be shorter than RANK says (rank 1000000 was a crash).
  if (rank != t.rank)
    fail(TCC_ERROR_SHAPE, where + " has shape " + shapeString(t.shape, size_t(t.rank)) +
                              " (rank " + std::to_string(t.rank) + "), got rank " +
                              std::to_string(rank));
  if (!std::equal(shape, shape + rank, t.shape))
    fail(TCC_ERROR_SHAPE, where + " has shape " + shapeString(t.shape, size_t(t.rank)) + ", got " +
                              shapeString(shape, size_t(rank)));
  if (size != size_t(t.size_bytes))
    fail(TCC_ERROR_INVALID_ARGUMENT,
         where + " has " + std::to_string(t.size_bytes) + " bytes, got " + std::to_string(size));
  if (size > 0 && !data)
    fail(TCC_ERROR_INVALID_ARGUMENT, where + ": no data");
}

} // namespace

void Session::setInput(const char *name, int32_t dtype, int32_t rank, const int64_t *shape,
                       const void *data, size_t size) {
  int32_t index = artifact_->findTensor(name, TCC_ROLE_INPUT);
  if (index < 0)
    fail(TCC_ERROR_NOT_FOUND, artifact_->path() + " has no input '" + name + "'; its inputs are " +
                                  artifact_->listTensors(TCC_ROLE_INPUT));
  const tcc_abi_tensor &t = artifact_->tensor(index);
  std::string where = "input '" + std::string(name) + "' of " + artifact_->path();
  if (std::strcmp(name, TCC_INPUT_VALID) == 0)
    fail(TCC_ERROR_INVALID_ARGUMENT,
         where + " is written by the runtime: the number of samples the other inputs hold");
  const int64_t batch = artifact_->batch(), rows = artifact_->batchRows(index);
  if (rows > 0 && rank == t.rank && shape && shape[0] != t.shape[0]) {
    // A partial batch: the first n samples, the rest filled with copies of
    // the last one (real values, so that no padded row computes NaN).
    int64_t samples = shape[0] / rows;
    if (shape[0] % rows != 0 || samples < 1 || samples > batch)
      fail(TCC_ERROR_SHAPE, where + " takes 1 to " + std::to_string(batch) + " samples of " +
                                std::to_string(rows) + " row(s) each (shape " +
                                shapeString(t.shape, size_t(t.rank)) + " at the compiled batch), got " +
                                shapeString(shape, size_t(rank)));
    std::vector<int64_t> full(shape, shape + rank);
    full[0] = t.shape[0];
    checkTensorData(t, where, dtype, rank, full.data(), data, size_t(t.size_bytes));
    size_t sampleBytes = size_t(t.size_bytes / batch);
    if (size != sampleBytes * size_t(samples))
      fail(TCC_ERROR_INVALID_ARGUMENT, where + ": " + std::to_string(samples) + " sample(s) are " +
                                           std::to_string(sampleBytes * size_t(samples)) +
                                           " bytes, got " + std::to_string(size));
    checkLabels(index, data, size, where);
    std::vector<uint8_t> padded(size_t(t.size_bytes));
    std::memcpy(padded.data(), data, size);
    for (int64_t k = samples; k < batch; ++k)
      std::memcpy(padded.data() + size_t(k) * sampleBytes,
                  padded.data() + size_t(samples - 1) * sampleBytes, sampleBytes);
    writeInput(index, padded.data(), padded.size(), where);
    inputSamples_[size_t(index)] = samples;
    return;
  }
  checkTensorData(t, where, dtype, rank, shape, data, size);
  checkLabels(index, data, size, where);
  writeInput(index, data, size, where);
  inputSamples_[size_t(index)] = batch;
}

void Session::checkLabels(int32_t index, const void *data, size_t size,
                          const std::string &where) const {
  // A label that names no class would add nothing to the loss but count in
  // its mean, and the update would be applied: refused, as PyTorch does.
  const Artifact::Labels &labels = artifact_->labels();
  if (index != labels.index)
    return;
  const auto *y = static_cast<const int64_t *>(data);
  for (size_t i = 0; i < size / sizeof(int64_t); ++i) {
    int64_t v;
    std::memcpy(&v, y + i, sizeof v); // DATA may be unaligned
    if (!labels.accepts(v))
      fail(TCC_ERROR_INVALID_ARGUMENT,
           where + ": label " + std::to_string(v) + " at position " + std::to_string(i) +
               " is not a class of the model's " + std::to_string(labels.classes) +
               " outputs [0, " + std::to_string(labels.classes) + ")" +
               (labels.hasIgnore ? " nor the ignored label " + std::to_string(labels.ignoreIndex)
                                 : std::string()));
  }
}

void Session::writeInput(int32_t index, const void *data, size_t size, const std::string &where) {
  const tcc_abi_tensor &t = artifact_->tensor(index);
  inputSet_[size_t(index)] = true;
  if (device_) {
    // Staged apart from the arena and its host mirror, uploading while a
    // pending run computes: the outputs stay readable.
    device_->device->context().makeCurrent();
    device_->inputs->set(index, data, size, where);
    return;
  }
  if (size > 0) // data may be NULL for an empty tensor
    std::memcpy(arena_.data() + t.offset, data, size);
  // An output computed in place over this input's slot is gone now.
  const tcc_abi_descriptor &d = artifact_->descriptor();
  for (int32_t i = 0; i < d.num_tensors; ++i) {
    const tcc_abi_tensor &o = d.tensors[i];
    if (o.role == TCC_ROLE_OUTPUT && outputReadable_[size_t(i)] && o.size_bytes > 0 &&
        t.size_bytes > 0 && o.offset < t.offset + t.size_bytes &&
        t.offset < o.offset + o.size_bytes) {
      outputReadable_[size_t(i)] = false;
      outputClobberedBy_[size_t(i)] = index;
    }
  }
}

int32_t Session::findParam(const char *name) const {
  int32_t index = artifact_->findTensor(name, TCC_ROLE_PARAM);
  if (index < 0)
    fail(TCC_ERROR_NOT_FOUND, artifact_->path() + " has no parameter '" + name +
                                  "'; its parameters are " + artifact_->listTensors(TCC_ROLE_PARAM));
  return index;
}

void Session::setParam(const char *name, int32_t dtype, int32_t rank, const int64_t *shape,
                       const void *data, size_t size) {
  int32_t index = findParam(name);
  const tcc_abi_tensor &t = artifact_->tensor(index);
  std::string where = "parameter '" + std::string(name) + "' of " + artifact_->path();
  checkTensorData(t, where, dtype, rank, shape, data, size);
  if (size == 0)
    return;
  // The host mirror first: when it is current, it stays current; when a run
  // left it stale, the next download brings back these bytes from the device.
  // A pending run must finish first: it may still update the parameter.
  if (device_)
    finishRun();
  writeState(index, data);
  derivedStale_ = true;
  if (device_) // synchronous from page-locked memory: the next run sees it
    uploadState(size_t(t.offset), size, where + ": uploading it");
}

void Session::getParam(const char *name, void *dst, size_t size) {
  int32_t index = findParam(name);
  const tcc_abi_tensor &t = artifact_->tensor(index);
  std::string where = "parameter '" + std::string(name) + "' of " + artifact_->path();
  if (size != size_t(t.size_bytes))
    fail(TCC_ERROR_INVALID_ARGUMENT, where + " has " + std::to_string(t.size_bytes) +
                                         " bytes, the destination " + std::to_string(size));
  if (size > 0 && !dst)
    fail(TCC_ERROR_INVALID_ARGUMENT, where + ": the destination is NULL");
  if (size == 0)
    return;
  downloadState(); // the device's latest values, when a run changed them
  readState(index, dst);
}

void Session::run(const char *entryName) {
  const tcc_abi_entry *entry = artifact_->findEntry(entryName);
  if (!entry)
    fail(TCC_ERROR_NOT_FOUND, artifact_->path() + " has no entry point '" + entryName +
                                  "'; it has " + artifact_->listEntries());
  std::string unset;
  for (int32_t k = 0; k < entry->num_tensors; ++k) {
    int32_t i = entry->tensor_indices[k];
    const tcc_abi_tensor &t = artifact_->tensor(i);
    if (t.role != TCC_ROLE_INPUT || inputSet_[size_t(i)] ||
        std::strcmp(t.name, TCC_INPUT_VALID) == 0)
      continue;
    // A hyperparameter the caller left alone runs at its compile-time value.
    if (float v = inputDefault_[size_t(i)]; !std::isnan(v))
      setInput(t.name, TCC_DTYPE_F32, 0, nullptr, &v, sizeof v);
    else
      unset += (unset.empty() ? "'" : ", '") + std::string(t.name) + "'";
  }
  if (!unset.empty())
    fail(TCC_ERROR_INVALID_STATE, artifact_->path() + ": entry '" + entryName +
                                      "' needs input(s) not set since the last run: " + unset);
  int64_t samples = samplesOf(*entry, entryName);
  // ZeRO-1: zero_update runs after train_step on the optimizer inputs that
  // were set for train_step (the run may reuse their slots).
  std::vector<ZeroOptimizer::ScalarInput> zeroScalars;
  bool zeroStep = zero_ && std::strcmp(entryName, TCC_ENTRY_TRAIN_STEP) == 0;
  if (zeroStep) {
    const tcc_abi_entry *update = artifact_->findEntry(TCC_ENTRY_ZERO_UPDATE);
    for (int32_t k = 0; k < update->num_tensors; ++k) {
      int32_t i = update->tensor_indices[k];
      const tcc_abi_tensor &t = artifact_->tensor(i);
      if (t.role != TCC_ROLE_INPUT || std::strncmp(t.name, "zero.", 5) == 0)
        continue;
      if (!inputSet_[size_t(i)])
        fail(TCC_ERROR_INVALID_STATE, artifact_->path() + ": entry '" + entryName +
                                          "' needs input '" + t.name + "' (its ZeRO-1 update)");
      const uint8_t *at = arena_.data() + t.offset;
      zeroScalars.push_back({i, std::vector<uint8_t>(at, at + t.size_bytes)});
    }
  }

  // The run may overwrite any arena byte: nothing set or computed before it
  // survives, whatever the outcome.
  // eval_step's count of real samples, which the runtime writes itself.
  for (int32_t k = 0; k < entry->num_tensors; ++k) {
    int32_t i = entry->tensor_indices[k];
    const tcc_abi_tensor &t = artifact_->tensor(i);
    if (t.role == TCC_ROLE_INPUT && std::strcmp(t.name, TCC_INPUT_VALID) == 0) {
      if (t.dtype != TCC_DTYPE_I64 || t.rank != 0)
        fail(TCC_ERROR_ABI, artifact_->path() + ": input '" TCC_INPUT_VALID "' is not an i64 scalar");
      writeInput(i, &samples, sizeof samples, "input '" TCC_INPUT_VALID "' of " + artifact_->path());
    }
  }
  std::fill(inputSet_.begin(), inputSet_.end(), false);
  std::fill(inputSamples_.begin(), inputSamples_.end(), 0);
  std::fill(outputReadable_.begin(), outputReadable_.end(), false);
  std::fill(outputClobberedBy_.begin(), outputClobberedBy_.end(), -1);
  lastEntry_ = entryName;
  // OpenMP's thread count is a per-thread setting: set it on the thread
  // that runs, for the generated loops and library calls alike, and give
  // the caller its own back after.
  ParallelThreadsScope threads(numThreads_);
  bool initializes = std::strcmp(entryName, TCC_ENTRY_INIT_STATE) == 0;
  try {
    if (!initializes)
      refreshDerivedState();
    if (device_)
      runOnDevice(*entry, entryName);
    else
      runOnHost(*entry, entryName);
    if (zeroStep)
      runZeroUpdate(zeroScalars);
  } catch (...) {
    lastEntry_.clear();
    throw;
  }
  if (initializes)
    derivedStale_ = false;
  for (int32_t k = 0; k < entry->num_tensors; ++k) {
    int32_t i = entry->tensor_indices[k];
    if (artifact_->tensor(i).role == TCC_ROLE_OUTPUT)
      outputReadable_[size_t(i)] = true;
  }
  outputSamples_ = samples;
}

int64_t Session::samplesOf(const tcc_abi_entry &entry, const char *entryName) const {
  const int64_t batch = artifact_->batch();
  int64_t samples = 0;
  const char *first = nullptr;
  bool takesValid = false;
  for (int32_t k = 0; k < entry.num_tensors; ++k) {
    int32_t i = entry.tensor_indices[k];
    const tcc_abi_tensor &t = artifact_->tensor(i);
    if (t.role != TCC_ROLE_INPUT)
      continue;
    takesValid |= std::strcmp(t.name, TCC_INPUT_VALID) == 0;
    if (artifact_->batchRows(i) == 0)
      continue;
    int64_t s = inputSamples_[size_t(i)];
    if (!first) {
      samples = s;
      first = t.name;
    } else if (s != samples) {
      fail(TCC_ERROR_SHAPE, artifact_->path() + ": entry '" + entryName + "': input '" + t.name +
                                "' holds " + std::to_string(s) + " sample(s) but input '" + first +
                                "' holds " + std::to_string(samples) +
                                "; the inputs of one run hold the same samples");
    }
  }
  if (!first)
    return batch;
  if (samples < batch && !takesValid && std::strcmp(entryName, TCC_ENTRY_INFER) != 0)
    fail(TCC_ERROR_SHAPE, artifact_->path() + ": entry '" + entryName + "' runs full batches of " +
                              std::to_string(batch) + " samples only; its inputs hold " +
                              std::to_string(samples) + " (input '" + first + "')" +
                              " (infer and eval_step take partial batches)");
  return samples;
}

void Session::refreshDerivedState() {
  if (!derivedStale_)
    return;
  // init_state reads parameters and writes state only (no arena: the
  // compiler refuses one that needs it), so the inputs already set for the
  // entry about to run stay in place.
  if (const tcc_abi_entry *init = artifact_->findEntry(TCC_ENTRY_INIT_STATE)) {
    if (device_)
      runOnDevice(*init, TCC_ENTRY_INIT_STATE);
    else
      runOnHost(*init, TCC_ENTRY_INIT_STATE);
  }
  derivedStale_ = false;
}

void Session::runOnHost(const tcc_abi_entry &entry, const char *entryName) {
  int32_t code = artifact_->entryFn(entry)(arena_.data(), state_.data(), &runtime_);
  if (code != 0)
    fail(TCC_ERROR_RUNTIME, artifact_->path() + ": entry '" + entryName + "' failed with code " +
                                std::to_string(code));
  if (libraryCalls_) {
    std::string error = libraryCalls_->takeError();
    if (!error.empty())
      fail(TCC_ERROR_RUNTIME, "entry '" + std::string(entryName) + "': " + error);
  }
  if (collectives_) {
    std::string error = collectives_->takeError();
    if (!error.empty())
      fail(TCC_ERROR_RUNTIME, artifact_->path() + ": entry '" + entryName + "': " + error);
  }
}

void Session::runZeroUpdate(const std::vector<ZeroOptimizer::ScalarInput> &scalars) {
  // zero_update overwrites the arena: train_step's outputs are kept aside.
  const tcc_abi_entry *step = artifact_->findEntry(TCC_ENTRY_TRAIN_STEP);
  std::vector<std::pair<const tcc_abi_tensor *, std::vector<uint8_t>>> outputs;
  const tcc_abi_tensor *gradNorm = nullptr;
  for (int32_t k = 0; k < step->num_tensors; ++k) {
    const tcc_abi_tensor &t = artifact_->tensor(step->tensor_indices[k]);
    if (t.role != TCC_ROLE_OUTPUT)
      continue;
    const uint8_t *at = arena_.data() + t.offset;
    outputs.push_back({&t, std::vector<uint8_t>(at, at + t.size_bytes)});
    if (std::strcmp(t.name, TCC_OUTPUT_GRAD_NORM) == 0 && t.dtype == TCC_DTYPE_F32 && t.rank == 0)
      gradNorm = &t;
  }
  const tcc_abi_entry *update = artifact_->findEntry(TCC_ENTRY_ZERO_UPDATE);
  float norm = zero_->step(arena_.data(), state_.data(), scalars,
                           [&] { runOnHost(*update, TCC_ENTRY_ZERO_UPDATE); });
  for (const auto &[t, bytes] : outputs)
    std::memcpy(arena_.data() + t->offset, bytes.data(), bytes.size());
  if (gradNorm)
    std::memcpy(arena_.data() + gradNorm->offset, &norm, sizeof norm);
  derivedStale_ = true;
}

bool Session::inFiles(const tcc_abi_tensor &t, bool checkpoint) const {
  // A ZeRO-1 artifact's flat gradient is scratch between two runs; its
  // optimizer state is the sharded one, under the unsharded names (zero_).
  if (zero_ && t.role == TCC_ROLE_STATE && std::strcmp(t.name, TCC_STATE_ZERO_GRADS) == 0)
    return false;
  return t.role == TCC_ROLE_PARAM || (checkpoint && t.role == TCC_ROLE_STATE);
}

std::string Session::stateFingerprint() const {
  const char *fingerprint = artifact_->metadata(TCC_METADATA_STATE_FINGERPRINT);
  return fingerprint ? fingerprint : artifact_->fingerprint();
}

void Session::gatherState(int root) {
  if (zero_)
    zero_->gather(root);
}

void Session::optimizerStateBytes(int64_t *local, int64_t *total) const {
  if (zero_) {
    *local = zero_->localBytes();
    *total = zero_->totalBytes();
    return;
  }
  // The optimizer's buffers, by the names tcc-build-train-step gives them.
  int64_t bytes = 0;
  const tcc_abi_descriptor &d = artifact_->descriptor();
  for (int32_t i = 0; i < d.num_tensors; ++i) {
    const tcc_abi_tensor &t = d.tensors[i];
    std::string name = t.name ? t.name : "";
    auto endsWith = [&](const char *suffix) {
      size_t n = std::strlen(suffix);
      return name.size() > n && name.compare(name.size() - n, n, suffix) == 0;
    };
    if (t.role == TCC_ROLE_STATE &&
        (endsWith(".momentum_buffer") || endsWith(".exp_avg") || endsWith(".exp_avg_sq")))
      bytes += t.size_bytes;
  }
  *local = *total = bytes;
}

void Session::setCommunicator(Communicator *communicator) {
  const std::string &path = artifact_->path();
  if (communicator && communicator->size() > 1) {
    if (!collectives_ && !zero_)
      fail(TCC_ERROR_INVALID_ARGUMENT,
           path + " has no collectives: it cannot train on " +
               std::to_string(communicator->size()) +
               " ranks (compile it with --data-parallel)");
    if (device_ && !device_->device->emulated()) {
      // The collectives go into the CUDA graphs an entry captures: they must
      // be NCCL's from the first run on. (The emulated device keeps the CPU's,
      // which read the communicator when they run.)
      if (!lastEntry_.empty() || runPending_)
        fail(TCC_ERROR_INVALID_STATE,
             path + ": a device session gets its communicator before its first run");
      const tcc_abi_descriptor &d = artifact_->descriptor();
      device_->nccl = std::make_unique<cuda::NcclCollectives>(
          d.collectives, numCollectives(d), *communicator, device_->device->context(), path);
      runtime_.collective = &cuda::NcclCollectives::run;
      runtime_.collective_context = device_->nccl.get();
    }
  }
  communicator_ = communicator;
  if (collectives_)
    collectives_->setCommunicator(communicator);
  if (zero_)
    zero_->setCommunicator(communicator);
}

void Session::broadcastState(int root) {
  if (!communicator_ || communicator_->size() == 1)
    return;
  if (root < 0 || root >= communicator_->size())
    fail(TCC_ERROR_INVALID_ARGUMENT, "broadcast from rank " + std::to_string(root) + " of " +
                                         std::to_string(communicator_->size()));
  // On a device through the host mirror: once, before training.
  downloadState();
  communicator_->broadcast(state_.data(), state_.size(), root,
                           "broadcast of the parameters and optimizer state");
  derivedStale_ = true;
  if (device_ && state_.size() > 0)
    uploadState(0, state_.size(), artifact_->path() + ": uploading the broadcast state");
}

void Session::runOnDevice(const tcc_abi_entry &entry, const char *entryName) {
  cuda::Device &dev = *device_->device;
  const cuda::Driver &drv = dev.driver();
  dev.context().makeCurrent();
  CUstream stream = dev.context().stream();
  const std::string where = artifact_->path() + ": entry '" + entryName + "'";
  CUdeviceptr arena = device_->arena.ptr();
  // Inputs go from staging to their fixed slots, so a captured graph replays
  // correctly.
  device_->inputs->copyToArena(entry, arena, where);
  hostStateStale_ = true;
  auto *deviceArena = reinterpret_cast<uint8_t *>(arena);
  uint8_t *deviceState = device_->state.data();
  int key = int(&entry - artifact_->descriptor().entries);
  int32_t code =
      dev.execute(key, [&] { return entry.fn(deviceArena, deviceState, &runtime_); });
  std::string error = dev.takeError();
  if (device_->nccl && error.empty())
    error = device_->nccl->takeError();
  if (collectives_ && error.empty())
    error = collectives_->takeError();
  if (code != 0 || !error.empty()) {
    drv.cuStreamSynchronize(stream); // let what was enqueued finish
    runPending_ = false;
    if (code != 0)
      fail(TCC_ERROR_RUNTIME, where + " failed with code " + std::to_string(code));
    fail(TCC_ERROR_RUNTIME, "entry '" + std::string(entryName) + "': " + error);
  }
  for (int32_t k = 0; k < entry.num_tensors; ++k) {
    const tcc_abi_tensor &t = artifact_->tensor(entry.tensor_indices[k]);
    if (t.role == TCC_ROLE_OUTPUT && t.size_bytes > 0)
      cuda::check(drv.cuMemcpyDtoHAsync(arena_.data() + t.offset, arena + CUdeviceptr(t.offset),
                                        size_t(t.size_bytes), stream),
                  "cuMemcpyDtoHAsync", where + ": downloading output '" + t.name + "'");
  }
  // The run finishes on the device while the caller goes on (staging the
  // next inputs, say); whatever reads its results waits first (finishRun),
  // and kernel faults surface there.
  cuda::check(drv.cuEventRecord(device_->runDone, stream), "cuEventRecord", where);
  runPending_ = true;
  pendingRun_ = where + " (running its kernels and library calls)";
}

const uint8_t *Session::output(const char *name, size_t *outSize) {
  int32_t index = readableOutput(name);
  if (device_)
    finishRun(); // its outputs are on their way to the host mirror
  const tcc_abi_tensor &t = artifact_->tensor(index);
  *outSize = size_t(t.size_bytes);
  if (artifact_->batchRows(index) > 0)
    *outSize = size_t(t.size_bytes / artifact_->batch() * outputSamples_);
  return arena_.data() + t.offset;
}

int32_t Session::outputShape(const char *name, int64_t *shape, int32_t capacity) {
  int32_t index = readableOutput(name);
  const tcc_abi_tensor &t = artifact_->tensor(index);
  if (capacity < t.rank || (t.rank > 0 && !shape))
    fail(TCC_ERROR_INVALID_ARGUMENT, "output '" + std::string(name) + "' of " + artifact_->path() +
                                         " has rank " + std::to_string(t.rank) + ", room for " +
                                         std::to_string(capacity));
  std::copy(t.shape, t.shape + t.rank, shape);
  if (int64_t rows = artifact_->batchRows(index); rows > 0)
    shape[0] = rows * outputSamples_;
  return t.rank;
}

int32_t Session::readableOutput(const char *name) {
  int32_t index = artifact_->findTensor(name, TCC_ROLE_OUTPUT);
  if (index < 0)
    fail(TCC_ERROR_NOT_FOUND, artifact_->path() + " has no output '" + name +
                                  "'; its outputs are " + artifact_->listTensors(TCC_ROLE_OUTPUT));
  std::string where = "output '" + std::string(name) + "' of " + artifact_->path();
  if (!outputReadable_[size_t(index)]) {
    if (outputClobberedBy_[size_t(index)] >= 0)
      fail(TCC_ERROR_INVALID_STATE,
           where + " was overwritten by setting input '" +
               artifact_->tensor(outputClobberedBy_[size_t(index)]).name +
               "', which shares its memory; read outputs before setting the next inputs");
    if (lastEntry_.empty())
      fail(TCC_ERROR_INVALID_STATE, where + " has not been computed: no successful run yet");
    fail(TCC_ERROR_INVALID_STATE, where + " is not written by entry '" + lastEntry_ + "'");
  }
  return index;
}

} // namespace tcc::rt
