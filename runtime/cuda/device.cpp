//===- device.cpp - what a session needs to run a device artifact on CUDA --===//
//
// Everything that can be decided once is decided in the constructor: the
// module, the functions, the library plans. A run only enqueues work.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/device.h"

#include "runtime/artifact.h"
#include "runtime/cpu/onednn.h"
#include "runtime/cuda/emulator.h"
#include "runtime/dist/collectives.h"
#include "runtime/error.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tcc::rt::cuda {

Device::Device(const tcc_abi_descriptor &d, const std::string &what) : what_(what) {
  int arch = parseCudaArch(d.device);
  std::string archName = "sm_" + std::to_string(arch);
  const tcc_abi_emulated_kernel *twins = emulatedKernels(d);
  emulated_ = emulationSelected();
  if (emulated_) {
    if (d.num_kernels > 0 && !twins)
      fail(TCC_ERROR_UNSUPPORTED,
           what + ": TCC_CUDA_DEVICE=emulated, but it was compiled without --cuda-emulation "
                  "(it has no host twins of its kernels); recompile it with --cuda-emulation, "
                  "or unset TCC_CUDA_DEVICE to run it on a GPU");
    emulateComputeCapability(arch);
    // Every message of this session names the device it ran on.
    what_ = what + " (on the " + kEmulatedDeviceName + ")";
  }
  const Driver *chosen = nullptr;
  try {
    chosen = &cuda::driver(); // the choice (the member driver() reads context_)
  } catch (const Error &e) {
    // "no CUDA device: <why>" from driver(), with the artifact in front.
    fail(e.status(), what + ": compiled for " + d.device + " but there is " + e.what() +
                         (twins ? " (it was compiled with --cuda-emulation: "
                                  "TCC_CUDA_DEVICE=emulated runs it on the CPU)"
                                : ""));
  }
  context_ = std::make_unique<Context>(*chosen, deviceOrdinalFromEnv(), what_);
  int cc = context_->computeCapability();
  std::string deviceName = emulated_ ? std::string("the ") + kEmulatedDeviceName
                                     : "CUDA device " + std::to_string(context_->ordinal()) +
                                           " (" + context_->name() + ", sm_" +
                                           std::to_string(cc) + ")";
  if (cc < arch)
    fail(TCC_ERROR_UNSUPPORTED, what + ": compiled for " + d.device + ", which " + deviceName +
                                    " cannot run; recompile with --target=cuda:sm_" +
                                    std::to_string(cc));
  const char *env = std::getenv("TCC_CUDA_GRAPH");
  graphsEnabled_ = !(env && std::strcmp(env, "0") == 0);
  // Per-kernel times need eager runs: a graph replays as one unit.
  const char *profile = std::getenv("TCC_CUDA_PROFILE");
  profile_ = profile && std::strcmp(profile, "1") == 0;
  if (profile_)
    graphsEnabled_ = false;

  kernels_ = d.kernels;
  functions_.resize(size_t(d.num_kernels));
  if (emulated_) {
    // Entry k's twin runs where the PTX kernel k would.
    moduleKind_ = "host twins (--cuda-emulation)";
    for (int32_t i = 0; i < d.num_kernels; ++i) {
      auto twin = std::make_unique<EmulatedKernel>();
      twin->twin = twins[i];
      twin->name = d.kernels[i].name;
      twin->numParams = d.kernels[i].num_params;
      functions_[size_t(i)] = twin->function();
      twins_.push_back(std::move(twin));
    }
  } else if (d.num_kernels > 0) {
    // A cubin runs only on its exact architecture; PTX is JIT-compiled for
    // this device (and cached by the driver).
    const void *image = d.ptx;
    moduleKind_ = "PTX for " + archName + " (JIT for sm_" + std::to_string(cc) + ")";
    if (d.cubin && d.cubin_size > 0 && cc == arch) {
      image = d.cubin;
      moduleKind_ = "cubin for " + archName;
    }
    check(context_->driver().cuModuleLoadData(&module_, image), "cuModuleLoadData",
          what + ": loading the " + moduleKind_ + " on " + deviceName);
    for (int32_t i = 0; i < d.num_kernels; ++i)
      check(context_->driver().cuModuleGetFunction(&functions_[size_t(i)], module_,
                                                   d.kernels[i].name),
            "cuModuleGetFunction",
            what + ": kernel #" + std::to_string(i) + " '" + d.kernels[i].name + "'");
  }
  if (int32_t n = numLibraryCalls(d); n > 0) {
    if (emulated_) {
      // The CPU runtime's calls, which honor the same contract (abi.h);
      // TF32 math is computed in fp32.
      callTable_ = d.library_calls;
      numCalls_ = n;
      hostCalls_ = std::make_unique<tcc::rt::LibraryCalls>(
          d.library_calls, n, what_, MatmulLibrary::Auto, SixteenBitCalls::Auto,
          LibraryMath::Tf32AsFp32);
      if (size_t bytes = hostCalls_->scratchpadSize(); bytes > 0) {
        bytes = (bytes + 63) / 64 * 64;
        hostScratch_.reset(static_cast<uint8_t *>(std::aligned_alloc(64, bytes)));
        if (!hostScratch_)
          fail(TCC_ERROR_OUT_OF_MEMORY, what_ + ": cannot allocate the library calls' " +
                                            std::to_string(bytes) + "-byte scratchpad");
        hostCalls_->setScratchpad(hostScratch_.get());
      }
    } else {
      workspaceBytes_ =
          d.device_scratch_size > 0 ? size_t(d.device_scratch_size) : kDefaultWorkspaceBytes;
      calls_ = std::make_unique<LibraryCalls>(d.library_calls, n, workspaceBytes_,
                                              context_->stream(), what);
    }
  }
}

