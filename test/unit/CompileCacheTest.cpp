//===- CompileCacheTest.cpp - the compile cache's failure modes ------------===//
//
// The cache may be shared by concurrent compiles and outlive crashes, full
// disks and people editing files in it: a lookup returns a whole payload that
// was stored under that key, or nothing, and never a damaged one.
//
//===----------------------------------------------------------------------===//

#include "compiler/CompileCache.h"
#include "compiler/SourceKey.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sys/stat.h>
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
  std::string old = tcc::hashKey({"old"}), middle = tcc::hashKey({"middle"}),
              young = tcc::hashKey({"new"});
  for (const std::string &key : {old, middle, young})
    cache.store(key, "o", std::string(10000, 'z'));
  age(entry(old, "o"), 300);
  age(entry(middle, "o"), 200);
  age(entry(young, "o"), 100);
  // A hit makes "old" the most recently used.
  EXPECT_TRUE(cache.lookup(old, "o"));
  cache.trim();
  EXPECT_TRUE(llvm::sys::fs::exists(entry(old, "o")));
  EXPECT_FALSE(llvm::sys::fs::exists(entry(middle, "o")));
  EXPECT_TRUE(llvm::sys::fs::exists(entry(young, "o")));
}

TEST_F(CompileCacheTest, TrimRemovesStaleTemporaries) {
  tcc::CompileCache cache(folder, 1 << 20);
  std::string stale = folder + "/tmp-0123456789ab", fresh = folder + "/tmp-ba9876543210";
  std::ofstream(stale) << "a writer that died";
  std::ofstream(fresh) << "a writer at work";
  age(stale, 2 * 3600);
  cache.trim();
  EXPECT_FALSE(llvm::sys::fs::exists(stale));
  EXPECT_TRUE(llvm::sys::fs::exists(fresh));
}

