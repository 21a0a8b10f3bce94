//===- emulator.cpp - an emulated CUDA device on the host CPU -------------===//
//
// Every driver function of driver.h's table, on the host. The semantics kept
// are the ones the runtime relies on: stream order (work runs when it is
// enqueued), capture (the capturing stream records instead of running, and a
// synchronization during capture invalidates it, as on a GPU), events,
// launch limits and, inside a launch, bar.sync and shfl.sync. Errors come
// back as CUresults; the emulator keeps the last failure's explanation per
// thread and cuGetErrorString returns it, so the Device's messages say why.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/emulator.h"

#include "runtime/cpu/parallel.h"

#include <boost/context/fiber.hpp>
#include <boost/context/preallocated.hpp>
#include <boost/context/stack_context.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace tcc::rt::cuda {

bool emulationSelected() {
  const char *env = std::getenv("TCC_CUDA_DEVICE");
  return env && std::strcmp(env, kEmulatedDeviceSetting) == 0;
}

int32_t shuffleSourceLane(int32_t lane, int32_t offset, int32_t width, int32_t mode, bool *valid) {
  // MLIR's GPUToNVVM: c = 32 - width for up, width - 1 otherwise; its bits
  // 12:8 (the segment mask) are 0. PTX then reads b[4:0] and c[4:0].
  const int32_t c = mode == TCC_SHUFFLE_UP ? 32 - width : width - 1;
  const int32_t segmask = (c >> 8) & 31, cval = c & 31, bval = offset & 31;
  const int32_t maxLane = (lane & segmask) | (cval & ~segmask);
  const int32_t minLane = lane & segmask;
  int32_t j = lane;
  bool pval = false;
  switch (mode) {
  case TCC_SHUFFLE_XOR: // bfly
    j = lane ^ bval;
    pval = j <= maxLane;
    break;
  case TCC_SHUFFLE_UP:
    j = lane - bval;
    pval = j >= maxLane;
    break;
  case TCC_SHUFFLE_DOWN:
    j = lane + bval;
    pval = j <= maxLane;
    break;
  case TCC_SHUFFLE_IDX:
    j = minLane | (bval & ~segmask);
    pval = j <= maxLane;
    break;
  default:
    break;
  }
  *valid = pval;
  return pval ? j : lane;
}

