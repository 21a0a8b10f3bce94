//===- communicator.cpp - the ranks of a data-parallel job, over MPI ------===//

#include "runtime/dist/communicator.h"

#include "runtime/error.h"

// Open MPI's header, for the types and signatures only: nothing here links
// libmpi. Its predefined handles (MPI_COMM_WORLD, MPI_FLOAT, ...) are
// addresses of the library's globals, which are looked up with dlsym.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace tcc::rt {

#define TCC_MPI_FUNCTIONS(X)                                                   \
  X(MPI_Initialized)                                                           \
  X(MPI_Finalized)                                                             \
  X(MPI_Init_thread)                                                           \
  X(MPI_Finalize)                                                              \
  X(MPI_Comm_rank)                                                             \
  X(MPI_Comm_size)                                                             \
  X(MPI_Iallreduce)                                                            \
  X(MPI_Iallgather)                                                            \
  X(MPI_Ibcast)                                                                \
  X(MPI_Ireduce_scatter)                                                       \
  X(MPI_Iallgatherv)                                                           \
  X(MPI_Igatherv)                                                              \
  X(MPI_Test)                                                                  \
  X(MPI_Abort)                                                                 \
  X(MPI_Error_string)

struct Communicator::Api {
#define TCC_MPI_POINTER(name) decltype(&::name) name = nullptr;
  TCC_MPI_FUNCTIONS(TCC_MPI_POINTER)
#undef TCC_MPI_POINTER
  MPI_Comm world = nullptr;
  MPI_Datatype f32 = nullptr, f64 = nullptr, byte = nullptr;
  MPI_Op sum = nullptr;
  std::string file;

  std::string describe(int code) const {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
      return "MPI error " + std::to_string(code);
    return std::string(text, size_t(length));
  }
};

namespace {

/// One operation in flight: MPI_Test writes the request in place.
struct Pending {
  MPI_Request request = nullptr;
  bool done = false;
};

int envInt(const char *name, int fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char *end = nullptr;
  long n = std::strtol(v, &end, 10);
  return *end || n < 0 ? fallback : int(n);
}

} // namespace

int localRankFromEnvironment() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"})
    if (int rank = envInt(name, -1); rank >= 0)
      return rank;
  return -1;
}

namespace {

/// Whether a launcher started this process as one of several.
bool launchedAsJob() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if (envInt(name, 1) > 1)
      return true;
  return false;
}

/// Loads Open MPI once per process. RTLD_GLOBAL: Open MPI's own plugins
/// (its mca components, dlopened by libmpi) resolve libmpi's symbols
/// through the global scope.
const Communicator::Api *loadMpi() {
  static std::mutex mutex;
  static Communicator::Api *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded)
    return loaded;
  const char *env = std::getenv("TCC_MPI_LIBRARY");
  std::string file = env && *env ? env : "libmpi.so.40";
  dlerror();
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char *why = dlerror();
    fail(TCC_ERROR_UNSUPPORTED, "cannot load MPI (" + file + "): " +
                                    (why ? why : "dlopen failed") +
                                    " (Debian: apt-get install openmpi-bin)");
  }
  auto api = std::make_unique<Communicator::Api>();
  api->file = file;
#define TCC_MPI_RESOLVE(name)                                                  \
  api->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));       \
  if (!api->name)                                                              \
    fail(TCC_ERROR_UNSUPPORTED, file + " has no " #name "; tcc needs Open MPI");
  TCC_MPI_FUNCTIONS(TCC_MPI_RESOLVE)
#undef TCC_MPI_RESOLVE
  auto global = [&](const char *name) {
    void *p = dlsym(handle, name);
    if (!p)
      fail(TCC_ERROR_UNSUPPORTED, file + " has no " + name + "; tcc needs Open MPI");
    return p;
  };
  api->world = static_cast<MPI_Comm>(global("ompi_mpi_comm_world"));
  api->f32 = static_cast<MPI_Datatype>(global("ompi_mpi_float"));
  api->f64 = static_cast<MPI_Datatype>(global("ompi_mpi_double"));
  api->byte = static_cast<MPI_Datatype>(global("ompi_mpi_byte"));
  api->sum = static_cast<MPI_Op>(global("ompi_mpi_op_sum"));
  loaded = api.release();
  return loaded;
}

} // namespace

std::unique_ptr<Communicator> Communicator::single(double timeout) {
  std::unique_ptr<Communicator> c(new Communicator());
  c->timeout_ = timeout;
  return c;
}