Device::~Device() {
  if (!context_)
    return;
  context_->makeCurrent();
  context_->driver().cuStreamSynchronize(context_->stream());
  if (profile_) {
    printProfile();
    for (Mark &m : marks_) {
      context_->driver().cuEventDestroy(m.start);
      context_->driver().cuEventDestroy(m.end);
    }
  }
  for (auto &[key, g] : graphs_) {
    if (g.exec)
      context_->driver().cuGraphExecDestroy(g.exec);
    if (g.graph)
      context_->driver().cuGraphDestroy(g.graph);
  }
  calls_.reset();
  hostCalls_.reset();
  if (module_)
    context_->driver().cuModuleUnload(module_);
}

void Device::setWorkspace(CUdeviceptr workspace) {
  if (calls_)
    calls_->setWorkspace(workspace);
}

void Device::record(const std::string &error) {
  if (error_.empty())
    error_ = error;
}

void Device::markStart(std::string name) {
  const Driver &drv = context_->driver();
  if (usedMarks_ == marks_.size()) {
    Mark m;
    check(drv.cuEventCreate(&m.start, CU_EVENT_DEFAULT), "cuEventCreate", what_ + ": profiling");
    check(drv.cuEventCreate(&m.end, CU_EVENT_DEFAULT), "cuEventCreate", what_ + ": profiling");
    marks_.push_back(m);
  }
  Mark &m = marks_[usedMarks_];
  m.name = std::move(name);
  drv.cuEventRecord(m.start, context_->stream());
}

void Device::markEnd() {
  context_->driver().cuEventRecord(marks_[usedMarks_++].end, context_->stream());
}

void Device::collectProfile() {
  if (!profile_ || usedMarks_ == 0)
    return;
  const Driver &drv = context_->driver();
  drv.cuStreamSynchronize(context_->stream());
  // The first run loads kernels lazily (the driver's and the libraries'):
  // a warm-up, not counted.
  if (!profileWarm_) {
    profileWarm_ = true;
    usedMarks_ = 0;
    return;
  }
  for (size_t i = 0; i < usedMarks_; ++i) {
    float ms = 0;
    if (drv.cuEventElapsedTime(&ms, marks_[i].start, marks_[i].end) == CUDA_SUCCESS) {
      Stat &st = stats_[marks_[i].name];
      st.ms += ms;
      ++st.count;
    }
  }
  usedMarks_ = 0;
  ++profiledRuns_;
}

