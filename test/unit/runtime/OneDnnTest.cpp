//===- OneDnnTest.cpp - the CPU runtime's library calls, without a compiler ===//
//
// Library-call descriptors are validated, MATMUL calls with every
// epilogue (bias, residual, relu and their combinations; 2-D and batched;
// transposed operands), batched ones with operands interleaved across
// heads, 16-bit matmuls (native and widened) and what a
// device artifact's calls need besides (16-bit epilogues, TF32 as fp32) run on
// oneDNN against a float64 reference, and
// convolutions and their two gradient calls (f32, and 16-bit native and
// widened) run on awkward shapes against float64 (finite differences for
// the gradients). Skipped where oneDNN
// cannot be loaded.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/onednn.h"
#include "runtime/cpu/blas.h"
#include "runtime/cpu/cpu_features.h"
#include "runtime/cpu/parallel.h"
#include "runtime/testing/conv_reference.h"
#include "runtime/testing/matmul_reference.h"
#include "runtime/dtype.h"
#include "runtime/error.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <random>
#include <set>
#include <vector>

using namespace tcc::rt;

namespace {

constexpr int64_t kBias = TCC_MATMUL_EPILOGUE_BIAS, kResidual = TCC_MATMUL_EPILOGUE_RESIDUAL,
                  kRelu = TCC_MATMUL_EPILOGUE_RELU;

tcc_abi_library_call matmulCall(const std::vector<int64_t> &p, int32_t operands,
                                int32_t dtype = TCC_DTYPE_F32) {
  return {TCC_LIBRARY_CALL_MATMUL, dtype, int32_t(p.size()), operands, p.data()};
}

// Tests the descriptor checks: the appended epilogue parameter (7-parameter
// calls of older artifacts stay valid), operand counts that follow the
// epilogue, and the dtypes the ABI allows (whether a runtime runs them is
// decided per session).
TEST(OneDnnTest, CheckLibraryCall) {
  std::vector<int64_t> old = {1, 4, 5, 6, 0, 0, 0};
  EXPECT_EQ(checkLibraryCall(matmulCall(old, 3)), "");
  EXPECT_EQ(matmulEpilogue(matmulCall(old, 3)), 0);
  std::vector<int64_t> plain = {1, 4, 5, 6, 0, 1, 1, 0};
  EXPECT_EQ(checkLibraryCall(matmulCall(plain, 3)), "");
  std::vector<int64_t> all = {2, 4, 5, 6, 1, 0, 0, kBias | kResidual | kRelu};
  EXPECT_EQ(checkLibraryCall(matmulCall(all, 5)), "");
  EXPECT_EQ(matmulEpilogue(matmulCall(all, 5)), 7);
  EXPECT_EQ(checkLibraryCall(matmulCall(all, 3)), "3 operands, expected 5");
  std::vector<int64_t> bias = {1, 4, 5, 6, 0, 0, 0, kBias | kRelu};
  EXPECT_EQ(checkLibraryCall(matmulCall(bias, 4)), "");
  std::vector<int64_t> accumulating = {1, 4, 5, 6, 0, 0, 1, kBias};
  EXPECT_EQ(checkLibraryCall(matmulCall(accumulating, 4)), "a matmul epilogue needs accumulate = 0");
  std::vector<int64_t> unknown = {1, 4, 5, 6, 0, 0, 0, 8};
  EXPECT_EQ(checkLibraryCall(matmulCall(unknown, 3)), "matmul epilogue 8 has unknown bits");
  std::vector<int64_t> six = {1, 4, 5, 6, 0, 0};
  EXPECT_EQ(checkLibraryCall(matmulCall(six, 3)), "6 parameters, expected 8 (or 7, 10 or 12)");
  // C's dtype and the math mode (10 parameters): 16-bit operands into f32
  // sums, TF32 for f32 operands only.
  std::vector<int64_t> wide = {1, 4, 5, 6, 0, 0, 0, 0, TCC_DTYPE_F32, TCC_LIBRARY_MATH_EXACT};
  EXPECT_EQ(checkLibraryCall(matmulCall(wide, 3, TCC_DTYPE_BF16)), "");
  EXPECT_EQ(libraryCallOutputDtype(matmulCall(wide, 3, TCC_DTYPE_BF16)), TCC_DTYPE_F32);
  EXPECT_EQ(libraryCallOutputDtype(matmulCall(plain, 3, TCC_DTYPE_BF16)), TCC_DTYPE_BF16);
  std::vector<int64_t> narrow = {1, 4, 5, 6, 0, 0, 0, 0, TCC_DTYPE_F16, TCC_LIBRARY_MATH_EXACT};
  EXPECT_EQ(checkLibraryCall(matmulCall(narrow, 3, TCC_DTYPE_BF16)),
            "matmul output dtype 3 with bf16 operands (expected the operands' dtype, or f32 for "
            "16-bit ones)");
  std::vector<int64_t> tf32 = {1, 4, 5, 6, 0, 0, 0, 0, 0, TCC_LIBRARY_MATH_TF32};
  EXPECT_EQ(checkLibraryCall(matmulCall(tf32, 3)), "");
  EXPECT_EQ(libraryCallMath(matmulCall(tf32, 3)), TCC_LIBRARY_MATH_TF32);
  EXPECT_EQ(libraryCallMath(matmulCall(plain, 3)), TCC_LIBRARY_MATH_EXACT);
  EXPECT_EQ(checkLibraryCall(matmulCall(tf32, 3, TCC_DTYPE_BF16)), "TF32 math needs f32 operands");
  std::vector<int64_t> math2 = {1, 4, 5, 6, 0, 0, 0, 0, 0, 2};
  EXPECT_EQ(checkLibraryCall(matmulCall(math2, 3)), "unknown math mode 2");
  EXPECT_EQ(checkLibraryCall(matmulCall(plain, 3, TCC_DTYPE_BF16)), "");
  EXPECT_EQ(checkLibraryCall(matmulCall(plain, 3, TCC_DTYPE_F16)), "");
  EXPECT_EQ(checkLibraryCall(matmulCall(plain, 3, TCC_DTYPE_F64)), "dtype f64 is not f32, bf16 or f16");
  std::vector<int64_t> conv = {1, 2, 5, 5, 3, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 0};
  tcc_abi_library_call c = {TCC_LIBRARY_CALL_CONV2D, TCC_DTYPE_F32, 18, 3, conv.data()};
  EXPECT_EQ(checkLibraryCall(c), "");
  c.dtype = TCC_DTYPE_BF16;
  EXPECT_EQ(checkLibraryCall(c), "");
  EXPECT_EQ(libraryCallOutputDtype(c), TCC_DTYPE_BF16);
  c.dtype = TCC_DTYPE_F64;
  EXPECT_EQ(checkLibraryCall(c), "dtype f64 is not f32, bf16 or f16");
  // A 21st parameter, after the groups and the math mode, is the output's
  // dtype: f32 sums of 16-bit operands.
  std::vector<int64_t> convWide = conv;
  convWide.insert(convWide.end(), {1, TCC_LIBRARY_MATH_EXACT, TCC_DTYPE_F32});
  c = {TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS, TCC_DTYPE_BF16, 21, 3, convWide.data()};
  EXPECT_EQ(checkLibraryCall(c), "");
  EXPECT_EQ(libraryCallOutputDtype(c), TCC_DTYPE_F32);
  EXPECT_EQ(libraryCallMath(c), TCC_LIBRARY_MATH_EXACT);
  convWide[20] = TCC_DTYPE_F16;
  EXPECT_EQ(checkLibraryCall(c), "convolution output dtype 3 with bf16 operands (expected the "
                                 "operands' dtype, or f32 for 16-bit ones)");
  convWide[20] = TCC_DTYPE_BF16;
  c.dtype = TCC_DTYPE_F32;
  EXPECT_EQ(checkLibraryCall(c), "convolution output dtype 4 with f32 operands (expected the "
                                 "operands' dtype, or f32 for 16-bit ones)");
  // A 20th parameter, after the groups, is the math mode.
  std::vector<int64_t> convTf32 = conv;
  convTf32.insert(convTf32.end(), {1, TCC_LIBRARY_MATH_TF32});
  c = {TCC_LIBRARY_CALL_CONV2D, TCC_DTYPE_F32, 20, 3, convTf32.data()};
  EXPECT_EQ(checkLibraryCall(c), "");
  EXPECT_EQ(libraryCallMath(c), TCC_LIBRARY_MATH_TF32);
  c.num_params = 17;
  EXPECT_EQ(checkLibraryCall(c), "17 parameters, expected 18 (or 19, 20 or 21)");
  c = {TCC_LIBRARY_CALL_CONV2D, TCC_DTYPE_F32, 18, 3, conv.data()};
  // The gradient calls take the convolution's parameters and checks.
  for (int32_t kind : {TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA, TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS}) {
    tcc_abi_library_call g = {kind, TCC_DTYPE_F32, 18, 3, conv.data()};
    EXPECT_EQ(checkLibraryCall(g), "");
    std::vector<int64_t> wrong = conv;
    wrong[7] = 4; // OH does not follow
    g.params = wrong.data();
    EXPECT_EQ(checkLibraryCall(g).rfind("convolution output size 4 does not follow", 0), 0u);
    std::vector<int64_t> grouped = conv;
    grouped.push_back(2); // 2 groups do not divide 3 output channels
    g = {kind, TCC_DTYPE_F32, 19, 3, grouped.data()};
    EXPECT_EQ(checkLibraryCall(g), "convolution groups 2 do not divide 2 input and 3 output channels");
  }
  tcc_abi_library_call reserved = {3, TCC_DTYPE_F32, 18, 3, conv.data()};
  EXPECT_EQ(checkLibraryCall(reserved), "unknown kind 3 (a newer tcc made this artifact)");
}

/// oneDNN's LibraryCalls for CALLS (matmuls too, however small: BlasTest
/// covers BLAS), or null (and the test skipped) where oneDNN cannot be
/// loaded.
std::unique_ptr<LibraryCalls> create(const std::vector<tcc_abi_library_call> &calls,
                                     MatmulLibrary matmuls = MatmulLibrary::OneDnn,
                                     SixteenBitCalls sixteenBit = SixteenBitCalls::Auto,
                                     LibraryMath math = LibraryMath::RefuseTf32) {
  try {
    return std::make_unique<LibraryCalls>(calls.data(), int32_t(calls.size()), "test", matmuls,
                                          sixteenBit, math);
  } catch (const Error &e) {
    if (std::string(e.what()).find("cannot load oneDNN") != std::string::npos)
      return nullptr;
    throw;
  }
}

// Tests that a CPU artifact's session refuses TF32 math (a GPU mode) when
// its calls are created, with a message that says why.
TEST(OneDnnTest, RejectsTf32) {
  std::vector<int64_t> tf32 = {1, 4, 5, 6, 0, 0, 0, 0, 0, TCC_LIBRARY_MATH_TF32};
  try {
    if (!create({matmulCall(tf32, 3)}))
      GTEST_SKIP() << "oneDNN cannot be loaded";
    FAIL() << "accepted a TF32 call";
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), TCC_ERROR_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("library call #0: TF32 math is a GPU mode"),
              std::string::npos)
        << e.what();
  }
}

