//===- HalfTest.cpp - the runtime's 16-bit <-> f32 conversions ------------===//
//
// Oracle: the CPU's own F16C instructions (vcvtph2ps, vcvtps2ph with round
// to nearest even) for the portable f16 conversions, bit for bit; bf16's
// definition (the nearer neighbour, computed in double) for its rounding;
// these, once checked, for the buffer conversions (vector and tail code,
// across threads); and a few values IEEE 754 fixes.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/half.h"

#include "runtime/cpu/cpu_features.h"
#include "runtime/cpu/parallel.h"
#include "runtime/include/tcc/abi.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <immintrin.h>
#include <random>
#include <vector>

using namespace tcc::rt;

namespace {

/// The bits of FROM as a To (C++17 has no std::bit_cast).
template <typename To, typename From> To bitCast(From from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}
uint32_t bitsOf(float f) { return bitCast<uint32_t>(f); }
float floatOf(uint32_t u) { return bitCast<float>(u); }

bool hasF16c() { return hostCpuFeatures().count("f16c") && hostCpuFeatures().count("avx"); }

__attribute__((target("f16c"))) float widenByF16c(uint16_t h) { return _cvtsh_ss(h); }

__attribute__((target("f16c"))) uint16_t roundByF16c(float f) {
  return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/// f32 values around every boundary of the f16 range: the largest finite
/// f16, the overflow tie, the normal and subnormal limits, ties at each
/// binade, zeros, infinities, NaNs, f32 subnormals.
std::vector<float> edgeValues() {
  std::vector<uint32_t> bits = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                                0xffc00001, 0x7f800001, 0x7fbfffff, 0x00000001, 0x807fffff,
                                0x477fe000, 0x477fdfff, 0x477fe001, 0x477fefff, 0x477ff000,
                                0x38800000, 0x387fffff, 0x387ff000, 0x33000000, 0x33000001,
                                0x32ffffff, 0x33800000, 0x33c00000, 0x3f801000, 0x3f803000,
                                0x3f800fff, 0x3f801001};
  std::vector<float> values;
  for (uint32_t b : bits)
    for (uint32_t sign : {0u, 0x80000000u})
      values.push_back(floatOf(b ^ sign));
  return values;
}

// Tests the portable widening of every f16 against vcvtph2ps, and values
// IEEE fixes.
TEST(HalfTest, WidensEveryHalf) {
  EXPECT_EQ(halfToFloatPortable(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloatPortable(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloatPortable(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloatPortable(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(halfToFloatPortable(0x7c01)));
  if (!hasF16c())
    GTEST_SKIP() << "no F16C to compare with";
  for (uint32_t h = 0; h <= 0xffff; ++h)
    ASSERT_EQ(bitsOf(halfToFloatPortable(uint16_t(h))), bitsOf(widenByF16c(uint16_t(h))))
        << std::hex << "f16 0x" << h;
}

// Tests the portable rounding against vcvtps2ph on the edges of the f16
// range and on random f32 bit patterns of every exponent, and values IEEE
// fixes (ties to even; 65520 overflows).
TEST(HalfTest, RoundsLikeTheInstruction) {
  EXPECT_EQ(floatToHalfPortable(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfPortable(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalfPortable(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalfPortable(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalfPortable(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalfPortable(std::ldexp(1.0f, -25)), 0x0000);             // tie to even 0
  EXPECT_EQ(floatToHalfPortable(std::ldexp(3.0f, -25)), 0x0002);             // tie to even 2
  EXPECT_EQ(floatToHalfPortable(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie to even
  EXPECT_EQ(floatToHalfPortable(1.0f + std::ldexp(3.0f, -11)), 0x3c02);      // tie to even
  if (!hasF16c())
    GTEST_SKIP() << "no F16C to compare with";
  std::vector<float> values = edgeValues();
  std::mt19937_64 rng(5);
  for (int i = 0; i < 1 << 22; ++i)
    values.push_back(floatOf(uint32_t(rng())));
  // Every f16 value and the f32 values halfway between neighbours.
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    float lo = halfToFloatPortable(uint16_t(h)), hi = halfToFloatPortable(uint16_t(h + 1));
    values.push_back(lo);
    values.push_back(-((lo + hi) / 2));
  }
  for (float f : values)
    ASSERT_EQ(floatToHalfPortable(f), roundByF16c(f)) << std::hex << "f32 0x" << bitsOf(f);
}

/// bf16's rounding, from its definition: of the two bf16 values around F
/// (2^128 above the largest finite one), the nearer, the even one on a tie;
/// a NaN keeps its top bits, made quiet.
uint16_t bf16Reference(float f) {
  uint32_t u = bitsOf(f);
  auto below = uint16_t(u >> 16); // toward zero
  if (std::isnan(f))
    return uint16_t(below | 0x40);
  double low = floatOf(uint32_t(below) << 16);
  if (low == double(f))
    return below;
  auto above = uint16_t(below + 1); // away from zero (0x7f80: infinity)
  double high = (above & 0x7fff) == 0x7f80 ? std::copysign(std::ldexp(1.0, 128), double(f))
                                           : double(floatOf(uint32_t(above) << 16));
  double toLow = std::fabs(double(f) - low), toHigh = std::fabs(high - double(f));
  if (toLow != toHigh)
    return toLow < toHigh ? below : above;
  return (below & 1) ? above : below;
}

float bf16Widened(uint16_t h) { return floatOf(uint32_t(h) << 16); }

// Tests bf16 rounding on the calling thread against its definition: the
// edges of the f16 and bf16 ranges, ties at several binades, and random f32
// bit patterns of every exponent; and the reference on values IEEE fixes.
TEST(HalfTest, RoundsBf16ToNearestEven) {
  EXPECT_EQ(bf16Reference(1.0f), 0x3f80);
  EXPECT_EQ(bf16Reference(floatOf(0x3f808000)), 0x3f80); // tie to even
  EXPECT_EQ(bf16Reference(floatOf(0x3f818000)), 0x3f82); // tie to even
  EXPECT_EQ(bf16Reference(floatOf(0x7f7f8000)), 0x7f80); // the overflow tie
  EXPECT_EQ(bf16Reference(floatOf(0x7f7f7fff)), 0x7f7f);
  EXPECT_EQ(bf16Reference(-INFINITY), 0xff80);
  std::vector<float> values = edgeValues();
  for (uint32_t b : {0x7f7f8000u, 0x7f7f7fffu, 0x7f7fffffu, 0x00008000u, 0x00018000u, 0x3f808000u,
                     0x3f818000u, 0x7fffffffu, 0x7f800001u})
    for (uint32_t sign : {0u, 0x80000000u})
      values.push_back(floatOf(b ^ sign));
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1 << 22; ++i)
    values.push_back(floatOf(uint32_t(rng())));
  std::vector<uint16_t> rounded(values.size());
  roundOnThread(TCC_DTYPE_BF16, values.data(), rounded.data(), int64_t(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(rounded[i], bf16Reference(values[i])) << std::hex << "f32 0x" << bitsOf(values[i]);
}

// Tests the buffer conversions of both 16-bit types (vector code, tails,
// chunks across 1 and 2 threads, rounding with and without a sum) against
// the checked conversion of each element.
TEST(HalfTest, Buffers) {
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal(0.0f, 100.0f);
  for (int32_t dtype : {int32_t(TCC_DTYPE_F16), int32_t(TCC_DTYPE_BF16)}) {
    const bool bf16 = dtype == TCC_DTYPE_BF16;
    auto widenOne = [&](uint16_t h) { return bf16 ? bf16Widened(h) : halfToFloatPortable(h); };
    auto roundOne = [&](float f) { return bf16 ? bf16Reference(f) : floatToHalfPortable(f); };
    const char *type = bf16 ? "bf16, " : "f16, ";
    for (int threads : {1, 2}) {
      ParallelThreadsScope scope(threads);
      for (int64_t count : {1, 7, 8, 9, 33, 40000, 100003}) {
        const size_t n = size_t(count);
        std::vector<float> f(n), widened(n);
        std::vector<uint16_t> h(n), rounded(n);
        for (int64_t i = 0; i < count; ++i) {
          f[size_t(i)] = normal(rng);
          h[size_t(i)] = roundOne(normal(rng));
        }
        std::vector<float> edges = edgeValues();
        for (size_t i = 0; i < edges.size() && i < f.size(); ++i)
          f[i] = edges[i];
        widenBuffer(dtype, h.data(), widened.data(), count);
        for (int64_t i = 0; i < count; ++i)
          ASSERT_EQ(bitsOf(widened[size_t(i)]), bitsOf(widenOne(h[size_t(i)])))
              << type << count << " elements, " << threads << " threads, #" << i;
        roundBuffer(dtype, f.data(), rounded.data(), count, false);
        for (int64_t i = 0; i < count; ++i)
          ASSERT_EQ(rounded[size_t(i)], roundOne(f[size_t(i)]))
              << type << count << " elements, " << threads << " threads, #" << i;
        std::vector<uint16_t> summed = h;
        roundBuffer(dtype, f.data(), summed.data(), count, true);
        for (int64_t i = 0; i < count; ++i)
          ASSERT_EQ(summed[size_t(i)], roundOne(f[size_t(i)] + widenOne(h[size_t(i)])))
              << type << count << " elements, " << threads << " threads, sum #" << i;
      }
    }
  }
}

} // namespace