std::unique_ptr<Communicator> Communicator::fromEnvironment(double timeout) {
  std::unique_ptr<Communicator> c = single(timeout);
  if (!launchedAsJob())
    return c;
  const Api *api = loadMpi();
  int initialized = 0, finalized = 0;
  api->MPI_Initialized(&initialized);
  api->MPI_Finalized(&finalized);
  if (finalized)
    fail(TCC_ERROR_INVALID_STATE, "MPI was finalized already in this process");
  if (!initialized) {
    // Serialized: the trainer calls from one thread at a time, though not
    // always the same one (an embedding application's).
    int provided = 0;
    int code = api->MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (code != MPI_SUCCESS)
      fail(TCC_ERROR_UNSUPPORTED, "MPI_Init_thread failed: " + api->describe(code));
    if (provided < MPI_THREAD_SERIALIZED)
      fail(TCC_ERROR_UNSUPPORTED,
           api->file + " offers no MPI_THREAD_SERIALIZED (level " + std::to_string(provided) + ")");
    c->finalize_ = true;
  }
  c->api_ = api;
  api->MPI_Comm_rank(api->world, &c->rank_);
  api->MPI_Comm_size(api->world, &c->size_);
  c->localRank_ = std::max(localRankFromEnvironment(), 0);
  return c;
}

Communicator::~Communicator() {
  for (Request r : pending_)
    delete static_cast<Pending *>(r);
  if (api_ && finalize_)
    api_->MPI_Finalize();
}

Communicator::Request Communicator::startSum(void *data, int64_t count, bool isDouble) {
  if (!api_)
    return nullptr;
  // MPI counts are ints.
  if (count > INT32_MAX)
    fail(TCC_ERROR_UNSUPPORTED, "an all-reduce of " + std::to_string(count) +
                                    " elements (more than 2^31 - 1 in one buffer)");
  auto *p = new Pending();
  int code = api_->MPI_Iallreduce(MPI_IN_PLACE, data, int(count), isDouble ? api_->f64 : api_->f32,
                                  api_->sum, api_->world, &p->request);
  if (code != MPI_SUCCESS) {
    delete p;
    fail(TCC_ERROR_RUNTIME, who() + ": MPI_Iallreduce failed: " + api_->describe(code));
  }
  pending_.push_back(p);
  return p;
}

