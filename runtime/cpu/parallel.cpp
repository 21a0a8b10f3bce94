//===- parallel.cpp - the one CPU thread pool: LLVM's OpenMP runtime ------===//

#include "runtime/cpu/parallel.h"

#include <algorithm>
#include <cerrno>
#include <omp.h>
#include <sched.h>
#include <thread>

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

void setParallelThreads(int numThreads) { omp_set_num_threads(std::max(numThreads, 1)); }
int parallelThreads() { return omp_get_max_threads(); }

void parallelFor(int64_t begin, int64_t end, int maxThreads,
                 void (*body)(void *context, int64_t i), void *context) noexcept {
  if (end <= begin)
    return;
  int threads = int(std::min<int64_t>(std::max(maxThreads, 1), end - begin));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = begin; i < end; ++i)
    body(context, i);
}

const void *openMPRuntimeAddress() {
  return reinterpret_cast<const void *>(&omp_set_num_threads);
}

} // namespace tcc::rt
