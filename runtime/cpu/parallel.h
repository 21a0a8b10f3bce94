//===- parallel.h - the one CPU thread pool: LLVM's OpenMP runtime --------===//
//
// Generated code runs its parallel loops as OpenMP work-sharing loops
// (__kmpc_fork_call), and oneDNN, built by Debian for GNU OpenMP, calls
// GOMP_parallel. LLVM's libomp implements both entry points, and the runtime
// binds the libraries it loads to libomp rather than to the libgomp they
// name (openmp_binding.h), so every parallel region that tcc starts runs on
// one libomp team: one pool, never two competing for the cores.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CPU_PARALLEL_H
#define TCC_RUNTIME_CPU_PARALLEL_H

#include <cstdint>
#include <string>

namespace tcc::rt {

/// The number of CPUs this process may run on (its affinity mask), at least 1.
int availableCpus();

/// Sets the thread count of the parallel regions that the calling thread
/// starts from now on (generated loops and library calls alike).
void setParallelThreads(int numThreads);
/// The thread count setParallelThreads last set on the calling thread.
int parallelThreads();

/// Sets the calling thread's thread count to NUMTHREADS (0: leaves it) for
/// the scope's lifetime, then restores what the caller had: other OpenMP
/// code on the thread (torch, when it runs on this libomp) keeps its own.
class ParallelThreadsScope {
public:
  explicit ParallelThreadsScope(int numThreads) : saved_(numThreads > 0 ? parallelThreads() : 0) {
    if (numThreads > 0)
      setParallelThreads(numThreads);
  }
  ~ParallelThreadsScope() {
    if (saved_)
      setParallelThreads(saved_);
  }
  ParallelThreadsScope(const ParallelThreadsScope &) = delete;
  ParallelThreadsScope &operator=(const ParallelThreadsScope &) = delete;

private:
  int saved_;
};

/// Runs body(context, i) for i in [begin, end) on at most maxThreads
/// threads (static schedule), returning when all have finished. BODY must
/// not throw.
void parallelFor(int64_t begin, int64_t end, int maxThreads,
                 void (*body)(void *context, int64_t i), void *context) noexcept;

/// An address inside the libomp this runtime calls (its
/// omp_set_num_threads): openmp_binding.h binds libraries to that object.
const void *openMPRuntimeAddress();

/// Removes a libomp registration file of this process's pid
/// (/dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid>, or /tmp's when shared memory
/// is unavailable) left by a process that died between creating and sizing
/// it, or between sizing and writing it. libomp maps such a file when it
/// starts in a process that reuses the pid: reading an empty one is a
/// SIGBUS, and a sized one of NULs is fatal ("OMP: Error #15 ... unknown
/// library already initialized"). A file of a live libomp is never empty
/// and holds its flag's address, so nothing else is touched. The runtime
/// library calls it when it loads, before any parallel region; returns
/// whether a file was removed.
bool removeStaleOpenMPRegistration();

} // namespace tcc::rt

#endif // TCC_RUNTIME_CPU_PARALLEL_H
