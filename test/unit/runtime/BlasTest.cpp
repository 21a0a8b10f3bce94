//===- BlasTest.cpp - the CPU runtime's matmul calls on BLAS --------------===//
//
// MATMUL library calls routed to a CBLAS (runtime/cpu/blas.h): awkward
// shapes (1x1, M = 1, N = 1, K = 1, every transpose, batched, interleaved
// across heads), every epilogue and accumulation, against a float64
// reference; the routing rule; and run-to-run determinism. Skipped where no BLAS can be loaded.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/blas.h"
#include "runtime/cpu/cpu_features.h"
#include "runtime/cpu/onednn.h"
#include "runtime/cpu/parallel.h"
#include "runtime/error.h"
#include "runtime/testing/matmul_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <vector>

using namespace tcc::rt;

namespace {

constexpr int64_t kBias = TCC_MATMUL_EPILOGUE_BIAS, kResidual = TCC_MATMUL_EPILOGUE_RESIDUAL,
                  kRelu = TCC_MATMUL_EPILOGUE_RELU;

tcc_abi_library_call matmulCall(const std::vector<int64_t> &p) {
  int64_t e = p.size() > 7 ? p[7] : 0;
  return {TCC_LIBRARY_CALL_MATMUL, TCC_DTYPE_F32, int32_t(p.size()),
          3 + !!(e & kBias) + !!(e & kResidual), p.data()};
}

using tcc::testing::randomVector;
using tcc::testing::relativeError;


// Tests the rule that picks BLAS, for the library the process loaded.
// OpenBLAS: batches of matrices of at most 16^3 multiply-adds, and batch-1
// A^T B weight gradients summing over 512 rows or more into 256 x 256
// elements or more; everything else stays on oneDNN. MKL: every 2-D
// product without an epilogue on an Intel CPU (none on others); batches of
// tiny matrices only on a CPU without AVX-512; nothing with an epilogue.
TEST(BlasTest, RoutingRule) {
  const Blas *library = blas();
  if (!library)
    GTEST_SKIP() << "no BLAS can be loaded";
  const bool tinyBatchesOnMkl = !hostCpuFeatures().count("avx512f");
  const bool productsOnMkl = hostCpuVendor() == "GenuineIntel";
  struct Case {
    std::vector<int64_t> p;
    bool openblas, mkl;
  } cases[] = {
      {{32, 8, 8, 16, 0, 0, 0, 0}, true, tinyBatchesOnMkl},          // the parity GPT's attention
      {{32, 8, 16, 8, 0, 0, 0, 0}, true, tinyBatchesOnMkl},
      {{4096, 16, 16, 16, 1, 1, 0, 0}, true, tinyBatchesOnMkl},      // 16^3, any batch, transpose
      {{2, 16, 16, 17, 0, 0, 0, 0}, false, false},                   // larger matrices
      {{64, 128, 128, 64, 0, 0, 0, 0}, false, false},                // gpt4's attention
      {{1, 1, 1, 1, 0, 0, 0, 0}, false, productsOnMkl},              // 2-D, however small
      {{1, 128, 96, 32, 0, 1, 0, kBias}, false, false},              // the parity GPT's QKV
      {{1, 32, 96, 128, 1, 0, 0, 0}, false, productsOnMkl},          // its weight gradient
      {{1, 768, 256, 2048, 1, 0, 0, 0}, true, productsOnMkl},        // gpt4's weight gradient
      {{1, 768, 3072, 512, 1, 0, 1, 0}, true, productsOnMkl},        // GPT-2 small's, 512 tokens
      {{1, 256, 256, 512, 1, 0, 0, 0}, true, productsOnMkl},         // the smallest
      {{1, 256, 256, 511, 1, 0, 0, 0}, false, productsOnMkl},        // fewer rows
      {{1, 32, 128, 1024, 1, 0, 0, 0}, false, productsOnMkl},        // a smaller weight
      {{2, 768, 256, 2048, 1, 0, 0, 0}, false, false},               // batched
      {{1, 768, 256, 2048, 0, 0, 0, 0}, false, productsOnMkl},       // not transposed
      {{1, 2048, 256, 768, 0, 1, 0, kResidual}, false, false},       // an epilogue
      {{1, 1, 1, int64_t(1) << 32, 1, 0, 0, 0}, false, false},       // K beyond CBLAS's int
  };
  for (const Case &c : cases)
    EXPECT_EQ(blasPrefers(matmulCall(c.p)), library->mkl ? c.mkl : c.openblas)
        << c.p[0] << "x" << c.p[1] << "x" << c.p[2] << "x" << c.p[3] << " ta " << c.p[4]
        << " on " << library->file;
}

/// BLAS LibraryCalls for CALLS (every matmul on BLAS), or null where no
/// BLAS can be loaded.
std::unique_ptr<LibraryCalls> createOnBlas(const std::vector<tcc_abi_library_call> &calls) {
  if (!blas())
    return nullptr;
  return std::make_unique<LibraryCalls>(calls.data(), int32_t(calls.size()), "test",
                                        MatmulLibrary::Blas);
}

// Tests awkward shapes with every transpose, each epilogue, accumulation
// and batches (operands interleaved across heads too), on BLAS. A call that
// overwrites its output finds NaN there
// (as in a poisoned arena): the product must not read it. Oracle: float64
// (runtime/testing/matmul_reference.h); tolerance 1e-5 of the largest
// magnitude (fp32 sums of at most 37 products).
TEST(BlasTest, AwkwardShapesAndEpilogues) {
  std::vector<std::vector<int64_t>> shapes = {
      {1, 1, 1, 1},   {1, 1, 17, 9},  {1, 13, 1, 9}, {1, 13, 17, 1},
      {1, 1, 1, 37},  {3, 1, 5, 7},   {4, 6, 1, 3},  {2, 9, 11, 37},
  };
  std::vector<std::vector<int64_t>> params;
  for (const auto &s : shapes)
    for (int64_t ta : {0, 1})
      for (int64_t tb : {0, 1}) {
        params.push_back({s[0], s[1], s[2], s[3], ta, tb, 1, 0}); // accumulating
        for (int64_t e : {0, 1, 2, 3, 4, 5, 6, 7})
          params.push_back({s[0], s[1], s[2], s[3], ta, tb, 0, e});
      }
  params.push_back({1, 5, 6, 7, 1, 1, 0}); // an older artifact's 7 parameters
  // Operands interleaved across 3 heads (abi.h's HEADS, INTERLEAVED).
  for (int64_t interleaved = 1; interleaved <= 7; ++interleaved)
    for (int64_t t = 0; t < 4; ++t)
      params.push_back({6, 5, 7, 9, t & 1, t >> 1, interleaved & 1, 0, 0,
                        TCC_LIBRARY_MATH_EXACT, 3, interleaved});
  std::vector<tcc_abi_library_call> calls;
  for (const auto &p : params)
    calls.push_back(matmulCall(p));
  std::unique_ptr<LibraryCalls> library = createOnBlas(calls);
  if (!library)
    GTEST_SKIP() << "no BLAS can be loaded";
  EXPECT_EQ(library->scratchpadSize(), 0u);
  for (const std::string &impl : library->implementations())
    EXPECT_EQ(impl.rfind("blas:", 0), 0u) << impl;

  std::mt19937_64 rng(5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t i = 0; i < params.size(); ++i) {
    const int64_t *p = params[i].data();
    int64_t epilogue = params[i].size() > 7 ? p[7] : 0;
    size_t batch = size_t(p[0]), M = size_t(p[1]), N = size_t(p[2]), K = size_t(p[3]);
    std::vector<float> a = randomVector(batch * M * K, rng), b = randomVector(batch * K * N, rng),
                       bias = randomVector(N, rng), d = randomVector(batch * M * N, rng),
                       c = randomVector(batch * M * N, rng);
    std::vector<double> ref = tcc::testing::matmulReference(params[i], a, b, c, bias, d);
    if (!p[6])
      std::fill(c.begin(), c.end(), nan);
    std::vector<void *> operands = {a.data(), b.data(), c.data()};
    if (epilogue & kBias)
      operands.push_back(bias.data());
    if (epilogue & kResidual)
      operands.push_back(d.data());
    LibraryCalls::run(library.get(), int32_t(i), operands.data());
    ASSERT_EQ(library->takeError(), "");
    EXPECT_LE(relativeError(c, ref), 1e-5)
        << "call #" << i << ": " << p[0] << "x" << p[1] << "x" << p[2] << "x" << p[3] << " ta "
        << p[4] << " tb " << p[5] << " acc " << p[6] << " epilogue " << epilogue;
    if (epilogue & kRelu)
      EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](float x) { return x >= 0; }));
  }
}