using tcc::testing::decode;
using tcc::testing::encode;
using tcc::testing::randomVector;
using tcc::testing::relativeError;

/// VALUES rounded to DTYPE in place; returns their bytes in DTYPE.
std::vector<uint8_t> roundTo(std::vector<float> &values, int32_t dtype) {
  size_t size = tcc::testing::elementSize(dtype);
  std::vector<uint8_t> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    encode(values[i], dtype, &bytes[i * size]);
    values[i] = decode(&bytes[i * size], dtype);
  }
  return bytes;
}

/// Runs 16-bit call I of LIBRARY on A and B rounded to DTYPE and OUT rounded
/// to OUT_DTYPE (the output, also read when the call accumulates), and
/// checks it against REFERENCE(a, b, out) of the rounded values: within
/// 1e-5 for an f32 output, one rounding for a 16-bit one; and that the call
/// took ROUTE.
void expectSixteenBitCall(
    LibraryCalls &library, size_t i, const std::string &name, std::vector<float> a,
    std::vector<float> b, std::vector<float> out, int32_t dtype, int32_t outDtype,
    SixteenBitCalls route,
    const std::function<std::vector<double>(const std::vector<float> &, const std::vector<float> &,
                                            const std::vector<float> &)> &reference) {
  std::vector<uint8_t> aBytes = roundTo(a, dtype), bBytes = roundTo(b, dtype),
                       outBytes = roundTo(out, outDtype);
  std::vector<double> ref = reference(a, b, out);
  void *operands[] = {aBytes.data(), bBytes.data(), outBytes.data()};
  LibraryCalls::run(&library, int32_t(i), operands);
  ASSERT_EQ(library.takeError(), "") << name;
  std::vector<float> got(out.size());
  for (size_t k = 0; k < got.size(); ++k)
    got[k] = decode(&outBytes[k * tcc::testing::elementSize(outDtype)], outDtype);
  double tolerance = outDtype == TCC_DTYPE_F32 ? 1e-5 : outDtype == TCC_DTYPE_BF16 ? 1e-2 : 2e-3;
  EXPECT_LE(relativeError(got, ref), tolerance) << name;
  bool widened = library.implementations()[i].rfind("widened to f32: ", 0) == 0;
  EXPECT_EQ(widened, route == SixteenBitCalls::Widened) << name;
}