TEST_F(CompileCacheTest, TrimRemovesOnlyTheCachesOwnFiles) {
  // TCC_CACHE_DIR pointed at a folder of the user's: old and large files,
  // names like a temporary's or an entry's but not quite, are not the
  // cache's, whatever the bound (ccache's rule).
  tcc::CompileCache cache(folder, 1000);
  std::string key = tcc::hashKey({"entry"});
  cache.store(key, "o", std::string(5000, 'e'));
  age(entry(key, "o"), 3600);
  std::vector<std::string> foreign = {
      "thesis.txt", "tmp-notes", "tmp-0123456789abc", "tmp-0123456789AB",
      key + ".txt", key.substr(1) + ".o", "disk.img"};
  for (const std::string &name : foreign) {
    std::ofstream(folder + "/" + name) << std::string(20000, 'u');
    age(folder + "/" + name, 30 * 24 * 3600);
  }
  cache.trim();
  EXPECT_FALSE(llvm::sys::fs::exists(entry(key, "o")));
  for (const std::string &name : foreign)
    EXPECT_TRUE(llvm::sys::fs::exists(folder + "/" + name)) << name;
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

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(CompileCacheTest, PlacedFilesAreIndependentOfTheEntry) {
  tcc::CompileCache cache(folder, 1 << 30);
  std::string source = folder + "/out.safetensors", dest = folder + "/warm.safetensors";
  std::string payload(3 << 20, 'w');
  payload[12345] = 'x';
  std::ofstream(source, std::ios::binary) << payload;
  std::string error;
  EXPECT_FALSE(cache.lookupFile("k", "weights", dest, error));
  EXPECT_TRUE(error.empty()) << error;
  cache.storeFile("k", "weights", source);
  tcc::CompileCache::Placement how;
  ASSERT_TRUE(cache.lookupFile("k", "weights", dest, error, &how)) << error;
  EXPECT_EQ(readAll(dest), payload);
  // The destination is a file of its own (a reflink or a copy, never a
  // hard link): writing into it leaves the entry and another warm output
  // as they were.
  struct stat d, e;
  ASSERT_EQ(::stat(dest.c_str(), &d), 0);
  ASSERT_EQ(::stat(entry("k", "weights").c_str(), &e), 0);
  EXPECT_NE(d.st_ino, e.st_ino);
  EXPECT_EQ(d.st_nlink, 1u);
  EXPECT_EQ(e.st_nlink, 1u);
  EXPECT_NE(d.st_mode & 0200, 0u) << "the user's output is writable";
  std::string other = folder + "/other.safetensors";
  ASSERT_TRUE(cache.lookupFile("k", "weights", other, error)) << error;
  std::ofstream(dest, std::ios::binary | std::ios::trunc) << "trained weights";
  EXPECT_EQ(readAll(other), payload);
  EXPECT_EQ(readAll(entry("k", "weights")).size(), payload.size());
  // The source of a store stays the user's too.
  std::ofstream(source, std::ios::binary | std::ios::trunc) << "overwritten";
  ASSERT_TRUE(cache.lookupFile("k", "weights", dest, error)) << error;
  EXPECT_EQ(readAll(dest), payload);
  // Placed again over an existing destination: replaced, not written into.
  ASSERT_TRUE(cache.lookupFile("k", "weights", dest, error)) << error;
  EXPECT_EQ(readAll(dest), payload);
  EXPECT_EQ(cache.stats().hits, 4u);
  for (const std::string &name : files())
    EXPECT_EQ(name.find("tmp"), std::string::npos) << name;
}

TEST_F(CompileCacheTest, DamagedFileEntryIsRemovedAndNotPlaced) {
  tcc::CompileCache cache(folder, 1 << 30);
  std::string source = folder + "/out.safetensors", dest = folder + "/warm.safetensors";
  std::ofstream(source, std::ios::binary) << std::string(100000, 'w');
  cache.storeFile("k", "weights", source);
  std::string data = entry("k", "weights");
  ASSERT_EQ(::chmod(data.c_str(), 0644), 0);
  {
    std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(500);
    f.put('v');
  }
  std::string error;
  EXPECT_FALSE(cache.lookupFile("k", "weights", dest, error));
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_FALSE(llvm::sys::fs::exists(dest));
  EXPECT_FALSE(llvm::sys::fs::exists(data));
  EXPECT_FALSE(llvm::sys::fs::exists(entry("k", "weights.check")));
  // A truncated one, and one without its data: misses too.
  cache.storeFile("k", "weights", source);
  ASSERT_EQ(::truncate(data.c_str(), 99999), 0);
  EXPECT_FALSE(cache.lookupFile("k", "weights", dest, error));
  cache.storeFile("k", "weights", source);
  llvm::sys::fs::remove(data);
  EXPECT_FALSE(cache.lookupFile("k", "weights", dest, error));
  EXPECT_TRUE(error.empty()) << error;
  cache.storeFile("k", "weights", source);
  EXPECT_TRUE(cache.lookupFile("k", "weights", dest, error)) << error;
}

TEST_F(CompileCacheTest, FileEntryToAnUnwritableFolderIsAnError) {
  tcc::CompileCache cache(folder, 1 << 30);
  std::string source = folder + "/out.safetensors";
  std::ofstream(source, std::ios::binary) << std::string(1000, 'w');
  cache.storeFile("k", "weights", source);
  std::string error;
  EXPECT_FALSE(cache.lookupFile("k", "weights", folder + "/no/such/folder/w.safetensors", error));
  EXPECT_FALSE(error.empty());
}

/// Protobuf's wire format, for hand-made ModelProtos.
std::string varint(uint64_t v) {
  std::string out;
  do {
    out += char((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return out;
}
std::string field(unsigned number, const std::string &bytes) {
  return varint(number << 3 | 2) + varint(bytes.size()) + bytes;
}
std::string externalTensor(const std::string &location) {
  return field(8, "w") + varint(14 << 3) + varint(1) + // name, data_location = EXTERNAL
         field(13, field(1, "location") + field(2, location)) +
         field(13, field(1, "offset") + field(2, "0"));
}

TEST(SourceKey, FindsExternalDataEverywhereTheImporterLooks) {
  std::string graph = field(5, externalTensor("weights.bin")) +          // initializer
                      field(5, field(9, std::string(1000, '\0'))) +      // raw data, skipped
                      field(1, field(5, field(5, externalTensor("const.bin")))) + // Constant's t
                      field(15, field(1, externalTensor("sparse.bin")));  // sparse initializer
  std::string subgraph = field(5, externalTensor("weights.bin"));
  std::string model = varint(1 << 3) + varint(8) +                        // ir_version
                      field(7, graph + field(1, field(5, field(6, subgraph))));
  std::optional<std::vector<std::string>> found = tcc::onnxExternalDataLocations(model);
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, (std::vector<std::string>{"const.bin", "sparse.bin", "weights.bin"}));
  EXPECT_EQ(tcc::onnxExternalDataLocations(""), std::vector<std::string>{});
  // Truncated, or a length past the end: not a ModelProto.
  EXPECT_FALSE(tcc::onnxExternalDataLocations(model.substr(0, model.size() - 3)));
  EXPECT_FALSE(tcc::onnxExternalDataLocations(varint(7 << 3 | 2) + varint(100) + "x"));
}

TEST_F(CompileCacheTest, SourceKeyFollowsTheModelAndItsExternalData) {
  std::string model = folder + "/m.onnx", data = folder + "/weights.bin";
  std::ofstream(model, std::ios::binary)
      << varint(1 << 3) + varint(8) + field(7, field(5, externalTensor("weights.bin")));
  std::ofstream(data, std::ios::binary) << std::string(64, 'a');
  std::optional<tcc::SourceKey> first = tcc::SourceKey::compute(model, "options");
  ASSERT_TRUE(first);
  // Just written: not settled, so not to be stored.
  EXPECT_FALSE(first->storable());
  age(data, 100);
  std::optional<tcc::SourceKey> aged = tcc::SourceKey::compute(model, "options");
  ASSERT_TRUE(aged);
  EXPECT_NE(aged->key(), first->key()); // its time is in the key
  // The ctime is now: aging sets the modification time only.
  EXPECT_FALSE(aged->storable());
  EXPECT_NE(tcc::SourceKey::compute(model, "other options")->key(), aged->key());
  // The same bytes written again in place: another key.
  std::ofstream(data, std::ios::binary) << std::string(64, 'a');
  EXPECT_NE(tcc::SourceKey::compute(model, "options")->key(), aged->key());
  EXPECT_FALSE(tcc::SourceKey::compute(folder + "/m.onnxtxt", "options"));
  EXPECT_FALSE(tcc::SourceKey::compute(folder + "/missing.onnx", "options"));
  // Not a regular file: no key, and no wait for a FIFO's writer.
  std::string fifo = folder + "/fifo.onnx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(tcc::SourceKey::compute(fifo, "options"));
  EXPECT_FALSE(tcc::SourceKey::compute(folder, "options"));
}

TEST(CompileCacheKey, PartsAreLengthPrefixed) {
  EXPECT_NE(tcc::hashKey({"ab", "c"}), tcc::hashKey({"a", "bc"}));
  EXPECT_EQ(tcc::hashKey({"ab", "c"}), tcc::hashKey({"ab", "c"}));
  EXPECT_EQ(tcc::hashKey({"x"}).size(), 64u);
  EXPECT_FALSE(tcc::compilerIdentity().empty());
}

} // namespace
