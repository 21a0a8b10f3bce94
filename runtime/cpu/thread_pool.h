//===- thread_pool.h - the process-wide CPU thread pool ---------------------===//
//
// Generated code parallelizes its outer loops through the parallel_for the
// runtime passes in (abi.h); this pool runs them. There is one pool per
// process, shared by every session, with one worker fewer than the CPUs the
// process may use: the caller of parallelFor works too, so one loop occupies
// at most every CPU and two sessions running at once share the workers
// instead of oversubscribing the cores. tcc.h states the policy for users.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CPU_THREAD_POOL_H
#define TCC_RUNTIME_CPU_THREAD_POOL_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tcc::rt {

/// The number of CPUs this process may run on (its affinity mask), at least 1.
int availableCpus();

class ThreadPool {
public:
  /// Runs the iterations [begin, end) of a loop; called once per chunk.
  using RangeBody = void (*)(void *context, int64_t begin, int64_t end);

  /// The process-wide pool, started by the first caller with
  /// availableCpus() - 1 workers; it stops when the last reference goes.
  /// Throws Error(TCC_ERROR_OUT_OF_MEMORY) if a thread cannot be started.
  static std::shared_ptr<ThreadPool> shared();

  /// A pool of its own (tests); numWorkers may be 0 (all work inline).
  explicit ThreadPool(int numWorkers);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int numWorkers() const { return int(workers_.size()); }

  /// Calls body(context, b, e) over disjoint chunks [b, e) that cover
  /// [begin, end), on the calling thread and at most maxThreads - 1 workers,
  /// and returns when all chunks have finished. The caller always makes
  /// progress on its own, so bodies may call parallelFor again (nested loops
  /// never deadlock). BODY must not throw.
  void parallelFor(int64_t begin, int64_t end, int maxThreads, RangeBody body,
                   void *context) noexcept;

private:
  struct Job;
  void workerLoop();
  static void runChunks(Job &job) noexcept;

  std::mutex mutex_;
  std::condition_variable workCv_; // a job was queued, or stopping_
  std::condition_variable doneCv_; // a helper left a job
  std::deque<Job *> queue_;        // jobs that want more helpers
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_CPU_THREAD_POOL_H
