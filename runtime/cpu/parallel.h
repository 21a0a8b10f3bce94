//===- parallel.h - the one CPU thread pool: LLVM's OpenMP runtime --------===//
//
// Generated code runs its parallel loops as OpenMP work-sharing loops
// (__kmpc_fork_call), and oneDNN, built by Debian for GNU OpenMP, calls
// GOMP_parallel. LLVM's libomp implements both entry points, and the runtime
// links it ahead of oneDNN's libgomp, so every parallel region in the process
// runs on one libomp team: one pool, never two competing for the cores.
// checkSingleOpenMP() verifies this at session creation.
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

/// Runs body(context, i) for i in [begin, end) on at most maxThreads
/// threads (static schedule), returning when all have finished. BODY must
/// not throw.
void parallelFor(int64_t begin, int64_t end, int maxThreads,
                 void (*body)(void *context, int64_t i), void *context) noexcept;

/// Makes the libomp this runtime uses visible to libraries loaded later
/// (dlopen RTLD_GLOBAL), so that their GNU OpenMP references bind to it even
/// when the runtime itself was loaded with RTLD_LOCAL.
void exposeOpenMPGlobally();

/// "" when the OpenMP entry points of generated code (__kmpc_*) and of GNU
/// OpenMP (GOMP_*, omp_*) resolve to the same library in this process;
/// otherwise a message naming the two libraries.
std::string checkSingleOpenMP();

} // namespace tcc::rt

#endif // TCC_RUNTIME_CPU_PARALLEL_H