/// Runs MATMUL call I of LIBRARY (parameters PARAMS) on random operands
/// drawn from SEED, A and B rounded to DTYPE and C to C_DTYPE, against the
/// float64 reference (expectSixteenBitCall).
void expectMatmulCall(LibraryCalls &library, size_t i, const std::string &name,
                      const std::vector<int64_t> &params, int32_t dtype, int32_t cDtype,
                      SixteenBitCalls route, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t *p = params.data();
  size_t batch = size_t(p[0]), M = size_t(p[1]), N = size_t(p[2]), K = size_t(p[3]);
  std::vector<float> a = randomVector(batch * M * K, rng), b = randomVector(batch * K * N, rng),
                     c = randomVector(batch * M * N, rng), none;
  expectSixteenBitCall(library, i, name, a, b, c, dtype, cDtype, route,
                       [&](const std::vector<float> &ra, const std::vector<float> &rb,
                           const std::vector<float> &rc) {
                         return tcc::testing::matmulReference(params, ra, rb, rc, none, none);
                       });
}

// Tests every epilogue on 2-D and batched products with plain and
// transposed operands, and a 7-parameter call (an older artifact's), on
// random operands against float64. Oracle: the reference above; tolerance
// 1e-5 of the largest magnitude (fp32 sums of 53 products).
TEST(OneDnnTest, MatmulEpilogues) {
  std::vector<std::vector<int64_t>> params;
  for (int64_t batch : {1, 3})
    for (int64_t epilogue : {0, 1, 2, 3, 4, 5, 7})
      for (int64_t trans : {0, 1})
        params.push_back({batch, 37, 19, 53, trans, 1 - trans, 0, epilogue});
  params.push_back({1, 37, 19, 53, 0, 0, 0}); // 7 parameters
  std::vector<tcc_abi_library_call> calls;
  for (const auto &p : params) {
    int64_t e = p.size() > 7 ? p[7] : 0;
    calls.push_back(matmulCall(p, 3 + !!(e & kBias) + !!(e & kResidual)));
  }
  std::unique_ptr<LibraryCalls> library = create(calls);
  if (!library)
    GTEST_SKIP() << "oneDNN cannot be loaded";
  std::vector<uint8_t> scratch(library->scratchpadSize() + 64);
  library->setScratchpad(scratch.data());

  std::mt19937_64 rng(7);
  for (size_t i = 0; i < params.size(); ++i) {
    const int64_t *p = params[i].data();
    int64_t epilogue = params[i].size() > 7 ? p[7] : 0;
    size_t batch = size_t(p[0]), M = size_t(p[1]), N = size_t(p[2]), K = size_t(p[3]);
    std::vector<float> a = randomVector(batch * M * K, rng), b = randomVector(batch * K * N, rng),
                       bias = randomVector(N, rng), d = randomVector(batch * M * N, rng),
                       c = randomVector(batch * M * N, rng); // overwritten
    std::vector<void *> operands = {a.data(), b.data(), c.data()};
    if (epilogue & kBias)
      operands.push_back(bias.data());
    if (epilogue & kResidual)
      operands.push_back(d.data());
    LibraryCalls::run(library.get(), int32_t(i), operands.data());
    ASSERT_EQ(library->takeError(), "");
    std::vector<double> ref = tcc::testing::matmulReference(params[i], a, b, c, bias, d);
    EXPECT_LE(relativeError(c, ref), 1e-5) << "call #" << i << ": batch " << p[0] << ", trans_a " << p[4]
                                  << ", epilogue " << epilogue;
    if (epilogue & kRelu) // relu really clamps: some inputs were negative
      EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](float x) { return x >= 0; }));
  }
}

// Tests batched products whose operands interleave their rows across heads
// (abi.h's HEADS and INTERLEAVED: attention heads read and written in a
// [batch / H, rows, H, cols] buffer): every subset of A, B and C, plain and
// transposed A and B, accumulating or not, in f32 and bf16 (native where this
// CPU has bf16 instructions, and widened), on awkward shapes (one group of
// heads with K = 1, one head). Oracle: float64 on the same rounded operands;
// tolerance 1e-5 of the largest magnitude for an f32 C, one rounding for bf16.
TEST(OneDnnTest, InterleavedHeads) {
  // batch M N K trans_a trans_b accumulate epilogue C_DTYPE MATH HEADS INTERLEAVED
  std::vector<std::vector<int64_t>> params;
  for (int64_t interleaved = 1; interleaved <= 7; ++interleaved)
    for (int64_t trans = 0; trans < 4; ++trans)
      params.push_back({6, 5, 7, 9, trans & 1, trans >> 1, interleaved & 1, 0, 0,
                        TCC_LIBRARY_MATH_EXACT, 3, interleaved});
  params.push_back({4, 3, 2, 1, 0, 0, 0, 0, 0, TCC_LIBRARY_MATH_EXACT, 4, 7});
  params.push_back({8, 33, 17, 64, 1, 0, 0, 0, 0, TCC_LIBRARY_MATH_EXACT, 1, 6});
  for (SixteenBitCalls route : {SixteenBitCalls::Native, SixteenBitCalls::Widened})
    for (int32_t dtype : {int32_t(TCC_DTYPE_F32), int32_t(TCC_DTYPE_BF16)}) {
      bool native = route == SixteenBitCalls::Native;
      if (dtype == TCC_DTYPE_F32 ? !native : native && !nativeSixteenBitCalls(dtype))
        continue;
      std::vector<tcc_abi_library_call> calls;
      for (const auto &p : params) {
        EXPECT_EQ(checkLibraryCall(matmulCall(p, 3, dtype)), "");
        calls.push_back(matmulCall(p, 3, dtype));
      }
      // Auto: f32 calls that BLAS would take stay on oneDNN.
      std::unique_ptr<LibraryCalls> library = create(calls, MatmulLibrary::Auto, route);
      if (!library)
        GTEST_SKIP() << "oneDNN cannot be loaded";
      std::vector<uint8_t> scratch(library->scratchpadSize() + 64);
      library->setScratchpad(scratch.data());
      const std::string prefix = dtype == TCC_DTYPE_F32                ? "f32"
                                 : route == SixteenBitCalls::Native ? "bf16 native"
                                                                    : "bf16 widened";
      for (size_t i = 0; i < calls.size(); ++i)
        expectMatmulCall(*library, i,
                         prefix + ", call #" + std::to_string(i) + " (" +
                             library->implementations()[i] + ")",
                         params[i], dtype, dtype, route, 23 + i);
    }
  // Malformed: heads that do not divide the batch, unknown bits, an epilogue.
  std::vector<int64_t> bad = {6, 5, 7, 9, 0, 0, 0, 0, 0, 0, 4, 1};
  EXPECT_EQ(checkLibraryCall(matmulCall(bad, 3)), "matmul heads 4 do not divide its batch 6");
  bad = {6, 5, 7, 9, 0, 0, 0, 0, 0, 0, 3, 8};
  EXPECT_EQ(checkLibraryCall(matmulCall(bad, 3)), "matmul interleaved operands 8 has unknown bits");
  bad = {6, 5, 7, 9, 0, 0, 0, kBias, 0, 0, 3, 1};
  EXPECT_EQ(checkLibraryCall(matmulCall(bad, 4)),
            "a matmul with interleaved operands takes no epilogue");
}

