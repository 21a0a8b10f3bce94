//===- parallel.cpp - the one CPU thread pool: LLVM's OpenMP runtime ------===//

#include "runtime/cpu/parallel.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <omp.h>
#include <sched.h>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

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

namespace {
/// Whether the libomp registration file PATH holds what libomp writes
/// after sizing it ("<flag address>-<flag value>-<library>"): a process
/// that died in between leaves NULs, which libomp cannot parse and takes
/// for another, live OpenMP runtime (fatal "OMP: Error #15: Initializing
/// libomp.so.5, but found unknown library already initialized").
bool registrationWritten(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return true; // unreadable: leave it to libomp
  char head[64] = {};
  ssize_t got = ::read(fd, head, sizeof head - 1);
  ::close(fd);
  return got > 0 && std::strchr(head, '-') != nullptr;
}
} // namespace

bool removeStaleOpenMPRegistration() {
  // libomp's name (kmp_runtime.cpp, __kmp_register_library_startup).
  std::string name = "__KMP_REGISTERED_LIB_" + std::to_string(int(::getpid())) + "_" +
                     std::to_string(int(::getuid()));
  bool removed = false;
  for (const char *dir : {"/dev/shm/", "/tmp/"}) {
    std::string path = dir + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        (st.st_size == 0 || !registrationWritten(path)) && ::unlink(path.c_str()) == 0)
      removed = true;
  }
  return removed;
}

namespace {
// At load, before anything of this library starts a parallel region.
[[maybe_unused]] const bool staleRegistrationRemoved = removeStaleOpenMPRegistration();
} // namespace

} // namespace tcc::rt