void Device::printProfile() const {
  if (stats_.empty())
    return;
  std::vector<std::pair<std::string, Stat>> rows(stats_.begin(), stats_.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto &a, const auto &b) { return a.second.ms > b.second.ms; });
  double total = 0, library = 0;
  for (const auto &[name, st] : rows) {
    total += st.ms;
    if (name.rfind("library", 0) == 0)
      library += st.ms;
  }
  int runs = std::max(profiledRuns_, 1);
  std::fprintf(stderr,
               "tcc CUDA profile (%s): %d runs after a warm-up, %.3f ms of GPU time per run (kernels %.3f, "
               "library calls %.3f), %zu kernels and calls\n",
               what_.c_str(), runs, total / runs, (total - library) / runs, library / runs,
               rows.size());
  std::fprintf(stderr, "  %10s %6s %6s  %s\n", "ms/run", "%", "calls", "kernel");
  for (size_t i = 0; i < rows.size() && i < 30; ++i)
    std::fprintf(stderr, "  %10.4f %6.2f %6lld  %s\n", rows[i].second.ms / runs,
                 100.0 * rows[i].second.ms / total, (long long)(rows[i].second.count / runs),
                 rows[i].first.c_str());
}

void Device::launchKernel(void *self, int32_t index, void **params) {
  auto *d = static_cast<Device *>(self);
  if (index < 0 || size_t(index) >= d->functions_.size()) {
    d->record(d->what_ + ": generated code asked for kernel #" + std::to_string(index) + " of " +
              std::to_string(d->functions_.size()));
    return;
  }
  const tcc_abi_kernel &k = d->kernels_[index];
  if (d->profile_)
    d->markStart(k.name);
  CUresult r = d->context_->driver().cuLaunchKernel(
      d->functions_[size_t(index)], unsigned(k.grid[0]), unsigned(k.grid[1]), unsigned(k.grid[2]),
      unsigned(k.block[0]), unsigned(k.block[1]), unsigned(k.block[2]), unsigned(k.shared_bytes),
      d->context_->stream(), params, nullptr);
  if (d->profile_)
    d->markEnd();
  if (r != CUDA_SUCCESS)
    d->record(d->what_ + ": kernel #" + std::to_string(index) + " '" + k.name +
              "': cuLaunchKernel (grid " + std::to_string(k.grid[0]) + "x" +
              std::to_string(k.grid[1]) + "x" + std::to_string(k.grid[2]) + ", block " +
              std::to_string(k.block[0]) + "x" + std::to_string(k.block[1]) + "x" +
              std::to_string(k.block[2]) + ", " + std::to_string(k.shared_bytes) +
              " bytes shared) failed: " + errorString(r));
}

void Device::libraryCall(void *self, int32_t index, void *const *operands) {
  auto *d = static_cast<Device *>(self);
  if (!d->calls_ && !d->hostCalls_) {
    d->record(d->what_ + ": generated code asked for library call #" + std::to_string(index) +
              " but the artifact lists none");
    return;
  }
  if (d->profile_)
    d->markStart(d->hostCalls_ ? "library call #" + std::to_string(index)
                               : d->calls_->name(index));
  if (d->hostCalls_)
    d->runOnHost("library call", index, d->numCalls_,
                 d->numCalls_ > index && index >= 0 ? d->callTable_[index].num_operands : 0,
                 operands, [calls = d->hostCalls_.get(), index](void *const *ops) {
                   tcc::rt::LibraryCalls::run(calls, index, ops);
                 });
  else if (std::string error = d->calls_->run(index, operands); !error.empty())
    d->record(error);
  if (d->profile_)
    d->markEnd();
}

void Device::useHostCollectives(Collectives *collectives, const tcc_abi_collective *table,
                                int32_t count) {
  hostCollectives_ = collectives;
  collectiveTable_ = table;
  numCollectives_ = count;
}