// Tests 16-bit matmuls (bf16 and f16 A and B, f32 sums, C in f32 or in the
// operands' type) on awkward shapes, both ways the CPU runs them: oneDNN's
// 16-bit primitive (bf16, where oneDNN has the CPU's bf16 instructions) and
// the f32 primitive on widened copies (panels of rows, each thread its
// own: PanelMatmul). Oracle: float64 products of the same
// rounded operands; tolerance 1e-5 of the largest magnitude for an f32 C
// (f32 sums), and one rounding of C for a 16-bit one (half an ulp of 8 / 11
// significant bits, with margin: 1e-2 bf16, 2e-3 f16). The widened calls
// run once more with matmuls on BLAS, where a CBLAS loads: the 2-D ones
// then widen with oneDNN reorders, multiply with sgemm and round out
// (addWidenedBlasMatmul), or on MKL widen and round in panels of rows
// against packed B; the batched ones stay on oneDNN.
TEST(OneDnnTest, SixteenBitMatmuls) {
  // batch M N K trans_a trans_b accumulate
  const std::vector<std::vector<int64_t>> shapes = {
      {1, 1, 1, 1, 0, 0, 0},      {1, 2, 2, 2, 1, 1, 0},     {1, 1, 37, 13, 0, 1, 0},
      {1, 37, 19, 53, 0, 0, 1},   {3, 37, 19, 53, 1, 0, 0},  {3, 5, 17, 33, 0, 1, 1},
      {1, 64, 48, 96, 0, 1, 0},   {1, 300, 40, 257, 1, 0, 0}, // A^T copied first (native)
      {2, 16, 31, 65, 1, 1, 0},
      // Widened: several row panels (256 and 44 rows with AVX-512, on MKL
      // 128, 128 and 44), accumulating; in a batch too (each matrix's B
      // widened by the thread that takes it).
      {1, 300, 40, 257, 0, 1, 1}, {1, 260, 33, 17, 1, 0, 1}, {3, 300, 40, 33, 1, 1, 1},
      // Widened in the large panels of oneDNN's sgemm below AVX-512 (512,
      // 512 and 76 rows on one thread, 4 x 280 on two; a transposed A's
      // panels transposed into plain rows).
      {1, 1100, 24, 40, 1, 0, 1}, {2, 1030, 16, 9, 1, 1, 0},
      // Too wide for row panels with a 16-bit C: panels of B's and C's
      // columns, with either transpose, accumulating.
      {1, 200, 33000, 8, 0, 1, 0}, {1, 136, 33000, 9, 1, 0, 1}};
  for (MatmulLibrary matmuls : {MatmulLibrary::OneDnn, MatmulLibrary::Blas})
  for (SixteenBitCalls route : {SixteenBitCalls::Native, SixteenBitCalls::Widened})
    for (int32_t dtype : {int32_t(TCC_DTYPE_BF16), int32_t(TCC_DTYPE_F16)})
      for (int32_t cDtype : {int32_t(TCC_DTYPE_F32), dtype}) {
        if (route == SixteenBitCalls::Native && !nativeSixteenBitCalls(dtype))
          continue; // not how this CPU runs them (oneDNN 2.6: no f16 kernels)
        if (matmuls == MatmulLibrary::Blas && (route == SixteenBitCalls::Native || !blas()))
          continue; // BLAS takes widened calls only
        std::vector<std::vector<int64_t>> params;
        std::vector<tcc_abi_library_call> calls;
        for (const auto &shape : shapes) {
          params.push_back(shape);
          params.back().insert(params.back().end(), {0, cDtype, TCC_LIBRARY_MATH_EXACT});
        }
        for (const auto &p : params)
          calls.push_back(matmulCall(p, 3, dtype));
        std::unique_ptr<LibraryCalls> library = create(calls, matmuls, route);
        if (!library)
          GTEST_SKIP() << "oneDNN cannot be loaded";
        std::vector<uint8_t> scratch(library->scratchpadSize() + 64);
        library->setScratchpad(scratch.data());
        const std::string prefix = (route == SixteenBitCalls::Native ? "native " : "widened ") +
                                   std::string(matmuls == MatmulLibrary::Blas ? "(BLAS) " : "");
        for (size_t i = 0; i < calls.size(); ++i) {
          std::string name = prefix + (dtype == TCC_DTYPE_BF16 ? "bf16" : "f16") + " -> " +
                             (cDtype == TCC_DTYPE_F32 ? "f32" : "16-bit") + ", call #" +
                             std::to_string(i) + " (" + library->implementations()[i] + ")";
          expectMatmulCall(*library, i, name, params[i], dtype, cDtype, route, 11 + i);
          bool onBlas = library->implementations()[i].find("blas:") != std::string::npos;
          EXPECT_EQ(onBlas, matmuls == MatmulLibrary::Blas && params[i][0] == 1) << name;
          // Widened calls run in panels: of rows on MKL's packed sgemm
          // (blas.h widenedPanelMatmul) where they fit, not on a BLAS
          // without packing; on oneDNN (PanelMatmul) where the panels its
          // kernels take give every thread one, of rows or else of columns.
          const std::vector<int64_t> &q = params[i];
          bool inPanels = library->implementations()[i].find("(panels of") != std::string::npos;
          auto rowsOf = [&](int64_t m, int64_t n) {
            return widenedPanelRows(q[0], m, n, q[3], cDtype,
                                    serialCall(calls[i]) ? 1 : parallelThreads(),
                                    oneDnnHasAvx512() ? PanelLimits::brgemm()
                                                      : PanelLimits::large());
          };
          bool panelsFit =
              onBlas ? planWidenedPanels(*blas(), q[1], q[2], q[3], cDtype, availableCpus()).rows > 0
                     : rowsOf(q[1], q[2]) > 0 || (q[0] == 1 && rowsOf(q[2], q[1]) > 0);
          EXPECT_EQ(inPanels, route == SixteenBitCalls::Widened && panelsFit) << name;
        }
      }
}