// Tests that a NaN in an operand survives the relu epilogue (non-finite
// checks read the results), as it does on oneDNN and in generated code.
TEST(BlasTest, ReluKeepsNaN) {
  std::vector<int64_t> p = {1, 2, 3, 4, 0, 0, 0, kBias | kRelu};
  std::vector<tcc_abi_library_call> calls = {matmulCall(p)};
  std::unique_ptr<LibraryCalls> library = createOnBlas(calls);
  if (!library)
    GTEST_SKIP() << "no BLAS can be loaded";
  std::vector<float> a(8, -1.0f), b(12, 1.0f), bias(3, 0.0f), c(6, 0.0f);
  a[0] = std::numeric_limits<float>::quiet_NaN(); // row 0 of C
  void *operands[] = {a.data(), b.data(), c.data(), bias.data()};
  LibraryCalls::run(library.get(), 0, operands);
  ASSERT_EQ(library->takeError(), "");
  for (int j = 0; j < 3; ++j) {
    EXPECT_TRUE(std::isnan(c[size_t(j)])) << j;
    EXPECT_EQ(c[size_t(3 + j)], 0.0f) << j; // relu(-4)
  }
}

// Tests that a routed session runs BLAS for the tiny batched products and
// the long weight gradients, oneDNN for the rest, and that each call gives
// the same bits run after run at a fixed thread count (1 and 2), on shapes
// of the parity GPT (128 tokens, d = 32, 2 heads) and gpt4 (2048 tokens,
// d = 256). Oracle for the values: float64, tolerance 1e-5 relative (sums
// of up to 2048 products of random numbers in [-1, 1)).
TEST(BlasTest, RoutedAndDeterministic) {
  if (!blas())
    GTEST_SKIP() << "no BLAS can be loaded";
  std::vector<std::vector<int64_t>> params = {
      {32, 8, 8, 16, 0, 0, 0, 0},         // attention scores: OpenBLAS
      {600, 16, 16, 16, 0, 1, 1, 0},      // 4.9 MFLOP: its matrices across the threads: OpenBLAS
      {1, 256, 256, 2048, 1, 0, 0, 0},    // gpt4's projection weight gradient: BLAS
      {1, 96, 32, 128, 1, 0, 1, 0},       // the parity GPT's weight gradient: MKL only
      {1, 128, 96, 32, 0, 1, 0, kBias},   // its QKV: oneDNN
  };
  const bool tinyBatchesOnMkl = !hostCpuFeatures().count("avx512f");
  const bool onOpenBlas[] = {true, true, true, false, false};
  const bool productsOnMkl = hostCpuVendor() == "GenuineIntel";
  const bool onMkl[] = {tinyBatchesOnMkl, tinyBatchesOnMkl, productsOnMkl, productsOnMkl, false};
  const bool *onBlas = blas()->mkl ? onMkl : onOpenBlas;
  std::vector<tcc_abi_library_call> calls;
  for (const auto &p : params)
    calls.push_back(matmulCall(p));
  int saved = parallelThreads();
  for (int threads : {1, 2}) {
    setParallelThreads(threads);
    LibraryCalls library(calls.data(), int32_t(calls.size()), "test");
    std::vector<std::string> impls = library.implementations();
    std::vector<uint8_t> scratch(library.scratchpadSize() + 64);
    library.setScratchpad(scratch.data());
    std::mt19937_64 rng(9);
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_EQ(impls[i].rfind("blas:", 0) == 0, onBlas[i]) << "call #" << i << ": " << impls[i];
      const int64_t *p = params[i].data();
      size_t batch = size_t(p[0]), M = size_t(p[1]), N = size_t(p[2]), K = size_t(p[3]);
      std::vector<float> a = randomVector(batch * M * K, rng), b = randomVector(batch * K * N, rng),
                         bias = randomVector(N, rng), c0 = randomVector(batch * M * N, rng);
      std::vector<double> ref = tcc::testing::matmulReference(params[i], a, b, c0, bias, c0);
      std::vector<float> first;
      for (int run = 0; run < 3; ++run) {
        std::vector<float> c = c0;
        std::vector<void *> operands = {a.data(), b.data(), c.data()};
        if (p[7] & kBias)
          operands.push_back(bias.data());
        LibraryCalls::run(&library, int32_t(i), operands.data());
        ASSERT_EQ(library.takeError(), "");
        if (run == 0) {
          EXPECT_LE(relativeError(c, ref), 1e-5) << "call #" << i << ", " << threads << " threads";
          first = c;
        } else {
          EXPECT_EQ(std::memcmp(first.data(), c.data(), c.size() * sizeof(float)), 0)
              << "call #" << i << " differs on run " << run << " at " << threads << " threads";
        }
      }
    }
  }
  setParallelThreads(saved);
}

// Tests that MatmulLibrary::OneDnn keeps every call off BLAS.
TEST(BlasTest, OneDnnOnly) {
  std::vector<int64_t> p = {1, 4, 5, 6, 0, 0, 0, 0};
  std::vector<tcc_abi_library_call> calls = {matmulCall(p)};
  try {
    LibraryCalls library(calls.data(), 1, "test", MatmulLibrary::OneDnn);
    EXPECT_EQ(library.implementations()[0].rfind("blas:", 0), std::string::npos);
  } catch (const Error &e) {
    if (std::string(e.what()).find("cannot load oneDNN") == std::string::npos)
      throw;
    GTEST_SKIP() << "oneDNN cannot be loaded";
  }
}

} // namespace