void Device::collective(void *self, int32_t index, void *const *operands) {
  auto *d = static_cast<Device *>(self);
  if (!d->hostCollectives_) {
    d->record(d->what_ + ": generated code asked for collective #" + std::to_string(index) +
              " but the artifact lists none");
    return;
  }
  d->runOnHost("collective", index, d->numCollectives_,
               d->numCollectives_ > index && index >= 0
                   ? d->collectiveTable_[index].num_operands
                   : 0,
               operands, [collectives = d->hostCollectives_, index](void *const *ops) {
                 Collectives::run(collectives, index, ops);
               });
}

void Device::runOnHost(const char *kind, int32_t index, int32_t count, int32_t numOperands,
                       void *const *operands, std::function<void(void *const *)> run) {
  if (index < 0 || index >= count) {
    record(what_ + ": generated code asked for " + kind + " #" + std::to_string(index) + " of " +
           std::to_string(count));
    return;
  }
  // The operand array is the caller's: a capture keeps the pointers.
  std::vector<void *> ops(operands, operands + numOperands);
  CUresult r = emulatedHostWork(context_->stream(),
                                [ops = std::move(ops), run = std::move(run)] { run(ops.data()); });
  if (r != CUDA_SUCCESS)
    record(what_ + ": " + kind + " #" + std::to_string(index) + ": " + errorString(r));
}

std::string Device::takeError() {
  // The CPU library calls keep their own first failure (the collectives'
  // is the session's to take).
  if (hostCalls_)
    record(hostCalls_->takeError());
  std::string e;
  e.swap(error_);
  return e;
}

bool Device::hasGraph(int key) const {
  auto it = graphs_.find(key);
  return it != graphs_.end() && it->second.exec;
}

std::string Device::graphFailure(int key) const {
  auto it = graphs_.find(key);
  return it == graphs_.end() ? "" : it->second.failure;
}

int32_t Device::execute(int key, const std::function<int32_t()> &body) {
  const Driver &drv = context_->driver();
  CUstream stream = context_->stream();
  Graph &g = graphs_[key];
  if (g.exec) {
    check(drv.cuGraphLaunch(g.exec, stream), "cuGraphLaunch", what_ + ": replaying a CUDA graph");
    return 0;
  }
  if (!graphsEnabled_ || !g.failure.empty() || g.eagerRuns == 0) {
    int32_t code = body();
    collectProfile();
    if (code == 0 && error_.empty())
      ++g.eagerRuns;
    return code;
  }
  // Capture. Work enqueued during capture is recorded, not run: on any
  // failure end the capture, forget it, and run eagerly.
  auto giveUp = [&](const std::string &why) {
    g.failure = why;
    if (g.graph)
      drv.cuGraphDestroy(g.graph);
    g.graph = nullptr;
    error_.clear();
    return body();
  };
  CUresult r = drv.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (r != CUDA_SUCCESS)
    return giveUp("cuStreamBeginCapture failed: " + errorString(r));
  int32_t code = body();
  r = drv.cuStreamEndCapture(stream, &g.graph);
  if (code != 0)
    return giveUp("the entry returned " + std::to_string(code) + " while being captured");
  if (!error_.empty())
    return giveUp("while capturing: " + error_);
  if (r != CUDA_SUCCESS || !g.graph)
    return giveUp("cuStreamEndCapture failed: " + errorString(r));
  r = drv.cuGraphInstantiateWithFlags(&g.exec, g.graph, 0);
  if (r != CUDA_SUCCESS) {
    g.exec = nullptr;
    return giveUp("cuGraphInstantiateWithFlags failed: " + errorString(r));
  }
  check(drv.cuGraphLaunch(g.exec, stream), "cuGraphLaunch", what_ + ": launching a CUDA graph");
  return 0;
}