namespace {

//===--- Errors ---------------------------------------------------------===//

/// The last failure on this thread and why: cuGetErrorString's text for it.
struct Failure {
  CUresult code = CUDA_SUCCESS;
  std::string why;
};
thread_local Failure lastFailure;

CUresult failure(CUresult code, std::string why) {
  lastFailure.code = code;
  lastFailure.why = std::move(why);
  return code;
}

const char *errorName(CUresult r) {
  switch (r) {
#define TCC_EMULATED_ERROR(name)                                                                   \
  case name:                                                                                       \
    return #name;
    TCC_EMULATED_ERROR(CUDA_SUCCESS)
    TCC_EMULATED_ERROR(CUDA_ERROR_INVALID_VALUE)
    TCC_EMULATED_ERROR(CUDA_ERROR_OUT_OF_MEMORY)
    TCC_EMULATED_ERROR(CUDA_ERROR_INVALID_DEVICE)
    TCC_EMULATED_ERROR(CUDA_ERROR_INVALID_IMAGE)
    TCC_EMULATED_ERROR(CUDA_ERROR_INVALID_HANDLE)
    TCC_EMULATED_ERROR(CUDA_ERROR_NOT_FOUND)
    TCC_EMULATED_ERROR(CUDA_ERROR_ILLEGAL_STATE)
    TCC_EMULATED_ERROR(CUDA_ERROR_LAUNCH_FAILED)
    TCC_EMULATED_ERROR(CUDA_ERROR_NOT_SUPPORTED)
    TCC_EMULATED_ERROR(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    TCC_EMULATED_ERROR(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
    TCC_EMULATED_ERROR(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
#undef TCC_EMULATED_ERROR
  default:
    return nullptr;
  }
}

CUresult getErrorName(CUresult r, const char **out) {
  *out = errorName(r);
  return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult getErrorString(CUresult r, const char **out) {
  if (!errorName(r)) {
    *out = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (r != CUDA_SUCCESS && r == lastFailure.code && !lastFailure.why.empty())
    *out = lastFailure.why.c_str();
  else
    *out = r == CUDA_SUCCESS ? "no error" : "emulated CUDA device";
  return CUDA_SUCCESS;
}

//===--- Device and context ----------------------------------------------===//

std::atomic<int> capability{0};

/// The one context's handle: any address that is not null.
int contextTag;

CUresult init(unsigned) { return CUDA_SUCCESS; }

CUresult driverGetVersion(int *version) {
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult deviceGetCount(int *count) {
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult deviceGet(CUdevice *device, int ordinal) {
  if (ordinal != 0)
    return failure(CUDA_ERROR_INVALID_DEVICE, "the emulated CUDA device is device 0, the only one");
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult deviceGetName(char *name, int length, CUdevice) {
  if (length <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, size_t(length), "%s", kEmulatedDeviceName);
  return CUDA_SUCCESS;
}

CUresult deviceGetPCIBusId(char *, int, CUdevice) {
  return failure(CUDA_ERROR_NOT_SUPPORTED, "the emulated CUDA device has no PCI bus id");
}

CUresult deviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice) {
  int cc = capability.load();
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = cc / 10;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = cc % 10;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    *value = 32;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = 1024;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = availableCpus();
    return CUDA_SUCCESS;
  default:
    return failure(CUDA_ERROR_NOT_SUPPORTED, "the emulated CUDA device does not report attribute " +
                                                 std::to_string(int(attribute)));
  }
}

CUresult primaryCtxRetain(CUcontext *context, CUdevice) {
  *context = reinterpret_cast<CUcontext>(&contextTag);
  return CUDA_SUCCESS;
}

CUresult primaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }

CUresult ctxSetCurrent(CUcontext) { return CUDA_SUCCESS; }

//===--- Streams and graphs ----------------------------------------------===//

/// Work on a stream: runs it, returns its result.
using Work = std::function<CUresult()>;

struct Graph {
  std::vector<Work> nodes;
};

struct Stream {
  Graph *capture = nullptr; ///< while capturing: what is being recorded
  bool invalidated = false; ///< a synchronization during the capture
};

/// Captures begun on this thread and not ended: synchronous copies and
/// memsets are refused meanwhile (CUDA_STREAM_CAPTURE_MODE_THREAD_LOCAL).
thread_local int capturesOnThread = 0;

Stream *streamOf(CUstream s) { return reinterpret_cast<Stream *>(s); }
Graph *graphOf(CUgraph g) { return reinterpret_cast<Graph *>(g); }
Graph *graphOf(CUgraphExec g) { return reinterpret_cast<Graph *>(g); }

/// Runs WORK in STREAM's order: now, or recorded while STREAM captures.
CUresult enqueue(CUstream stream, Work work) {
  if (Stream *s = streamOf(stream); s && s->capture) {
    s->capture->nodes.push_back(std::move(work));
    return CUDA_SUCCESS;
  }
  return work();
}

CUresult refuseDuringCapture(const char *call) {
  if (capturesOnThread == 0)
    return CUDA_SUCCESS;
  return failure(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                 std::string(call) + " during a stream capture on this thread");
}

CUresult streamCreate(CUstream *stream, unsigned) {
  *stream = reinterpret_cast<CUstream>(new Stream);
  return CUDA_SUCCESS;
}

CUresult streamDestroy(CUstream stream) {
  Stream *s = streamOf(stream);
  if (!s)
    return CUDA_ERROR_INVALID_HANDLE;
  if (s->capture) {
    --capturesOnThread;
    delete s->capture;
  }
  delete s;
  return CUDA_SUCCESS;
}

CUresult streamSynchronize(CUstream stream) {
  if (Stream *s = streamOf(stream); s && s->capture) {
    s->invalidated = true;
    return failure(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                   "cuStreamSynchronize on a capturing stream (the capture is invalidated)");
  }
  return CUDA_SUCCESS; // its work ran when it was enqueued
}

CUresult streamWaitEvent(CUstream, CUevent, unsigned) { return CUDA_SUCCESS; }

CUresult streamBeginCapture(CUstream stream, CUstreamCaptureMode) {
  Stream *s = streamOf(stream);
  if (!s)
    return failure(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "capturing the legacy stream");
  if (s->capture)
    return failure(CUDA_ERROR_ILLEGAL_STATE, "the stream is already capturing");
  s->capture = new Graph;
  s->invalidated = false;
  ++capturesOnThread;
  return CUDA_SUCCESS;
}

CUresult streamEndCapture(CUstream stream, CUgraph *graph) {
  Stream *s = streamOf(stream);
  *graph = nullptr;
  if (!s || !s->capture)
    return failure(CUDA_ERROR_ILLEGAL_STATE, "the stream is not capturing");
  std::unique_ptr<Graph> captured(std::exchange(s->capture, nullptr));
  --capturesOnThread;
  if (s->invalidated)
    return failure(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                   "the capture was invalidated by a synchronization");
  *graph = reinterpret_cast<CUgraph>(captured.release());
  return CUDA_SUCCESS;
}

CUresult graphInstantiate(CUgraphExec *exec, CUgraph graph, unsigned long long) {
  if (!graph)
    return CUDA_ERROR_INVALID_HANDLE;
  // Independent of GRAPH from here on, as on a GPU.
  *exec = reinterpret_cast<CUgraphExec>(new Graph(*graphOf(graph)));
  return CUDA_SUCCESS;
}

CUresult graphLaunch(CUgraphExec exec, CUstream stream) {
  if (!exec)
    return CUDA_ERROR_INVALID_HANDLE;
  if (Stream *s = streamOf(stream); s && s->capture)
    return failure(CUDA_ERROR_NOT_SUPPORTED, "launching a graph into a capture");
  for (Work &node : graphOf(exec)->nodes)
    if (CUresult r = node(); r != CUDA_SUCCESS)
      return r;
  return CUDA_SUCCESS;
}

CUresult graphDestroy(CUgraph graph) {
  delete graphOf(graph);
  return CUDA_SUCCESS;
}

CUresult graphExecDestroy(CUgraphExec exec) {
  delete graphOf(exec);
  return CUDA_SUCCESS;
}

//===--- Events ----------------------------------------------------------===//

struct Event {
  unsigned flags = 0;
  bool recorded = false;
  std::chrono::steady_clock::time_point at;
};

Event *eventOf(CUevent e) { return reinterpret_cast<Event *>(e); }

CUresult eventCreate(CUevent *event, unsigned flags) {
  auto *e = new Event;
  e->flags = flags;
  *event = reinterpret_cast<CUevent>(e);
  return CUDA_SUCCESS;
}

CUresult eventRecord(CUevent event, CUstream stream) {
  Event *e = eventOf(event);
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  // In a capture an event orders streams inside the graph: nothing to keep.
  if (Stream *s = streamOf(stream); s && s->capture)
    return CUDA_SUCCESS;
  // Everything enqueued before it has run: it completes now.
  e->recorded = true;
  e->at = std::chrono::steady_clock::now();
  return CUDA_SUCCESS;
}

CUresult eventSynchronize(CUevent event) {
  return event ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult eventQuery(CUevent event) { return event ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }

CUresult eventDestroy(CUevent event) {
  delete eventOf(event);
  return CUDA_SUCCESS;
}

CUresult eventElapsedTime(float *ms, CUevent start, CUevent end) {
  Event *a = eventOf(start), *b = eventOf(end);
  if (!a || !b || !a->recorded || !b->recorded || (a->flags & CU_EVENT_DISABLE_TIMING) ||
      (b->flags & CU_EVENT_DISABLE_TIMING))
    return failure(CUDA_ERROR_INVALID_HANDLE, "an event without a recorded time");
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return CUDA_SUCCESS;
}

//===--- Memory ----------------------------------------------------------===//

/// Device allocations are host memory with the driver's 256-byte alignment.
constexpr size_t kAllocationAlignment = 256;

CUresult memAlloc(CUdeviceptr *ptr, size_t size) {
  if (size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  size_t bytes = (size + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
  void *p = std::aligned_alloc(kAllocationAlignment, bytes);
  if (!p)
    return failure(CUDA_ERROR_OUT_OF_MEMORY,
                   "cannot allocate " + std::to_string(size) + " bytes of host memory");
  *ptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

CUresult memFree(CUdeviceptr ptr) {
  std::free(reinterpret_cast<void *>(ptr));
  return CUDA_SUCCESS;
}

CUresult memsetD8(CUdeviceptr ptr, unsigned char value, size_t n) {
  if (CUresult r = refuseDuringCapture("cuMemsetD8"); r != CUDA_SUCCESS)
    return r;
  std::memset(reinterpret_cast<void *>(ptr), value, n);
  return CUDA_SUCCESS;
}

CUresult copyNow(void *to, const void *from, size_t n) {
  if (n > 0)
    std::memmove(to, from, n);
  return CUDA_SUCCESS;
}

CUresult memcpyHtoD(CUdeviceptr to, const void *from, size_t n) {
  if (CUresult r = refuseDuringCapture("cuMemcpyHtoD"); r != CUDA_SUCCESS)
    return r;
  return copyNow(reinterpret_cast<void *>(to), from, n);
}

CUresult memcpyDtoH(void *to, CUdeviceptr from, size_t n) {
  if (CUresult r = refuseDuringCapture("cuMemcpyDtoH"); r != CUDA_SUCCESS)
    return r;
  return copyNow(to, reinterpret_cast<const void *>(from), n);
}

CUresult memcpyHtoDAsync(CUdeviceptr to, const void *from, size_t n, CUstream stream) {
  return enqueue(stream, [=] { return copyNow(reinterpret_cast<void *>(to), from, n); });
}

CUresult memcpyDtoHAsync(void *to, CUdeviceptr from, size_t n, CUstream stream) {
  return enqueue(stream, [=] { return copyNow(to, reinterpret_cast<const void *>(from), n); });
}

CUresult memcpyDtoDAsync(CUdeviceptr to, CUdeviceptr from, size_t n, CUstream stream) {
  return enqueue(stream, [=] {
    return copyNow(reinterpret_cast<void *>(to), reinterpret_cast<const void *>(from), n);
  });
}

CUresult memHostRegister(void *, size_t, unsigned) { return CUDA_SUCCESS; }

CUresult memHostUnregister(void *) { return CUDA_SUCCESS; }

//===--- Modules ---------------------------------------------------------===//

CUresult moduleLoadData(CUmodule *, const void *) {
  return failure(CUDA_ERROR_NOT_SUPPORTED,
                 "the emulated CUDA device runs the kernels' host twins, not PTX or cubin");
}

CUresult moduleUnload(CUmodule) { return CUDA_SUCCESS; }

CUresult moduleGetFunction(CUfunction *, CUmodule, const char *) {
  return failure(CUDA_ERROR_NOT_SUPPORTED, "the emulated CUDA device has no modules");
}

//===--- Kernels ---------------------------------------------------------===//

constexpr int32_t kWarpSize = 32;
/// Each fiber's stack (a guard page below it). Twins keep little on the
/// stack: their private memory and the memref descriptors of their calls.
constexpr size_t kStackBytes = size_t(64) << 10;

struct Geometry {
  uint32_t grid[3], block[3];
  uint32_t sharedBytes;
};

/// One block's shared state while it runs on a worker.
struct Block;

/// One GPU thread of the running block.
struct Lane {
  enum State : uint8_t { Running, AtBarrier, AtShuffle, Returned };
  tcc_abi_emulated_thread view{};
  Block *block = nullptr;
  int32_t lane = 0, warp = 0;
  uint64_t shuffles = 0; ///< shuffles done: the round of the next one
  State state = Running;
  /// The scheduler's context while this thread runs on its fiber.
  boost::context::fiber scheduler;
  void yield() { scheduler = std::move(scheduler).resume(); }
};

struct Warp {
  /// Double-buffered by round parity: a lane that went on to the next
  /// shuffle writes the other buffer, and cannot complete that round (so
  /// come back to this buffer) before every lane has read this one.
  int64_t slots[2][kWarpSize];
  int32_t arrived[2];
  int32_t members;
  uint64_t completed; ///< rounds every member has arrived at
};

struct Block {
  const EmulatedKernel *kernel = nullptr;
  void **params = nullptr;
  int32_t threads = 0;
  bool onFibers = false;
  int32_t arrived = 0;     ///< at the current barrier
  uint64_t generation = 0; ///< barriers completed
  /// Bumped by every arrival, release and return: a pass of the scheduler
  /// over all waiting fibers that leaves it unchanged is a deadlock.
  uint64_t progress = 0;
  Warp *warps = nullptr;
  std::string misuse; ///< a twin that synchronizes without saying so
};

void noteMisuse(Block &b, const char *what) {
  if (b.misuse.empty())
    b.misuse = "kernel '" + b.kernel->name + "' calls " + what +
               " but its emulated twin says it does not synchronize (synchronizes = 0)";
}

void barrier(void *context) {
  Lane &t = *static_cast<Lane *>(context);
  Block &b = *t.block;
  if (!b.onFibers)
    return noteMisuse(b, "barrier");
  ++b.progress;
  if (++b.arrived == b.threads) {
    b.arrived = 0;
    ++b.generation;
    return;
  }
  uint64_t generation = b.generation;
  t.state = Lane::AtBarrier;
  while (b.generation == generation)
    t.yield();
  t.state = Lane::Running;
  ++b.progress;
}

int64_t shuffle(void *context, int64_t value, int32_t offset, int32_t width, int32_t mode,
                int32_t *valid) {
  Lane &t = *static_cast<Lane *>(context);
  Block &b = *t.block;
  bool inRange = false;
  int32_t source = shuffleSourceLane(t.lane, offset, width, mode, &inRange);
  if (valid)
    *valid = inRange;
  if (!b.onFibers) {
    noteMisuse(b, "shuffle");
    return value;
  }
  Warp &w = b.warps[t.warp];
  uint64_t round = t.shuffles++;
  int parity = int(round & 1);
  w.slots[parity][t.lane] = value;
  ++b.progress;
  if (++w.arrived[parity] == w.members) {
    w.arrived[parity] = 0;
    ++w.completed;
  } else {
    t.state = Lane::AtShuffle;
    while (w.completed <= round)
      t.yield();
    t.state = Lane::Running;
    ++b.progress;
  }
  // A lane past the block's last thread has no value (unpredictable on a
  // GPU): the caller keeps its own.
  if (!inRange || source >= w.members)
    return value;
  return w.slots[parity][source];
}

/// A stack allocator for fibers whose stacks the worker owns (preallocated).
struct BorrowedStack {
  boost::context::stack_context allocate() { std::abort(); }
  void deallocate(boost::context::stack_context &) noexcept {}
};

/// The entry of a thread's fiber: trivially destructible, so that a fiber
/// abandoned in a deadlock leaves nothing to destroy.
struct FiberEntry {
  Lane *lane;
  boost::context::fiber operator()(boost::context::fiber &&scheduler) const {
    Lane &t = *lane;
    t.scheduler = std::move(scheduler);
    t.block->kernel->twin.fn(&t.view, t.block->params);
    t.state = Lane::Returned;
    ++t.block->progress;
    return std::move(t.scheduler);
  }
};

/// What one host thread needs to run blocks: stacks, threads, warps and the
/// workgroup memory, kept from block to block (and launch to launch).
class Worker {
public:
  ~Worker() {
    size_t page = pageSize();
    for (void *s : stacks_)
      ::munmap(s, kStackBytes + page);
    std::free(shared_);
  }

  /// Runs block INDEX of a launch; returns "" or what went wrong.
  std::string run(const EmulatedKernel &kernel, const Geometry &g, void **params, int64_t index);

private:
  static size_t pageSize() { return size_t(::sysconf(_SC_PAGESIZE)); }
  std::string reserve(int32_t threads, size_t sharedBytes);
  std::string runOnFibers(Block &b, const int32_t where[3]);

  std::vector<void *> stacks_; ///< mmap'ed: a guard page, then kStackBytes
  std::vector<Lane> lanes_;
  std::vector<Warp> warps_;
  std::vector<boost::context::fiber> fibers_;
  void *shared_ = nullptr;
  size_t sharedBytes_ = 0;
};

std::string Worker::reserve(int32_t threads, size_t sharedBytes) {
  if (lanes_.size() < size_t(threads)) {
    lanes_.resize(size_t(threads));
    fibers_.resize(size_t(threads));
  }
  if (sharedBytes > sharedBytes_) {
    std::free(shared_);
    sharedBytes_ = (sharedBytes + 63) / 64 * 64;
    shared_ = std::aligned_alloc(64, sharedBytes_);
    if (!shared_) {
      sharedBytes_ = 0;
      return "cannot allocate " + std::to_string(sharedBytes) + " bytes of workgroup memory";
    }
  }
  return "";
}

std::string Worker::runOnFibers(Block &b, const int32_t where[3]) {
  const int32_t n = b.threads;
  size_t page = pageSize();
  while (stacks_.size() < size_t(n)) {
    void *s = ::mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s == MAP_FAILED)
      return "cannot map a " + std::to_string(kStackBytes) + "-byte fiber stack";
    ::mprotect(s, page, PROT_NONE); // an overflow faults instead of corrupting
    stacks_.push_back(s);
  }
  int32_t numWarps = (n + kWarpSize - 1) / kWarpSize;
  if (warps_.size() < size_t(numWarps))
    warps_.resize(size_t(numWarps));
  for (int32_t w = 0; w < numWarps; ++w) {
    Warp &warp = warps_[size_t(w)];
    warp.arrived[0] = warp.arrived[1] = 0;
    warp.members = std::min(kWarpSize, n - w * kWarpSize);
    warp.completed = 0;
  }
  b.warps = warps_.data();
  b.onFibers = true;
  for (int32_t t = 0; t < n; ++t) {
    boost::context::stack_context stack;
    stack.size = kStackBytes;
    stack.sp = static_cast<char *>(stacks_[size_t(t)]) + page + kStackBytes;
    fibers_[size_t(t)] = boost::context::fiber(
        std::allocator_arg, boost::context::preallocated(stack.sp, stack.size, stack),
        BorrowedStack{}, FiberEntry{&lanes_[size_t(t)]});
  }
  // Round robin: each pass resumes every thread that has not returned; one
  // runs until it returns or waits. A pass in which nothing moved is a
  // deadlock (a barrier or shuffle that some thread will never reach).
  int32_t live = n;
  while (live > 0) {
    uint64_t before = b.progress;
    for (int32_t t = 0; t < n; ++t) {
      if (lanes_[size_t(t)].state == Lane::Returned)
        continue;
      fibers_[size_t(t)] = std::move(fibers_[size_t(t)]).resume();
      live -= lanes_[size_t(t)].state == Lane::Returned;
    }
    if (live == 0 || b.progress != before)
      continue;
    int32_t returned = 0, atBarrier = 0, atShuffle = 0;
    for (int32_t t = 0; t < n; ++t) {
      Lane &lane = lanes_[size_t(t)];
      returned += lane.state == Lane::Returned;
      atBarrier += lane.state == Lane::AtBarrier;
      atShuffle += lane.state == Lane::AtShuffle;
      if (lane.state != Lane::Returned) {
        // Abandoned, never resumed or destroyed (destroying a suspended
        // fiber unwinds its stack, through the twin's frames): the handle
        // is moved into storage that is never destructed, and the stack is
        // reused by the next block.
        alignas(boost::context::fiber) static thread_local unsigned char
            abandoned[sizeof(boost::context::fiber)];
        new (abandoned) boost::context::fiber(std::move(fibers_[size_t(t)]));
        lane.state = Lane::Returned;
      }
    }
    return "kernel '" + b.kernel->name + "' deadlocks in block (" + std::to_string(where[0]) + "," +
           std::to_string(where[1]) + "," + std::to_string(where[2]) +
           "): " + std::to_string(returned) + " of its " + std::to_string(n) +
           " threads returned while " + std::to_string(atBarrier) + " wait at a barrier and " +
           std::to_string(atShuffle) +
           " at a shuffle (every thread of a block must reach each barrier, every lane of a "
           "warp each shuffle)";
  }
  return b.misuse;
}

std::string Worker::run(const EmulatedKernel &kernel, const Geometry &g, void **params,
                        int64_t index) {
  const int32_t bx = int32_t(g.block[0]), by = int32_t(g.block[1]), bz = int32_t(g.block[2]);
  const int32_t n = bx * by * bz;
  size_t sharedBytes =
      std::max<size_t>({size_t(std::max(kernel.twin.shared_bytes, 0)), size_t(g.sharedBytes), 1});
  if (std::string e = reserve(n, sharedBytes); !e.empty())
    return e;
  int32_t where[3] = {int32_t(index % g.grid[0]), int32_t(index / g.grid[0] % g.grid[1]),
                      int32_t(index / (int64_t(g.grid[0]) * g.grid[1]))};
  Block b;
  b.kernel = &kernel;
  b.params = params;
  b.threads = n;
  for (int32_t t = 0; t < n; ++t) {
    Lane &lane = lanes_[size_t(t)];
    tcc_abi_emulated_thread &v = lane.view;
    v.thread[0] = t % bx;
    v.thread[1] = t / bx % by;
    v.thread[2] = t / (bx * by);
    for (int k = 0; k < 3; ++k) {
      v.block[k] = where[k];
      v.block_dim[k] = int32_t(g.block[k]);
      v.grid_dim[k] = int32_t(g.grid[k]);
    }
    v.shared = shared_;
    v.context = &lane;
    v.barrier = &barrier;
    v.shuffle = &shuffle;
    lane.block = &b;
    lane.lane = t % kWarpSize;
    lane.warp = t / kWarpSize;
    lane.shuffles = 0;
    lane.state = Lane::Running;
  }
  if (kernel.twin.synchronizes)
    return runOnFibers(b, where);
  for (int32_t t = 0; t < n; ++t)
    kernel.twin.fn(&lanes_[size_t(t)].view, params);
  return b.misuse;
}

thread_local Worker worker;

/// The blocks of one launch, over the calling thread's parallel threads.
struct Launch {
  const EmulatedKernel *kernel = nullptr;
  Geometry geometry{};
  void **params = nullptr;
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::string error;

  static void runBlock(void *self, int64_t index) {
    auto &l = *static_cast<Launch *>(self);
    if (l.failed.load(std::memory_order_relaxed))
      return;
    std::string error;
    try {
      error = worker.run(*l.kernel, l.geometry, l.params, index);
    } catch (const std::exception &e) {
      error = std::string("kernel '") + l.kernel->name + "': " + e.what();
    }
    if (error.empty())
      return;
    std::lock_guard<std::mutex> lock(l.mutex);
    if (l.error.empty())
      l.error = std::move(error);
    l.failed.store(true);
  }
};

CUresult runKernel(const EmulatedKernel &kernel, const Geometry &g, void **params) {
  Launch launch;
  launch.kernel = &kernel;
  launch.geometry = g;
  launch.params = params;
  int64_t blocks = int64_t(g.grid[0]) * g.grid[1] * g.grid[2];
  int threads = parallelThreads();
  if (blocks > 1 && threads > 1) {
    parallelFor(0, blocks, threads, &Launch::runBlock, &launch);
  } else {
    for (int64_t i = 0; i < blocks && !launch.failed.load(); ++i)
      Launch::runBlock(&launch, i);
  }
  if (launch.failed.load())
    return failure(CUDA_ERROR_LAUNCH_FAILED, launch.error);
  return CUDA_SUCCESS;
}

CUresult launchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                      unsigned bz, unsigned sharedBytes, CUstream stream, void **params,
                      void **extra) {
  auto *kernel = reinterpret_cast<const EmulatedKernel *>(f);
  if (!kernel || !kernel->twin.fn)
    return failure(CUDA_ERROR_INVALID_HANDLE, "no emulated kernel");
  if (extra)
    return failure(CUDA_ERROR_NOT_SUPPORTED, "kernel parameters through EXTRA");
  // The limits of every CUDA device since sm_30.
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || gx > 0x7fffffffu ||
      gy > 65535 || gz > 65535 || bx > 1024 || by > 1024 || bz > 64 ||
      uint64_t(bx) * by * bz > 1024)
    return failure(CUDA_ERROR_INVALID_VALUE,
                   "kernel '" + kernel->name + "': grid " + std::to_string(gx) + "x" +
                       std::to_string(gy) + "x" + std::to_string(gz) + ", block " +
                       std::to_string(bx) + "x" + std::to_string(by) + "x" + std::to_string(bz) +
                       " exceeds a CUDA device's limits");
  Geometry g{{gx, gy, gz}, {bx, by, bz}, sharedBytes};
  Stream *s = streamOf(stream);
  if (!s || !s->capture)
    return runKernel(*kernel, g, params);
  // Captured: the parameters' values now, as cuLaunchKernel copies them.
  // Every parameter of a lowered kernel is a scalar or a pointer, of at most
  // 8 bytes; 8 are kept of each.
  std::vector<uint64_t> values(size_t(kernel->numParams), 0);
  for (size_t i = 0; i < values.size(); ++i)
    std::memcpy(&values[i], params[i], sizeof(uint64_t));
  s->capture->nodes.push_back([kernel, g, values]() {
    std::vector<void *> pointers(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      pointers[i] = const_cast<uint64_t *>(&values[i]);
    return runKernel(*kernel, g, pointers.data());
  });
  return CUDA_SUCCESS;
}

Driver makeDriver() {
  Driver d;
  d.cuInit = &init;
  d.cuDriverGetVersion = &driverGetVersion;
  d.cuGetErrorName = &getErrorName;
  d.cuGetErrorString = &getErrorString;
  d.cuDeviceGetCount = &deviceGetCount;
  d.cuDeviceGet = &deviceGet;
  d.cuDeviceGetName = &deviceGetName;
  d.cuDeviceGetPCIBusId = &deviceGetPCIBusId;
  d.cuDeviceGetAttribute = &deviceGetAttribute;
  d.cuDevicePrimaryCtxRetain = &primaryCtxRetain;
  d.cuDevicePrimaryCtxRelease = &primaryCtxRelease;
  d.cuCtxSetCurrent = &ctxSetCurrent;
  d.cuStreamCreate = &streamCreate;
  d.cuStreamDestroy = &streamDestroy;
  d.cuStreamSynchronize = &streamSynchronize;
  d.cuStreamWaitEvent = &streamWaitEvent;
  d.cuMemAlloc = &memAlloc;
  d.cuMemFree = &memFree;
  d.cuMemsetD8 = &memsetD8;
  d.cuMemcpyHtoD = &memcpyHtoD;
  d.cuMemcpyDtoH = &memcpyDtoH;
  d.cuMemcpyHtoDAsync = &memcpyHtoDAsync;
  d.cuMemcpyDtoHAsync = &memcpyDtoHAsync;
  d.cuMemcpyDtoDAsync = &memcpyDtoDAsync;
  d.cuMemHostRegister = &memHostRegister;
  d.cuMemHostUnregister = &memHostUnregister;
  d.cuModuleLoadData = &moduleLoadData;
  d.cuModuleUnload = &moduleUnload;
  d.cuModuleGetFunction = &moduleGetFunction;
  d.cuLaunchKernel = &launchKernel;
  d.cuStreamBeginCapture = &streamBeginCapture;
  d.cuStreamEndCapture = &streamEndCapture;
  d.cuGraphInstantiateWithFlags = &graphInstantiate;
  d.cuGraphLaunch = &graphLaunch;
  d.cuGraphDestroy = &graphDestroy;
  d.cuGraphExecDestroy = &graphExecDestroy;
  d.cuEventCreate = &eventCreate;
  d.cuEventRecord = &eventRecord;
  d.cuEventSynchronize = &eventSynchronize;
  d.cuEventQuery = &eventQuery;
  d.cuEventDestroy = &eventDestroy;
  d.cuEventElapsedTime = &eventElapsedTime;
  d.version = CUDA_VERSION;
  d.deviceCount = 1;
  return d;
}

} // namespace

const Driver &emulatedDriver() {
  static const Driver table = makeDriver();
  return table;
}

void emulateComputeCapability(int cc) {
  int now = capability.load();
  while (cc > now && !capability.compare_exchange_weak(now, cc)) {
  }
}

CUresult emulatedHostWork(CUstream stream, std::function<void()> work) {
  if (!stream)
    return CUDA_ERROR_INVALID_HANDLE;
  return enqueue(stream, [work = std::move(work)] {
    work();
    return CUDA_SUCCESS;
  });
}

} // namespace tcc::rt::cuda
