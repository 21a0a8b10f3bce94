//===- ThreadPoolTest.cpp - the process-wide CPU thread pool ---------------===//

#include "runtime/cpu/thread_pool.h"

#include <atomic>
#include <gtest/gtest.h>
#include <set>
#include <thread>
#include <vector>

using namespace tcc::rt;

namespace {

/// Counts visits per index of [0, n).
struct Visits {
  int64_t offset = 0;
  std::vector<std::atomic<int>> counts;
  explicit Visits(size_t n) : counts(n) {}
  static void body(void *self, int64_t begin, int64_t end) {
    auto *v = static_cast<Visits *>(self);
    for (int64_t i = begin; i < end; ++i)
      v->counts[size_t(i - v->offset)].fetch_add(1);
  }
  bool allOnce() const {
    for (const std::atomic<int> &c : counts)
      if (c.load() != 1)
        return false;
    return true;
  }
};

TEST(ThreadPoolTest, AvailableCpus) { EXPECT_GE(availableCpus(), 1); }

// Tests that every iteration runs exactly once, for many range sizes and
// thread limits, including negative bounds.
TEST(ThreadPoolTest, EachIterationOnce) {
  ThreadPool pool(3);
  for (int64_t n : {1, 2, 3, 7, 64, 1000, 100003}) {
    for (int threads : {1, 2, 4, 16}) {
      Visits v{static_cast<size_t>(n)};
      v.offset = -n / 2;
      pool.parallelFor(v.offset, v.offset + n, threads, &Visits::body, &v);
      EXPECT_TRUE(v.allOnce()) << n << " iterations, " << threads << " threads";
    }
  }
}

// Tests that an empty or reversed range calls nothing.
TEST(ThreadPoolTest, EmptyRange) {
  ThreadPool pool(2);
  std::atomic<int> calls{0};
  auto body = [](void *c, int64_t, int64_t) { static_cast<std::atomic<int> *>(c)->fetch_add(1); };
  pool.parallelFor(5, 5, 4, body, &calls);
  pool.parallelFor(5, 1, 4, body, &calls);
  EXPECT_EQ(calls.load(), 0);
}

// Tests that one thread means the caller alone, in one call.
TEST(ThreadPoolTest, SingleThreadRunsInline) {
  ThreadPool pool(3);
  struct State {
    std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> calls{0};
    std::atomic<bool> elsewhere{false};
  } state;
  auto body = [](void *c, int64_t, int64_t) {
    auto *s = static_cast<State *>(c);
    s->calls.fetch_add(1);
    if (std::this_thread::get_id() != s->caller)
      s->elsewhere = true;
  };
  pool.parallelFor(0, 1000, 1, body, &state);
  EXPECT_EQ(state.calls.load(), 1);
  EXPECT_FALSE(state.elsewhere.load());
  ThreadPool empty(0);
  empty.parallelFor(0, 1000, 8, body, &state);
  EXPECT_EQ(state.calls.load(), 2);
}

// Tests that a body may run a parallel loop itself without deadlock.
TEST(ThreadPoolTest, NestedLoops) {
  ThreadPool pool(3);
  struct Outer {
    ThreadPool *pool;
    std::atomic<int64_t> total{0};
  } outer{&pool};
  auto body = [](void *c, int64_t begin, int64_t end) {
    auto *o = static_cast<Outer *>(c);
    auto count = [](void *t, int64_t b, int64_t e) {
      static_cast<std::atomic<int64_t> *>(t)->fetch_add(e - b);
    };
    for (int64_t i = begin; i < end; ++i)
      o->pool->parallelFor(0, 100, 4, count, &o->total);
  };
  pool.parallelFor(0, 50, 4, body, &outer);
  EXPECT_EQ(outer.total.load(), 50 * 100);
}

// Tests loops from several application threads at once on one pool.
TEST(ThreadPoolTest, ConcurrentCallers) {
  ThreadPool pool(3);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&pool, &failures] {
      for (int round = 0; round < 50; ++round) {
        Visits v(997);
        pool.parallelFor(0, 997, 3, &Visits::body, &v);
        if (!v.allOnce())
          failures.fetch_add(1);
      }
    });
  for (std::thread &t : callers)
    t.join();
  EXPECT_EQ(failures.load(), 0);
}

// Tests that the shared pool is one per process while referenced, with one
// worker fewer than the CPUs, and restarts after the last reference goes.
TEST(ThreadPoolTest, SharedPool) {
  std::shared_ptr<ThreadPool> a = ThreadPool::shared();
  std::shared_ptr<ThreadPool> b = ThreadPool::shared();
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->numWorkers(), availableCpus() - 1);
  a.reset();
  b.reset();
  std::shared_ptr<ThreadPool> c = ThreadPool::shared();
  Visits v(100);
  c->parallelFor(0, 100, 64, &Visits::body, &v);
  EXPECT_TRUE(v.allOnce());
}

} // namespace