void Communicator::wait(Request request, const std::string &what) {
  if (!api_ || !request)
    return;
  auto *mine = static_cast<Pending *>(request);
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + std::chrono::duration<double>(timeout_);
  int spins = 0;
  while (!mine->done) {
    // Progress every operation in flight, the older ones first.
    for (Request r : pending_) {
      auto *p = static_cast<Pending *>(r);
      if (p->done)
        continue;
      int flag = 0;
      int code = api_->MPI_Test(&p->request, &flag, MPI_STATUS_IGNORE);
      if (code != MPI_SUCCESS)
        fail(TCC_ERROR_RUNTIME, who() + ": " + what + ": MPI_Test failed: " + api_->describe(code));
      p->done = flag != 0;
    }
    if (mine->done)
      break;
    if (std::chrono::steady_clock::now() > deadline)
      fail(TCC_ERROR_RUNTIME,
           who() + ": " + what + " did not complete within " + std::to_string(int(timeout_)) +
               " s (another rank died or hangs; --collective-timeout sets the limit)");
    // Spin briefly (a reduction of the last bucket is usually microseconds
    // away), then yield the core to the other ranks on this machine.
    if (++spins > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  pending_.erase(std::remove(pending_.begin(), pending_.end(), request), pending_.end());
  delete mine;
}

namespace {

/// The request of P once CODE says MPI started it; otherwise P is freed and
/// the error names CALL.
Communicator::Request started(Pending *p, int code, const char *call, const std::string &who,
                              const Communicator::Api &api) {
  if (code != MPI_SUCCESS) {
    delete p;
    fail(TCC_ERROR_RUNTIME, who + ": " + call + " failed: " + api.describe(code));
  }
  return p;
}

/// FNV-1a, 64 bits: what differing() compares before any text travels (an
/// accidental mismatch is what it finds, not a forged one).
uint64_t digest(const std::string &text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

} // namespace

Communicator::Request Communicator::startReduceScatter(const float *send, float *recv,
                                                       const std::vector<int> &counts) {
  if (!api_)
    return nullptr;
  auto *p = new Pending();
  int code = api_->MPI_Ireduce_scatter(send, recv, counts.data(), api_->f32, api_->sum,
                                       api_->world, &p->request);
  Request r = started(p, code, "MPI_Ireduce_scatter", who(), *api_);
  pending_.push_back(r);
  return r;
}

Communicator::Request Communicator::startAllGather(float *data, const std::vector<int> &counts,
                                                   const std::vector<int> &displs) {
  if (!api_)
    return nullptr;
  auto *p = new Pending();
  // In place: the send arguments are ignored.
  int code = api_->MPI_Iallgatherv(MPI_IN_PLACE, 0, api_->f32, data, counts.data(),
                                   displs.data(), api_->f32, api_->world, &p->request);
  Request r = started(p, code, "MPI_Iallgatherv", who(), *api_);
  pending_.push_back(r);
  return r;
}

void Communicator::gather(const float *send, float *recv, const std::vector<int> &counts,
                          const std::vector<int> &displs, int root, const std::string &what) {
  if (!api_)
    return;
  auto *p = new Pending();
  int code = api_->MPI_Igatherv(send, counts[size_t(rank_)], api_->f32, recv, counts.data(),
                                displs.data(), api_->f32, root, api_->world, &p->request);
  Request r = started(p, code, "MPI_Igatherv", who(), *api_);
  pending_.push_back(r);
  wait(r, what);
}

void Communicator::sum(double *values, int64_t count, const std::string &what) {
  if (!api_)
    return;
  wait(startSum(values, count, true), what);
}

void Communicator::broadcast(void *data, size_t bytes, int root, const std::string &what) {
  if (!api_)
    return;
  // In pieces of at most 1 GiB: MPI counts are ints.
  constexpr size_t kPiece = size_t(1) << 30;
  for (size_t offset = 0; offset < bytes; offset += kPiece) {
    size_t n = std::min(kPiece, bytes - offset);
    auto *p = new Pending();
    int code = api_->MPI_Ibcast(static_cast<uint8_t *>(data) + offset, int(n), api_->byte, root,
                                api_->world, &p->request);
    if (code != MPI_SUCCESS) {
      delete p;
      fail(TCC_ERROR_RUNTIME, who() + ": " + what + ": MPI_Ibcast failed: " + api_->describe(code));
    }
    pending_.push_back(p);
    wait(p, what);
  }
}

std::vector<std::string> Communicator::differing(const std::string &text, const std::string &what) {
  if (!api_)
    return {};
  if (text.size() > size_t(INT32_MAX))
    fail(TCC_ERROR_UNSUPPORTED, who() + ": " + what + ": " + std::to_string(text.size()) +
                                    " bytes to compare (more than 2^31 - 1)");
  // Every rank's digest and length, in rank order.
  const uint64_t mine[2] = {digest(text), uint64_t(text.size())};
  std::vector<uint64_t> all(2 * size_t(size_));
  auto *p = new Pending();
  int code = api_->MPI_Iallgather(mine, int(sizeof mine), api_->byte, all.data(), int(sizeof mine),
                                  api_->byte, api_->world, &p->request);
  Request r = started(p, code, "MPI_Iallgather", who(), *api_);
  pending_.push_back(r);
  wait(r, what);
  bool same = true;
  for (size_t k = 1; k < size_t(size_); ++k)
    same = same && all[2 * k] == all[0] && all[2 * k + 1] == all[1];
  if (same)
    return {};
  // They differ: every rank gets every text, so all name the same difference.
  std::vector<int> counts(static_cast<size_t>(size_)), displs(static_cast<size_t>(size_));
  int64_t total = 0;
  for (size_t k = 0; k < size_t(size_); ++k) {
    counts[k] = int(all[2 * k + 1]);
    displs[k] = int(std::min<int64_t>(total, INT32_MAX));
    total += counts[k];
  }
  if (total > INT32_MAX)
    fail(TCC_ERROR_UNSUPPORTED, who() + ": " + what + ": " + std::to_string(total) +
                                    " bytes to gather (more than 2^31 - 1)");
  std::string gathered(size_t(total), '\0');
  p = new Pending();
  code = api_->MPI_Iallgatherv(text.data(), int(text.size()), api_->byte, gathered.data(),
                               counts.data(), displs.data(), api_->byte, api_->world, &p->request);
  r = started(p, code, "MPI_Iallgatherv", who(), *api_);
  pending_.push_back(r);
  wait(r, what);
  std::vector<std::string> texts;
  for (size_t k = 0; k < size_t(size_); ++k)
    texts.push_back(gathered.substr(size_t(displs[k]), size_t(counts[k])));
  return texts;
}

std::string Communicator::who() const {
  return "rank " + std::to_string(rank_) + " of " + std::to_string(size_);
}

void Communicator::abort(int code) {
  if (api_)
    api_->MPI_Abort(api_->world, code);
  std::_Exit(code);
}

} // namespace tcc::rt
