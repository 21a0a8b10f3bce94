//===- parallel.cpp - the one CPU thread pool: LLVM's OpenMP runtime ------===//

#include "runtime/cpu/parallel.h"

#include <algorithm>
#include <cerrno>
#include <dlfcn.h>
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

namespace {

/// The file of the library that defines SYMBOL in the global scope, or "".
std::string definingLibrary(const char *symbol) {
  void *address = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info;
  if (!address || !dladdr(address, &info) || !info.dli_fname)
    return "";
  return info.dli_fname;
}

} // namespace

void exposeOpenMPGlobally() {
  Dl_info self;
  if (dladdr(reinterpret_cast<void *>(&omp_set_num_threads), &self) && self.dli_fname)
    dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL); // a reference kept for good
}

std::string checkSingleOpenMP() {
  // This library calls libomp directly, so its own references are the
  // reference point; a GOMP_* symbol bound elsewhere means a second runtime.
  Dl_info self;
  if (!dladdr(reinterpret_cast<void *>(&omp_set_num_threads), &self) || !self.dli_fname)
    return "";
  std::string omp = self.dli_fname;
  for (const char *symbol : {"GOMP_parallel", "omp_get_max_threads"}) {
    std::string lib = definingLibrary(symbol);
    if (!lib.empty() && lib != omp)
      return std::string(symbol) + " resolves to " + lib + " but tcc's OpenMP runtime is " + omp +
             ": two OpenMP runtimes would compete for the cores (load libtcc_runtime before "
             "any library that links libgomp)";
  }
  return "";
}

} // namespace tcc::rt