// Tests what the emulated CUDA device needs of the CPU calls beyond a CPU
// artifact's contract (abi.h): 16-bit matmuls with every epilogue, the bias
// and residual of C's type (bf16 / f16, or f32 with an f32 C), 2-D and
// batched, in one row panel and in several (a widened call's epilogue runs
// on each); and TF32 calls computed in fp32 (LibraryMath::Tf32AsFp32), on
// random operands. Oracle: float64 on the same rounded operands; tolerance
// one rounding of C (1e-2 bf16, 2e-3 f16) or 1e-5 for an f32 C.
TEST(OneDnnTest, DeviceContract) {
  std::vector<std::vector<int64_t>> params;
  std::vector<tcc_abi_library_call> calls;
  std::vector<int32_t> cDtypes;
  const std::array<int64_t, 3> kShapes[] = {{37, 19, 53}, {1100, 40, 53}, {200, 33000, 8}};
  for (int32_t dtype : {int32_t(TCC_DTYPE_BF16), int32_t(TCC_DTYPE_F16)})
    for (int32_t cDtype : {int32_t(TCC_DTYPE_F32), dtype})
      for (int64_t batch : {1, 3})
        for (int64_t epilogue : {1, 2, 3, 5, 7})
          // One row panel on one thread; several, across the threads (M
          // 1100: panels of 256 rows, or of up to 512 below AVX-512); a
          // 2-D product too wide for row panels with a 16-bit C (N 33000):
          // column panels.
          for (const auto &[m, n, k] : kShapes) {
            if (n == 33000 && batch > 1)
              continue;
            params.push_back({batch, m, n, k, batch == 3, 0, 0, epilogue, cDtype,
                              TCC_LIBRARY_MATH_EXACT});
            cDtypes.push_back(cDtype);
          }
  size_t sixteenBit = params.size();
  params.push_back({1, 37, 19, 53, 0, 1, 0, 0, 0, TCC_LIBRARY_MATH_TF32});
  params.push_back({2, 5, 33, 17, 1, 0, 0, kBias | kRelu, 0, TCC_LIBRARY_MATH_TF32});
  for (size_t i = 0; i < params.size(); ++i) {
    int64_t e = params[i][7];
    int32_t dtype = i < sixteenBit ? (i < sixteenBit / 2 ? TCC_DTYPE_BF16 : TCC_DTYPE_F16)
                                   : TCC_DTYPE_F32;
    if (i >= sixteenBit)
      cDtypes.push_back(TCC_DTYPE_F32);
    calls.push_back(matmulCall(params[i], 3 + !!(e & kBias) + !!(e & kResidual), dtype));
  }
  std::unique_ptr<LibraryCalls> library =
      create(calls, MatmulLibrary::Auto, SixteenBitCalls::Auto, LibraryMath::Tf32AsFp32);
  if (!library)
    GTEST_SKIP() << "oneDNN cannot be loaded";
  std::vector<uint8_t> scratch(library->scratchpadSize() + 64);
  library->setScratchpad(scratch.data());
  for (size_t i = 0; i < calls.size(); ++i) {
    const int64_t *p = params[i].data();
    int32_t dtype = calls[i].dtype, cDtype = cDtypes[i];
    std::mt19937_64 rng(23 + i);
    size_t batch = size_t(p[0]), M = size_t(p[1]), N = size_t(p[2]), K = size_t(p[3]);
    std::vector<float> a = randomVector(batch * M * K, rng), b = randomVector(batch * K * N, rng),
                       c = randomVector(batch * M * N, rng), bias = randomVector(N, rng),
                       d = randomVector(batch * M * N, rng);
    std::vector<uint8_t> aBytes = roundTo(a, dtype), bBytes = roundTo(b, dtype),
                         cBytes = roundTo(c, cDtype), biasBytes = roundTo(bias, cDtype),
                         dBytes = roundTo(d, cDtype);
    std::vector<double> ref = tcc::testing::matmulReference(params[i], a, b, c, bias, d);
    std::vector<void *> operands = {aBytes.data(), bBytes.data(), cBytes.data()};
    if (p[7] & kBias)
      operands.push_back(biasBytes.data());
    if (p[7] & kResidual)
      operands.push_back(dBytes.data());
    LibraryCalls::run(library.get(), int32_t(i), operands.data());
    std::string name = "call #" + std::to_string(i) + " (" + library->implementations()[i] +
                       "), epilogue " + std::to_string(p[7]);
    ASSERT_EQ(library->takeError(), "") << name;
    // A widened 16-bit call runs in panels, its epilogue on each; a wide
    // one with a 16-bit C in column panels.
    if (i < sixteenBit && !nativeSixteenBitCalls(dtype)) {
      const std::string impl = library->implementations()[i];
      EXPECT_NE(impl.find("(panels of"), std::string::npos) << name;
      if (N == 33000 && cDtype != TCC_DTYPE_F32)
        EXPECT_NE(impl.find("columns)"), std::string::npos) << name;
    }
    std::vector<float> got(c.size());
    for (size_t k = 0; k < got.size(); ++k)
      got[k] = decode(&cBytes[k * tcc::testing::elementSize(cDtype)], cDtype);
    double tolerance = cDtype == TCC_DTYPE_F32 ? 1e-5 : cDtype == TCC_DTYPE_BF16 ? 1e-2 : 2e-3;
    EXPECT_LE(relativeError(got, ref), tolerance) << name;
    if (p[7] & kRelu)
      EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](float x) { return x >= 0; })) << name;
  }
}

/// One convolution case: the parameters (18, or 19 with groups) and what
/// makes it awkward.
struct ConvCase {
  std::vector<int64_t> params;
  const char *what;
};

