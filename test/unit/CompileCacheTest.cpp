//===- CompileCacheTest.cpp - the compile cache's failure modes ------------===//
//
// The cache may be shared by concurrent compiles and outlive crashes, full
// disks and people editing files in it: a lookup returns a whole payload that
// was stored under that key, or nothing, and never a damaged one.
//
//===----------------------------------------------------------------------===//

#include "compiler/CompileCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sys/time.h>
#include <unistd.h>
#include <thread>
#include <vector>

namespace {

class CompileCacheTest : public ::testing::Test {
protected:
  CompileCacheTest() {
    llvm::SmallString<128> dir;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("tcc-cache-test", dir));
    folder = std::string(dir);
  }
  ~CompileCacheTest() override { llvm::sys::fs::remove_directories(folder); }

  std::string entry(llvm::StringRef key, llvm::StringRef kind) {
    return folder + "/" + key.str() + "." + kind.str();
  }
  std::vector<std::string> files() {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(folder, ec), end; it != end && !ec; it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    return names;
  }
  /// Sets a file's modification time SECONDS into the past.
  static void age(const std::string &path, int seconds) {
    struct timeval times[2];
    gettimeofday(&times[0], nullptr);
    times[0].tv_sec -= seconds;
    times[1] = times[0];
    ASSERT_EQ(utimes(path.c_str(), times), 0);
  }

  std::string folder;
};

TEST_F(CompileCacheTest, StoresAndFindsPayloads) {
  tcc::CompileCache cache(folder, 1 << 20);
  ASSERT_TRUE(cache.enabled()) << cache.problem();
  std::string payload("object\0code", 11);
  EXPECT_FALSE(cache.lookup("k1", "o"));
  cache.store("k1", "o", payload);
  std::optional<std::string> found = cache.lookup("k1", "o");
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, payload);
  // The kind is part of the name: the same key of another kind is a miss.
  EXPECT_FALSE(cache.lookup("k1", "so"));
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 2u);
  EXPECT_EQ(cache.stats().stores, 1u);
}

TEST_F(CompileCacheTest, AlteredEntryIsRemovedAndMisses) {
  tcc::CompileCache cache(folder, 1 << 20);
  cache.store("k", "o", std::string(1000, 'x'));
  {
    // One byte of the payload changed in place.
    std::fstream f(entry("k", "o"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);
    f.put('y');
  }
  EXPECT_FALSE(cache.lookup("k", "o"));
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_FALSE(llvm::sys::fs::exists(entry("k", "o")));
  // Rebuilt, it is found again.
  cache.store("k", "o", std::string(1000, 'x'));
  EXPECT_TRUE(cache.lookup("k", "o"));
}

TEST_F(CompileCacheTest, TruncatedAndForeignFilesAreNotEntries) {
  tcc::CompileCache cache(folder, 1 << 20);
  cache.store("long", "o", std::string(5000, 'a'));
  ASSERT_EQ(::truncate(entry("long", "o").c_str(), 3000), 0);
  EXPECT_FALSE(cache.lookup("long", "o"));
  std::ofstream(entry("empty", "o"));
  EXPECT_FALSE(cache.lookup("empty", "o"));
  std::ofstream(entry("text", "o")) << "not an entry at all, but long enough to hold a header";
  EXPECT_FALSE(cache.lookup("text", "o"));
  EXPECT_EQ(cache.stats().corrupt, 3u);
  EXPECT_TRUE(files().empty());
}

TEST_F(CompileCacheTest, ConcurrentWritersAndReadersSeeWholeEntries) {
  // Eight threads store and read the same keys at once, each with payloads
  // of its own: every hit is one of the stored payloads, whole, and no
  // temporary file is left behind.
  constexpr int kThreads = 8, kRounds = 40, kKeys = 4;
  auto payload = [](int thread, int key) {
    return std::string(20000 + 1000 * key, char('a' + thread));
  };
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      tcc::CompileCache cache(folder, 1 << 30);
      for (int round = 0; round < kRounds; ++round)
        for (int key = 0; key < kKeys; ++key) {
          std::string name = "key" + std::to_string(key);
          if (std::optional<std::string> hit = cache.lookup(name, "o")) {
            bool whole = hit->size() == payload(0, key).size() &&
                         hit->find_first_not_of((*hit)[0]) == std::string::npos;
            bad += !whole;
          }
          cache.store(name, "o", payload(t, key));
        }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(bad, 0);
  std::vector<std::string> left = files();
  std::set<std::string> names(left.begin(), left.end());
  std::set<std::string> expected = {"key0.o", "key1.o", "key2.o", "key3.o"};
  EXPECT_EQ(names, expected);
  tcc::CompileCache cache(folder, 1 << 30);
  for (int key = 0; key < kKeys; ++key)
    EXPECT_TRUE(cache.lookup("key" + std::to_string(key), "o"));
  EXPECT_EQ(cache.stats().corrupt, 0u);
}

TEST_F(CompileCacheTest, TrimRemovesLeastRecentlyUsedFirst) {
  tcc::CompileCache cache(folder, 25000);
  for (const char *key : {"old", "middle", "new"})
    cache.store(key, "o", std::string(10000, 'z'));
  age(entry("old", "o"), 300);
  age(entry("middle", "o"), 200);
  age(entry("new", "o"), 100);
  // A hit makes "old" the most recently used.
  EXPECT_TRUE(cache.lookup("old", "o"));
  cache.trim();
  EXPECT_TRUE(llvm::sys::fs::exists(entry("old", "o")));
  EXPECT_FALSE(llvm::sys::fs::exists(entry("middle", "o")));
  EXPECT_TRUE(llvm::sys::fs::exists(entry("new", "o")));
}

TEST_F(CompileCacheTest, TrimRemovesStaleTemporaries) {
  tcc::CompileCache cache(folder, 1 << 20);
  std::string stale = folder + "/tmp-abandoned", fresh = folder + "/tmp-inflight";
  std::ofstream(stale) << "a writer that died";
  std::ofstream(fresh) << "a writer at work";
  age(stale, 2 * 3600);
  cache.trim();
  EXPECT_FALSE(llvm::sys::fs::exists(stale));
  EXPECT_TRUE(llvm::sys::fs::exists(fresh));
}

TEST_F(CompileCacheTest, UnusableFolderDisablesTheCache) {
  std::string file = folder + "/a-file";
  std::ofstream(file) << "x";
  tcc::CompileCache cache(file + "/cache", 1 << 20);
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.problem().find("a-file"), std::string::npos) << cache.problem();
  cache.store("k", "o", "payload");
  EXPECT_FALSE(cache.lookup("k", "o"));
}

TEST(CompileCacheKey, PartsAreLengthPrefixed) {
  EXPECT_NE(tcc::hashKey({"ab", "c"}), tcc::hashKey({"a", "bc"}));
  EXPECT_EQ(tcc::hashKey({"ab", "c"}), tcc::hashKey({"ab", "c"}));
  EXPECT_EQ(tcc::hashKey({"x"}).size(), 64u);
  EXPECT_FALSE(tcc::compilerIdentity().empty());
}

} // namespace
