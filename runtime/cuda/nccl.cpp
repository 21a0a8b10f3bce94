//===- nccl.cpp - a device artifact's collectives on NCCL ------------------===//

#include "runtime/cuda/nccl.h"

#include "runtime/cuda/libraries.h"
#include "runtime/dtype.h"
#include "runtime/error.h"

// NCCL's header for its types and signatures only: the library is loaded
// with dlopen.
#include <nccl.h>

#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

namespace tcc::rt::cuda {

#define TCC_NCCL_FUNCTIONS(X)                                                  \
  X(ncclGetVersion)                                                            \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRank)                                                          \
  X(ncclCommDestroy)                                                           \
  X(ncclCommAbort)                                                             \
  X(ncclCommGetAsyncError)                                                     \
  X(ncclAllReduce)                                                             \
  X(ncclGroupStart)                                                            \
  X(ncclGroupEnd)                                                              \
  X(ncclGetErrorString)

struct NcclCollectives::Api {
#define TCC_NCCL_POINTER(name) decltype(&::name) name = nullptr;
  TCC_NCCL_FUNCTIONS(TCC_NCCL_POINTER)
#undef TCC_NCCL_POINTER
  std::string path;
};

namespace {

/// Loads NCCL once per process (NCCL 2.10 or later: ncclAvg).
const NcclCollectives::Api *loadNccl() {
  static std::mutex mutex;
  static NcclCollectives::Api *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded)
    return loaded;
  auto api = std::make_unique<NcclCollectives::Api>();
  void *handle = openLibrary({"libnccl.so.2"}, "NCCL", RTLD_NOW | RTLD_LOCAL, &api->path);
#define TCC_NCCL_RESOLVE(name)                                                 \
  api->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));       \
  if (!api->name)                                                              \
    fail(TCC_ERROR_UNSUPPORTED, api->path + " has no " #name);
  TCC_NCCL_FUNCTIONS(TCC_NCCL_RESOLVE)
#undef TCC_NCCL_RESOLVE
  int version = 0;
  api->ncclGetVersion(&version);
  if (version < 21000)
    fail(TCC_ERROR_UNSUPPORTED, api->path + " is NCCL " + std::to_string(version) +
                                    "; tcc needs 2.10 or later (ncclAvg)");
  loaded = api.release();
  return loaded;
}

ncclDataType_t ncclType(int32_t dtype) {
  switch (dtype) {
  case TCC_DTYPE_F16:
    return ncclFloat16;
  case TCC_DTYPE_BF16:
    return ncclBfloat16;
  default:
    return ncclFloat32;
  }
}

} // namespace

NcclCollectives::NcclCollectives(const tcc_abi_collective *table, int32_t count,
                                 Communicator &communicator, Context &context,
                                 const std::string &what)
    : table_(table), count_(count), communicator_(communicator), context_(context),
      what_(what) {
  api_ = loadNccl();
  const Driver &d = context_.driver();
  context_.makeCurrent();
  // Rank 0's id reaches every rank over MPI; then all join at once.
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  if (communicator_.rank() == 0) {
    ncclResult_t r = api_->ncclGetUniqueId(&id);
    if (r != ncclSuccess)
      fail(TCC_ERROR_UNSUPPORTED,
           what_ + ": ncclGetUniqueId failed: " + api_->ncclGetErrorString(r));
  }
  communicator_.broadcast(&id, sizeof id, 0, "broadcast of NCCL's unique id");
  ncclComm_t comm = nullptr;
  ncclResult_t r =
      api_->ncclCommInitRank(&comm, communicator_.size(), id, communicator_.rank());
  if (r != ncclSuccess)
    fail(TCC_ERROR_UNSUPPORTED, what_ + ": rank " + std::to_string(communicator_.rank()) +
                                    ": ncclCommInitRank failed: " + api_->ncclGetErrorString(r));
  comm_ = comm;
  check(d.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate",
        what_ + ": the collectives' stream");
  ready_.assign(size_t(count), nullptr);
  done_.assign(size_t(count), nullptr);
  for (int32_t i = 0; i < count; ++i) {
    if (table_[i].kind != TCC_COLLECTIVE_ALL_REDUCE_START)
      continue;
    check(d.cuEventCreate(&ready_[size_t(i)], CU_EVENT_DISABLE_TIMING), "cuEventCreate", what_);
    check(d.cuEventCreate(&done_[size_t(i)], CU_EVENT_DISABLE_TIMING), "cuEventCreate", what_);
  }
}