// N C H W F KH KW OH OW sh sw dh dw pt pl pb pr acc [groups]
const ConvCase kConvCases[] = {
    {{2, 3, 1, 1, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0}, "1x1 map, 1x1 kernel"},
    {{1, 2, 2, 2, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0}, "2x2 map, 3x3 kernel, batch 1"},
    {{2, 2, 2, 2, 3, 4, 3, 2, 2, 1, 1, 1, 1, 2, 1, 1, 1, 0}, "kernel 4x3 larger than the 2x2 map"},
    {{2, 3, 7, 7, 2, 2, 2, 2, 2, 3, 3, 1, 1, 0, 0, 0, 0, 0}, "stride 3 > kernel 2, rows never read"},
    {{1, 2, 6, 7, 3, 3, 2, 3, 3, 2, 3, 1, 1, 1, 0, 0, 2, 0}, "asymmetric padding, strides 2x3"},
    {{1, 2, 7, 7, 2, 3, 3, 5, 4, 1, 2, 2, 1, 1, 1, 1, 1, 0}, "dilation 2x1, stride 1x2, batch 1"},
    {{2, 4, 5, 5, 4, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 4}, "depthwise, stride 2"},
    {{2, 16, 1, 1, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 16}, "depthwise 3x3 on a 1x1 map"},
    {{2, 24, 2, 2, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 24}, "depthwise 3x3 on a 2x2 map"},
    {{2, 24, 2, 2, 24, 3, 3, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0, 24}, "depthwise stride 2, 2x2 to 1x1"},
    {{2, 48, 4, 4, 48, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0, 48}, "depthwise stride 2, 4x4 to 2x2"},
    {{2, 72, 4, 4, 72, 3, 3, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0, 72}, "depthwise, 72 channels (AVX2 blocks of 8)"},
    {{2, 4, 6, 6, 8, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 0, 4}, "depthwise, multiplier 2"},
    {{2, 4, 6, 6, 6, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2}, "2 groups"},
    {{3, 8, 9, 9, 8, 3, 3, 5, 5, 2, 2, 1, 1, 1, 1, 1, 1, 1, 8}, "depthwise, accumulating"},
    {{2, 3, 6, 5, 4, 3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0, 1}, "accumulating, strided"},
    {{1, 16, 3, 3, 16, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0}, "16 channels, 3x3 map (blocked filters)"},
    {{1, 16, 3, 3, 16, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, "16 channels, accumulating"},
};

// Tests CONV2D and both gradient calls on every awkward case above on
// random operands; an accumulating call adds to random old contents.
// Oracle: float64 CONV2D, and float64 central differences of
// sum(CONV2D(X, W) * dY) for the gradients (runtime/testing/conv_reference.h);
// tolerance 1e-5 of the largest magnitude (fp32 sums of at most 75 products).
TEST(OneDnnTest, ConvolutionsAndGradients) {
  const int32_t kinds[] = {TCC_LIBRARY_CALL_CONV2D, TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA,
                           TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS};
  std::vector<tcc_abi_library_call> calls;
  for (const ConvCase &c : kConvCases)
    for (int32_t kind : kinds) {
      tcc_abi_library_call call = {kind, TCC_DTYPE_F32, int32_t(c.params.size()), 3,
                                   c.params.data()};
      ASSERT_EQ(checkLibraryCall(call), "") << c.what;
      calls.push_back(call);
    }
  std::unique_ptr<LibraryCalls> library = create(calls);
  if (!library)
    GTEST_SKIP() << "oneDNN cannot be loaded";
  std::vector<uint8_t> scratch(library->scratchpadSize() + 64);
  library->setScratchpad(scratch.data());
  std::vector<std::string> impls = library->implementations();
  std::mt19937_64 rng(11);
  for (size_t i = 0; i < calls.size(); ++i) {
    const ConvCase &c = kConvCases[i / 3];
    int32_t kind = calls[i].kind;
    std::vector<size_t> sizes = tcc::testing::convOperandSizes(kind, c.params);
    std::vector<float> a = randomVector(sizes[0], rng), b = randomVector(sizes[1], rng),
                       out = randomVector(sizes[2], rng);
    std::vector<double> ref = tcc::testing::convCallReference(kind, c.params, a, b, out);
    void *operands[] = {a.data(), b.data(), out.data()};
    LibraryCalls::run(library.get(), int32_t(i), operands);
    ASSERT_EQ(library->takeError(), "");
    EXPECT_LE(relativeError(out, ref), 1e-5) << c.what << ", kind " << kind << " (" << impls[i] << ")";
  }
  // On an AVX-512 CPU oneDNN's f32 filter gradients of 16 channels are
  // blocked by 16 output channels innermost: the route out is taken, and
  // checked above.
  if (hostCpuFeatures().count("avx512f"))
    EXPECT_TRUE(std::any_of(impls.begin(), impls.end(), [](const std::string &impl) {
      return impl.find("(filter reordered in two steps)") != std::string::npos;
    }));
}

// Tests 16-bit CONV2D and both gradient calls (bf16 and f16 X, W and dY,
// f32 sums, the output in f32 or the inputs' type) on every awkward case
// above and a strided one of 17 to 18 channels (not multiples of 16), both
// ways the CPU runs them: oneDNN's 16-bit primitives (bf16, where oneDNN has
// the CPU's bf16 instructions) and the f32 primitives on widened copies; an
// accumulating call adds to random old contents of the output's type.
// Oracle: float64 convolutions (central differences for the gradients) of
// the same rounded operands; tolerance 1e-5 of the largest magnitude for an
// f32 output (f32 sums), one rounding for a 16-bit one (1e-2 bf16, 2e-3
// f16).
TEST(OneDnnTest, SixteenBitConvolutions) {
  std::vector<ConvCase> cases(std::begin(kConvCases), std::end(kConvCases));
  cases.push_back({{1, 17, 5, 5, 18, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0}, "17 to 18 channels, stride 2"});
  const int32_t kinds[] = {TCC_LIBRARY_CALL_CONV2D, TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA,
                           TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS};
  for (SixteenBitCalls route : {SixteenBitCalls::Native, SixteenBitCalls::Widened})
    for (int32_t dtype : {int32_t(TCC_DTYPE_BF16), int32_t(TCC_DTYPE_F16)})
      for (int32_t outDtype : {int32_t(TCC_DTYPE_F32), dtype}) {
        if (route == SixteenBitCalls::Native && !nativeSixteenBitCalls(dtype))
          continue; // not how this CPU runs them (oneDNN 2.6: no f16 kernels)
        // {..., accumulate, groups, math, output dtype}
        std::vector<std::vector<int64_t>> params;
        std::vector<tcc_abi_library_call> calls;
        for (const ConvCase &c : cases) {
          std::vector<int64_t> p = c.params;
          if (p.size() == 18)
            p.push_back(1);
          p.insert(p.end(), {TCC_LIBRARY_MATH_EXACT, outDtype});
          params.push_back(p);
        }
        for (const auto &p : params)
          for (int32_t kind : kinds) {
            tcc_abi_library_call call = {kind, dtype, int32_t(p.size()), 3, p.data()};
            ASSERT_EQ(checkLibraryCall(call), "");
            calls.push_back(call);
          }
        std::unique_ptr<LibraryCalls> library = create(calls, MatmulLibrary::OneDnn, route);
        if (!library)
          GTEST_SKIP() << "oneDNN cannot be loaded";
        std::vector<uint8_t> scratch(library->scratchpadSize() + 64);
        library->setScratchpad(scratch.data());
        std::mt19937_64 rng(17);
        // oneDNN's native bf16 kernels pair input channels innermost in
        // their filters: the forward filters of 16 channels and more take
        // the route in, checked below.
        if (route == SixteenBitCalls::Native) {
          std::vector<std::string> impls = library->implementations();
          EXPECT_TRUE(std::any_of(impls.begin(), impls.end(), [](const std::string &impl) {
            return impl.find("(filter reordered in two steps)") != std::string::npos;
          }));
        }
        for (size_t i = 0; i < calls.size(); ++i) {
          const std::vector<int64_t> &p = params[i / 3];
          int32_t kind = calls[i].kind;
          std::string name = std::string(route == SixteenBitCalls::Native ? "native " : "widened ") +
                             (dtype == TCC_DTYPE_BF16 ? "bf16" : "f16") + " -> " +
                             (outDtype == TCC_DTYPE_F32 ? "f32" : "16-bit") + ", " +
                             cases[i / 3].what + ", kind " + std::to_string(kind) + " (" +
                             library->implementations()[i] + ")";
          std::vector<size_t> sizes = tcc::testing::convOperandSizes(kind, p);
          std::vector<float> a = randomVector(sizes[0], rng), b = randomVector(sizes[1], rng),
                             out = randomVector(sizes[2], rng);
          expectSixteenBitCall(*library, i, name, a, b, out, dtype, outDtype, route,
                               [&](const std::vector<float> &ra, const std::vector<float> &rb,
                                   const std::vector<float> &rout) {
                                 return tcc::testing::convCallReference(kind, p, ra, rb, rout);
                               });
        }
      }
}

// Tests the kernel of a native bf16 weight gradient on a CPU with AMX
// (amxSuitsWeightGradient in runtime/cpu/onednn.cpp): over 16 output
// points (3x3 on 1x1 maps, batch 16) and on a 3-channel input it is the
// AVX512-BF16 kernel oneDNN ranks after AMX, over 256 points of 16
// channels AMX's; each agrees with float64 (the oracle and tolerance of
// SixteenBitConvolutions). Skipped without AMX.
TEST(OneDnnTest, AmxWeightGradientChoice) {
  const ConvCase cases[] = {
      {{16, 16, 1, 1, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}, "16 points"},
      {{4, 3, 16, 16, 16, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1, 0}, "3 channels"},
      {{4, 16, 8, 8, 16, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 1, 1, 0}, "256 points"}};
  const bool amx[] = {false, false, true};
  std::vector<std::vector<int64_t>> params;
  for (const ConvCase &c : cases) {
    params.push_back(c.params);
    params.back().insert(params.back().end(), {1, TCC_LIBRARY_MATH_EXACT, TCC_DTYPE_F32});
  }
  std::vector<tcc_abi_library_call> calls;
  for (const auto &p : params)
    calls.push_back({TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS, TCC_DTYPE_BF16, int32_t(p.size()),
                     3, p.data()});
  // oneDNN has no bf16 weight gradient below AVX512-BF16: ask for its ISA
  // (which loads it) before asking for the calls.
  if (!create({}))
    GTEST_SKIP() << "oneDNN cannot be loaded";
  if (sixteenBitCallsIsa() != "AMX")
    GTEST_SKIP() << "no AMX";
  std::unique_ptr<LibraryCalls> library = create(calls, MatmulLibrary::OneDnn, SixteenBitCalls::Native);
  std::vector<uint8_t> scratch(library->scratchpadSize() + 64);
  library->setScratchpad(scratch.data());
  std::mt19937_64 rng(23);
  for (size_t i = 0; i < calls.size(); ++i) {
    std::string impl = library->implementations()[i];
    std::string name = std::string(cases[i].what) + " (" + impl + ")";
    EXPECT_EQ(impl.find("amx") != std::string::npos, amx[i]) << name;
    std::vector<size_t> sizes = tcc::testing::convOperandSizes(calls[i].kind, params[i]);
    expectSixteenBitCall(*library, i, name, randomVector(sizes[0], rng), randomVector(sizes[1], rng),
                         randomVector(sizes[2], rng), TCC_DTYPE_BF16, TCC_DTYPE_F32,
                         SixteenBitCalls::Native,
                         [&](const std::vector<float> &ra, const std::vector<float> &rb,
                             const std::vector<float> &rout) {
                           return tcc::testing::convCallReference(calls[i].kind, params[i], ra, rb,
                                                                  rout);
                         });
  }
}

// Tests a filter set (tcc-filter-layouts): a forward, a data-gradient and
// an accumulating weight-gradient call of one 64x64x3x3 filter on 5x5 maps,
// in f32 and in bf16 (native where the CPU has it, else widened), once with
// the filter plain and once kept in the set's layout. Oracle: the plain
// calls; a reorder is a permutation, so the kept calls must give the same
// bits (the weight gradient read back through convertFilter), and
// convertFilter must round-trip a filter exactly. On a CPU with AVX2 or
// AVX-512 oneDNN reads these filters blocked, so the set must be kept.
TEST(OneDnnTest, FilterLayoutSets) {
  // N C H W F KH KW OH OW sh sw dh dw pt pl pb pr acc groups math out
  std::vector<int64_t> p = {2, 64, 5, 5, 64, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1,
                            TCC_LIBRARY_MATH_EXACT, TCC_DTYPE_F32};
  std::vector<int64_t> acc = p;
  acc[17] = 1;
  for (int32_t dtype :
       {int32_t(TCC_DTYPE_F32), int32_t(TCC_DTYPE_BF16), int32_t(TCC_DTYPE_F16)}) {
    std::vector<int64_t> fp = p, fa = acc;
    fp.back() = fa.back() = dtype;
    std::vector<tcc_abi_library_call> calls = {
        {TCC_LIBRARY_CALL_CONV2D, dtype, int32_t(fp.size()), 3, fp.data()},
        {TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA, dtype, int32_t(fp.size()), 3, fp.data()},
        {TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS, dtype, int32_t(fa.size()), 3, fa.data()}};
    std::unique_ptr<LibraryCalls> plain = create(calls);
    if (!plain)
      GTEST_SKIP() << "oneDNN cannot be loaded";
    LibraryCalls kept(calls.data(), int32_t(calls.size()), "test", MatmulLibrary::OneDnn,
                      SixteenBitCalls::Auto, LibraryMath::RefuseTf32, {{0, 1, 2}});
    std::string what = tcc::rt::dtypeName(dtype);
    const std::set<std::string> &features = hostCpuFeatures();
    if (!features.count("avx2") && !features.count("avx512f")) {
      EXPECT_FALSE(kept.keepsFilterLayout(0)) << what << ": no blocked filters without AVX2";
      continue;
    }
    ASSERT_TRUE(kept.keepsFilterLayout(0)) << what;
    // A set naming a row that is no convolution, or a row of another set,
    // is a malformed artifact.
    for (std::vector<std::vector<int32_t>> bad :
         {std::vector<std::vector<int32_t>>{{0, 3}}, {{0, 1}, {1, 2}}}) {
      try {
        LibraryCalls wrong(calls.data(), int32_t(calls.size()), "test", MatmulLibrary::OneDnn,
                           SixteenBitCalls::Auto, LibraryMath::RefuseTf32, bad);
        ADD_FAILURE() << what << ": a malformed set was accepted";
      } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("filter layout set"), std::string::npos) << e.what();
      }
    }
    ASSERT_EQ(kept.filterElements(0), 64 * 64 * 9);
    for (const std::string &impl : kept.implementations())
      EXPECT_NE(impl.find("(filter"), std::string::npos) << what << ": " << impl;
    std::vector<uint8_t> scratchPlain(plain->scratchpadSize() + 64),
        scratchKept(kept.scratchpadSize() + 64);
    plain->setScratchpad(scratchPlain.data());
    kept.setScratchpad(scratchKept.data());
    std::mt19937_64 rng(23);
    size_t size = tcc::testing::elementSize(dtype);
    auto random = [&](size_t n, int32_t type) {
      std::vector<float> v = randomVector(n, rng);
      return roundTo(v, type);
    };
    std::vector<uint8_t> x = random(2 * 64 * 25, dtype), dy = random(2 * 64 * 25, dtype),
                         w = random(64 * 64 * 9, dtype);
    // The filter in the set's layout, and back.
    std::vector<uint8_t> wKept(w.size()), wBack(w.size());
    kept.convertFilter(0, dtype, w.data(), wKept.data(), true);
    kept.convertFilter(0, dtype, wKept.data(), wBack.data(), false);
    EXPECT_EQ(wBack, w) << what << ": the round trip";
    EXPECT_NE(wKept, w) << what << ": the layout is a permutation of the plain one";
    // Forward and data gradient.
    for (int call : {0, 1}) {
      std::vector<uint8_t> outPlain(2 * 64 * 25 * size), outKept(outPlain.size());
      void *plainOperands[] = {call == 0 ? x.data() : dy.data(), w.data(), outPlain.data()};
      void *keptOperands[] = {call == 0 ? x.data() : dy.data(), wKept.data(), outKept.data()};
      LibraryCalls::run(plain.get(), call, plainOperands);
      LibraryCalls::run(&kept, call, keptOperands);
      ASSERT_EQ(plain->takeError(), "");
      ASSERT_EQ(kept.takeError(), "");
      EXPECT_EQ(outKept, outPlain) << what << ", call " << call;
    }
    // The weight gradient, added to old contents (f32: the call's output
    // dtype is the operands' for bf16, so both are DTYPE).
    std::vector<uint8_t> dwPlain = random(64 * 64 * 9, dtype), dwKept(dwPlain.size()),
                         dwBack(dwPlain.size());
    kept.convertFilter(0, dtype, dwPlain.data(), dwKept.data(), true);
    void *plainOperands[] = {x.data(), dy.data(), dwPlain.data()};
    void *keptOperands[] = {x.data(), dy.data(), dwKept.data()};
    LibraryCalls::run(plain.get(), 2, plainOperands);
    LibraryCalls::run(&kept, 2, keptOperands);
    ASSERT_EQ(plain->takeError(), "");
    ASSERT_EQ(kept.takeError(), "");
    kept.convertFilter(0, dtype, dwKept.data(), dwBack.data(), false);
    EXPECT_EQ(dwBack, dwPlain) << what << ": the weight gradient";
  }
}

