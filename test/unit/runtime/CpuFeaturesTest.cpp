//===- CpuFeaturesTest.cpp - the load-time CPU feature check ---------------===//

#include "runtime/cpu/cpu_features.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace tcc::rt;

namespace {

// Tests the check against a made-up host, so the "missing feature" path is
// covered on any machine.
TEST(CpuFeaturesTest, ChecksAgainstHost) {
  std::set<std::string> host = {"sse2", "avx", "avx2", "fma"};
  EXPECT_EQ(checkCpuFeatures("", host), "");
  EXPECT_EQ(checkCpuFeatures("avx2,fma", host), "");
  // LLVM's spellings: '+' prefixes, '-' entries, spaces, empty entries.
  EXPECT_EQ(checkCpuFeatures("+avx2, +fma,,-avx512f", host), "");
  std::string message = checkCpuFeatures("avx2,avx512f,avx512bw", host);
  EXPECT_NE(message.find("lacks"), std::string::npos) << message;
  EXPECT_NE(message.find("avx512f, avx512bw"), std::string::npos) << message;
  message = checkCpuFeatures("avx2,warp-drive", host);
  EXPECT_NE(message.find("cannot check CPU feature(s) warp-drive"), std::string::npos) << message;
}

// Tests detection on this machine: x86-64 always has SSE2 and long mode,
// and every detected name is one the checker knows.
TEST(CpuFeaturesTest, DetectsHost) {
#if defined(__x86_64__)
  const std::set<std::string> &host = hostCpuFeatures();
  EXPECT_TRUE(host.count("sse2"));
  EXPECT_TRUE(host.count("64bit"));
  const std::vector<std::string> &known = knownCpuFeatures();
  for (const std::string &name : host)
    EXPECT_NE(std::find(known.begin(), known.end(), name), known.end()) << name;
  // AVX2 without AVX would mean the OS-support check is wrong.
  if (host.count("avx2"))
    EXPECT_TRUE(host.count("avx"));
  std::string all;
  for (const std::string &name : host)
    all += name + ",";
  EXPECT_EQ(checkCpuFeatures(all, host), "");
#else
  GTEST_SKIP() << "x86-64 only";
#endif
}

} // namespace
