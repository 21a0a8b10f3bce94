//===- ParallelTest.cpp - the OpenMP-based parallel_for and thread count --===//

#include "runtime/cpu/parallel.h"

#include <atomic>
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

} // namespace