// Tests forward depthwise CONV2D calls on zoo mobilenet_v2's own shapes
// (batch 16; 16x16 to 2x2 maps, stride 2 to a 1x1 map, 16 to 480
// channels), whose oneDNN kernels differ from the small cases' (blocked
// over channels). Oracle: float64 CONV2D; tolerance 1e-5 of the largest
// magnitude (sums of 9 products). docs/cpu-codegen.md tells why these are
// not calls in the pipeline even so.
TEST(OneDnnTest, DepthwiseOnMobilenetShapes) {
  std::vector<std::vector<int64_t>> params = {
      {16, 16, 16, 16, 16, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1, 0, 16},
      {16, 48, 16, 16, 48, 3, 3, 8, 8, 2, 2, 1, 1, 1, 1, 1, 1, 0, 48},
      {16, 96, 8, 8, 96, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 1, 1, 0, 96},
      {16, 480, 2, 2, 480, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 480},
      {16, 288, 2, 2, 288, 3, 3, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0, 288},
  };
  std::vector<tcc_abi_library_call> calls;
  for (auto &p : params)
    calls.push_back({TCC_LIBRARY_CALL_CONV2D, TCC_DTYPE_F32, 19, 3, p.data()});
  std::unique_ptr<LibraryCalls> library = create(calls);
  if (!library)
    GTEST_SKIP() << "oneDNN cannot be loaded";
  std::vector<uint8_t> scratch(library->scratchpadSize() + 64);
  library->setScratchpad(scratch.data());
  std::mt19937_64 rng(3);
  for (size_t i = 0; i < params.size(); ++i) {
    tcc::testing::ConvSizes n = tcc::testing::convSizes(params[i]);
    std::vector<float> a = randomVector(n.x, rng), b = randomVector(n.w, rng),
                       out = randomVector(n.y, rng);
    std::vector<double> ref =
        tcc::testing::convCallReference(TCC_LIBRARY_CALL_CONV2D, params[i], a, b, out);
    void *operands[] = {a.data(), b.data(), out.data()};
    LibraryCalls::run(library.get(), int32_t(i), operands);
    ASSERT_EQ(library->takeError(), "");
    EXPECT_LE(relativeError(out, ref), 1e-5) << "case " << i << " (" << library->implementations()[i] << ")";
  }
}

} // namespace