InputStaging::InputStaging(const tcc_abi_descriptor &d, Context &context, const std::string &what)
    : d_(d), context_(context), offset_(size_t(d.num_tensors), 0),
      uploaded_(size_t(d.num_tensors), nullptr) {
  // Slots 256-byte aligned, like device allocations.
  size_t total = 0;
  for (int32_t i = 0; i < d.num_tensors; ++i)
    if (d.tensors[i].role == TCC_ROLE_INPUT) {
      offset_[size_t(i)] = total;
      total += (size_t(d.tensors[i].size_bytes) + 255) / 256 * 256;
    }
  // Whole pages, so that page-locking touches no other allocation.
  size_t bytes = std::max<size_t>((total + 4095) / 4096 * 4096, 4096);
  void *p = nullptr;
  if (posix_memalign(&p, 4096, bytes) != 0)
    fail(TCC_ERROR_OUT_OF_MEMORY,
         "cannot allocate the " + std::to_string(bytes) + "-byte input staging of " + what);
  host_.reset(static_cast<uint8_t *>(p));
  pinned_ = HostRegistration(context_, p, bytes, "input staging of " + what);
  device_ = DeviceBuffer(context_, total, "input staging of " + what);
  const Driver &drv = context_.driver();
  check(drv.cuEventCreate(&consumed_, CU_EVENT_DISABLE_TIMING), "cuEventCreate", what);
  for (int32_t i = 0; i < d.num_tensors; ++i)
    if (d.tensors[i].role == TCC_ROLE_INPUT)
      check(drv.cuEventCreate(&uploaded_[size_t(i)], CU_EVENT_DISABLE_TIMING), "cuEventCreate",
            what);
}

InputStaging::~InputStaging() {
  const Driver &drv = context_.driver();
  // Uploads may still read the host buffer.
  drv.cuStreamSynchronize(context_.copyStream());
  for (CUevent e : uploaded_)
    if (e)
      drv.cuEventDestroy(e);
  if (consumed_)
    drv.cuEventDestroy(consumed_);
}

void InputStaging::set(int32_t index, const void *data, size_t size, const std::string &where) {
  if (size == 0)
    return;
  const Driver &drv = context_.driver();
  CUstream copy = context_.copyStream();
  size_t at = offset_[size_t(index)];
  CUevent done = uploaded_[size_t(index)];
  // An event never recorded counts as complete.
  check(drv.cuEventSynchronize(done), "cuEventSynchronize",
        where + ": waiting for its previous upload");
  if (size > 0) // data may be NULL for an empty tensor
    std::memcpy(host_.get() + at, data, size);
  check(drv.cuStreamWaitEvent(copy, consumed_, 0), "cuStreamWaitEvent",
        where + ": ordering its upload after the last run's copies");
  check(drv.cuMemcpyHtoDAsync(device_.ptr() + at, host_.get() + at, size, copy),
        "cuMemcpyHtoDAsync", where + ": uploading it");
  check(drv.cuEventRecord(done, copy), "cuEventRecord", where + ": uploading it");
}

void InputStaging::copyToArena(const tcc_abi_entry &entry, CUdeviceptr arena,
                               const std::string &where) {
  const Driver &drv = context_.driver();
  CUstream stream = context_.stream();
  for (int32_t k = 0; k < entry.num_tensors; ++k) {
    int32_t i = entry.tensor_indices[k];
    const tcc_abi_tensor &t = d_.tensors[i];
    if (t.role != TCC_ROLE_INPUT || t.size_bytes == 0)
      continue;
    std::string what = where + ": input '" + t.name + "'";
    check(drv.cuStreamWaitEvent(stream, uploaded_[size_t(i)], 0), "cuStreamWaitEvent",
          what + ": waiting for its upload");
    check(drv.cuMemcpyDtoDAsync(arena + CUdeviceptr(t.offset), device_.ptr() + offset_[size_t(i)],
                                size_t(t.size_bytes), stream),
          "cuMemcpyDtoDAsync", what + ": copying it to its arena slot");
  }
  check(drv.cuEventRecord(consumed_, stream), "cuEventRecord", where);
}

} // namespace tcc::rt::cuda