NcclCollectives::~NcclCollectives() {
  const Driver &d = context_.driver();
  context_.makeCurrent();
  if (stream_)
    d.cuStreamSynchronize(stream_);
  for (CUevent e : ready_)
    if (e)
      d.cuEventDestroy(e);
  for (CUevent e : done_)
    if (e)
      d.cuEventDestroy(e);
  if (stream_)
    d.cuStreamDestroy(stream_);
  if (comm_)
    api_->ncclCommDestroy(static_cast<ncclComm_t>(comm_));
}

void NcclCollectives::run(void *self, int32_t index, void *const *operands) {
  auto *n = static_cast<NcclCollectives *>(self);
  if (!n->error_.empty())
    return;
  if (index < 0 || index >= n->count_) {
    n->error_ = n->what_ + ": collective #" + std::to_string(index) + " is outside the table";
    return;
  }
  const Driver &d = n->context_.driver();
  const tcc_abi_collective &c = n->table_[index];
  CUstream compute = n->context_.stream();
  auto failed = [&](const char *call, const std::string &why) {
    n->error_ = n->what_ + ": collective #" + std::to_string(index) + ": " + call + " failed: " +
                why;
  };
  if (c.kind == TCC_COLLECTIVE_WAIT) {
    // The rest of the step waits for the bucket, on the device.
    CUresult r = d.cuStreamWaitEvent(compute, n->done_[size_t(c.params[0])], 0);
    if (r != CUDA_SUCCESS)
      failed("cuStreamWaitEvent", errorString(r));
    return;
  }
  // START: the collectives' stream waits for the gradients, then reduces.
  CUresult r = d.cuEventRecord(n->ready_[size_t(index)], compute);
  if (r == CUDA_SUCCESS)
    r = d.cuStreamWaitEvent(n->stream_, n->ready_[size_t(index)], 0);
  if (r != CUDA_SUCCESS)
    return failed("cuEventRecord / cuStreamWaitEvent", errorString(r));
  auto comm = static_cast<ncclComm_t>(n->comm_);
  ncclResult_t nr = n->api_->ncclGroupStart();
  for (int32_t k = 0; k < c.num_operands && nr == ncclSuccess; ++k)
    nr = n->api_->ncclAllReduce(operands[k], operands[k], size_t(c.params[k + 1]),
                                ncclType(c.dtype), ncclAvg, comm,
                                reinterpret_cast<cudaStream_t>(n->stream_));
  ncclResult_t end = n->api_->ncclGroupEnd();
  if (nr == ncclSuccess)
    nr = end;
  if (nr != ncclSuccess)
    return failed("ncclAllReduce", n->api_->ncclGetErrorString(nr));
  r = d.cuEventRecord(n->done_[size_t(index)], n->stream_);
  if (r != CUDA_SUCCESS)
    failed("cuEventRecord", errorString(r));
}

std::string NcclCollectives::takeError() {
  std::string e = std::move(error_);
  error_.clear();
  return e;
}

void NcclCollectives::waitForRun(CUevent done, const std::string &what) {
  const Driver &d = context_.driver();
  auto comm = static_cast<ncclComm_t>(comm_);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(communicator_.timeout());
  std::string rank = "rank " + std::to_string(communicator_.rank()) + " of " +
                     std::to_string(communicator_.size());
  for (;;) {
    CUresult r = d.cuEventQuery(done);
    if (r == CUDA_SUCCESS)
      return;
    if (r != CUDA_ERROR_NOT_READY)
      check(r, "cuEventQuery", what);
    ncclResult_t async = ncclSuccess;
    api_->ncclCommGetAsyncError(comm, &async);
    if (async != ncclSuccess && async != ncclInProgress) {
      api_->ncclCommAbort(comm);
      comm_ = nullptr;
      fail(TCC_ERROR_RUNTIME, what + ": " + rank + ": NCCL failed: " +
                                  api_->ncclGetErrorString(async));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      api_->ncclCommAbort(comm);
      comm_ = nullptr;
      fail(TCC_ERROR_RUNTIME,
           what + ": " + rank + ": the step's all-reduces did not complete within " +
               std::to_string(int(communicator_.timeout())) +
               " s (another rank died or hangs; --collective-timeout sets the limit)");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

} // namespace tcc::rt::cuda
