//===- thread_pool.cpp - the process-wide CPU thread pool -------------------===//
//
// A loop becomes a Job on the caller's stack: workers join it (up to the
// number the caller allows) and claim chunks with an atomic counter, the
// caller claims chunks too, and once every chunk is claimed the caller takes
// the job off the queue and waits for the helpers still finishing theirs.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/thread_pool.h"

#include "runtime/error.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <sched.h>
#include <system_error>

namespace tcc::rt {

int availableCpus() {
  // A dynamically sized set, so machines with more than CPU_SETSIZE CPUs work.
  for (int cpus = 1024; cpus <= (1 << 16); cpus *= 2) {
    cpu_set_t *set = CPU_ALLOC(cpus);
    if (!set)
      break;
    size_t size = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(size, set);
    if (sched_getaffinity(0, size, set) == 0) {
      int count = CPU_COUNT_S(size, set);
      CPU_FREE(set);
      return std::max(count, 1);
    }
    CPU_FREE(set);
    if (errno != EINVAL)
      break;
  }
  return std::max(int(std::thread::hardware_concurrency()), 1);
}

struct ThreadPool::Job {
  RangeBody body;
  void *context;
  int64_t begin;
  uint64_t count; // iterations
  uint64_t chunk; // iterations per claim
  std::atomic<uint64_t> next{0};
  // Guarded by the pool's mutex.
  int helpersWanted = 0;
  int helpersJoined = 0;
  int helpersActive = 0;
};

std::shared_ptr<ThreadPool> ThreadPool::shared() {
  static std::mutex mutex;
  static std::weak_ptr<ThreadPool> current;
  std::lock_guard<std::mutex> lock(mutex);
  if (std::shared_ptr<ThreadPool> pool = current.lock())
    return pool;
  auto pool = std::make_shared<ThreadPool>(availableCpus() - 1);
  current = pool;
  return pool;
}

ThreadPool::ThreadPool(int numWorkers) {
  try {
    workers_.reserve(size_t(std::max(numWorkers, 0)));
    for (int i = 0; i < numWorkers; ++i)
      workers_.emplace_back([this] { workerLoop(); });
  } catch (const std::system_error &e) {
    // Stop the workers that did start before reporting.
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    workCv_.notify_all();
    for (std::thread &t : workers_)
      t.join();
    fail(TCC_ERROR_OUT_OF_MEMORY, std::string("cannot start the thread pool: ") + e.what());
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  workCv_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ThreadPool::runChunks(Job &job) noexcept {
  while (true) {
    uint64_t start = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
    if (start >= job.count)
      return;
    uint64_t stop = std::min(start + job.chunk, job.count);
    job.body(job.context, int64_t(uint64_t(job.begin) + start),
             int64_t(uint64_t(job.begin) + stop));
  }
}

void ThreadPool::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    workCv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty())
      return; // stopping, and nothing left to help with
    Job *job = queue_.front();
    ++job->helpersJoined;
    ++job->helpersActive;
    if (job->helpersJoined >= job->helpersWanted)
      queue_.pop_front();
    lock.unlock();
    runChunks(*job);
    lock.lock();
    // The caller waits for this before its Job leaves scope.
    if (--job->helpersActive == 0)
      doneCv_.notify_all();
  }
}

void ThreadPool::parallelFor(int64_t begin, int64_t end, int maxThreads, RangeBody body,
                             void *context) noexcept {
  if (end <= begin)
    return;
  uint64_t count = uint64_t(end) - uint64_t(begin);
  int64_t helpers = std::min<int64_t>(maxThreads - 1, numWorkers());
  // Absurd ranges (where the claim counter could wrap) run inline.
  if (count - 1 < uint64_t(helpers))
    helpers = int64_t(count - 1);
  if (helpers <= 0 || count > (uint64_t(1) << 62)) {
    body(context, begin, end);
    return;
  }
  Job job;
  job.body = body;
  job.context = context;
  job.begin = begin;
  job.count = count;
  // About four chunks per thread: enough to even out uneven iterations,
  // few enough that claiming costs nothing.
  job.chunk = std::max<uint64_t>(1, count / (uint64_t(helpers + 1) * 4));
  job.helpersWanted = int(helpers);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(&job);
  }
  for (int64_t i = 0; i < helpers; ++i)
    workCv_.notify_one();
  runChunks(job);
  // Every chunk is claimed: stop more helpers from joining, then wait for
  // those still running theirs.
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = std::find(queue_.begin(), queue_.end(), &job);
  if (it != queue_.end())
    queue_.erase(it);
  doneCv_.wait(lock, [&job] { return job.helpersActive == 0; });
}

} // namespace tcc::rt
