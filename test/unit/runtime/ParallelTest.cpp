//===- ParallelTest.cpp - the OpenMP-based parallel_for and thread count --===//

#include "runtime/cpu/parallel.h"

#include <atomic>
#include <csignal>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <gtest/gtest.h>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace tcc::rt;

namespace {

/// Counts visits per index of [offset, offset + n).
struct Visits {
  int64_t offset = 0;
  std::vector<std::atomic<int>> counts;
  explicit Visits(size_t n) : counts(n) {}
  static void body(void *self, int64_t i) {
    auto *v = static_cast<Visits *>(self);
    v->counts[size_t(i - v->offset)].fetch_add(1);
  }
  bool allOnce() const {
    for (const std::atomic<int> &c : counts)
      if (c.load() != 1)
        return false;
    return true;
  }
};

TEST(ParallelTest, AvailableCpus) { EXPECT_GE(availableCpus(), 1); }

// Tests that every iteration runs exactly once, for many range sizes and
// thread limits, including negative bounds.
TEST(ParallelTest, EachIterationOnce) {
  for (int64_t n : {1, 2, 3, 7, 64, 1000, 100003}) {
    for (int threads : {1, 2, 4, 16}) {
      Visits v{static_cast<size_t>(n)};
      v.offset = -n / 2;
      parallelFor(v.offset, v.offset + n, threads, &Visits::body, &v);
      EXPECT_TRUE(v.allOnce()) << n << " iterations, " << threads << " threads";
    }
  }
}

// Tests that an empty or reversed range calls nothing.
TEST(ParallelTest, EmptyRange) {
  std::atomic<int> calls{0};
  auto body = [](void *c, int64_t) { static_cast<std::atomic<int> *>(c)->fetch_add(1); };
  parallelFor(5, 5, 4, body, &calls);
  parallelFor(5, 1, 4, body, &calls);
  EXPECT_EQ(calls.load(), 0);
}

/// Records the threads that ran iterations.
struct Threads {
  std::mutex mutex;
  std::set<std::thread::id> ids;
  static void body(void *self, int64_t) {
    auto *t = static_cast<Threads *>(self);
    std::lock_guard<std::mutex> lock(t->mutex);
    t->ids.insert(std::this_thread::get_id());
  }
};

// Tests that one thread means the caller alone, and that a limit caps the
// team: never more threads than allowed.
TEST(ParallelTest, ThreadLimit) {
  Threads one;
  parallelFor(0, 1000, 1, &Threads::body, &one);
  ASSERT_EQ(one.ids.size(), 1u);
  EXPECT_EQ(*one.ids.begin(), std::this_thread::get_id());
  Threads two;
  parallelFor(0, 1000, 2, &Threads::body, &two);
  EXPECT_LE(two.ids.size(), 2u);
}

// Tests that a thread-count scope sets the count for its lifetime, restores
// the caller's after, and that 0 leaves the count alone.
TEST(ParallelTest, ThreadsScopeRestores) {
  setParallelThreads(3);
  {
    ParallelThreadsScope one(1);
    EXPECT_EQ(parallelThreads(), 1);
    {
      ParallelThreadsScope unchanged(0);
      EXPECT_EQ(parallelThreads(), 1);
    }
    EXPECT_EQ(parallelThreads(), 1);
  }
  EXPECT_EQ(parallelThreads(), 3);
}

// Tests the stale libomp registration files: a zero-length
// /dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid> (a process died between creating
// and sizing it) kills a later process with that pid at its first parallel
// region (libomp maps and reads it: SIGBUS), and so does one sized but never
// written (1024 NULs: libomp aborts, "OMP: Error #15 ... unknown library
// already initialized"). A forked child (libomp registers again after a
// fork) with such a file for its pid dies so; with
// removeStaleOpenMPRegistration first it runs, and the call leaves a live
// registration alone.
TEST(ParallelTest, StaleOpenMPRegistration) {
  parallelFor(0, 4, 2, [](void *, int64_t) {}, nullptr); // this process registers
  auto registration = [](pid_t pid) {
    return "/dev/shm/__KMP_REGISTERED_LIB_" + std::to_string(int(pid)) + "_" +
           std::to_string(int(::getuid()));
  };
  auto child = [&](bool remove, off_t size) {
    pid_t pid = ::fork();
    if (pid == 0) {
      std::string path = registration(::getpid());
      int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
      if (fd < 0 || ::ftruncate(fd, size) != 0)
        ::_exit(3);
      ::close(fd);
      if (remove && !removeStaleOpenMPRegistration())
        ::_exit(4);
      Visits v{64};
      parallelFor(0, 64, 2, Visits::body, &v);
      ::_exit(v.allOnce() ? 0 : 5);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    // Never leave a stale file behind for the next process with this pid.
    ::unlink(registration(pid).c_str());
    return status;
  };
  if (::access("/dev/shm", W_OK) != 0)
    GTEST_SKIP() << "no writable /dev/shm";
  std::string survived; // the stale files this libomp survives: nothing to remove
  for (off_t size : {0, 1024}) {
    int unfixed = child(false, size);
    bool dies = size == 0 ? WIFSIGNALED(unfixed) && WTERMSIG(unfixed) == SIGBUS
                          : WIFSIGNALED(unfixed) && WTERMSIG(unfixed) == SIGABRT;
    if (!dies) {
      survived += " " + std::to_string(size) + " bytes (status " + std::to_string(unfixed) + ")";
      continue;
    }
    int fixed = child(true, size);
    EXPECT_TRUE(WIFEXITED(fixed) && WEXITSTATUS(fixed) == 0)
        << size << " bytes: status " << fixed;
  }
  // This process's own registration is sized and written: never removed.
  EXPECT_FALSE(removeStaleOpenMPRegistration());
  if (!survived.empty())
    GTEST_SKIP() << "this libomp survives stale registrations of" << survived;
}

} // namespace
