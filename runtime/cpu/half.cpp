//===- half.cpp - 16-bit <-> f32 conversion of buffers ---------------------===//

#include "runtime/cpu/half.h"

#include "runtime/cpu/cpu_features.h"
#include "runtime/cpu/parallel.h"
#include "runtime/include/tcc/abi.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>

namespace tcc::rt {

namespace {

/// Elements per task of a parallel conversion: 64-128 KiB per task, so a
/// task's fork and join cost little beside its memory traffic.
constexpr int64_t kChunk = 1 << 15;

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

bool hasF16c() {
  static const bool has = [] {
    const auto &features = hostCpuFeatures();
    return features.count("f16c") && features.count("avx");
  }();
  return has;
}

__attribute__((target("avx,f16c"))) void widenF16c(const uint16_t *from, float *to,
                                                    int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm256_storeu_ps(to + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                 reinterpret_cast<const __m128i *>(from + i))));
  for (; i < count; ++i)
    to[i] = _cvtsh_ss(from[i]);
}

__attribute__((target("avx,f16c"))) void roundF16c(const float *from, uint16_t *to,
                                                   int64_t count, bool sum) {
  constexpr int kNearestEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m256 x = _mm256_loadu_ps(from + i);
    auto *at = reinterpret_cast<__m128i *>(to + i);
    if (sum)
      x = _mm256_add_ps(x, _mm256_cvtph_ps(_mm_loadu_si128(at)));
    _mm_storeu_si128(at, _mm256_cvtps_ph(x, kNearestEven));
  }
  for (; i < count; ++i)
    to[i] = _cvtss_sh(sum ? from[i] + _cvtsh_ss(to[i]) : from[i], kNearestEven);
}

void widenSerial(const uint16_t *from, float *to, int64_t count) {
  if (hasF16c())
    return widenF16c(from, to, count);
  for (int64_t i = 0; i < count; ++i)
    to[i] = halfToFloatPortable(from[i]);
}

void roundSerial(const float *from, uint16_t *to, int64_t count, bool sum) {
  if (hasF16c())
    return roundF16c(from, to, count, sum);
  for (int64_t i = 0; i < count; ++i)
    to[i] = floatToHalfPortable(sum ? from[i] + halfToFloatPortable(to[i]) : from[i]);
}

/// bf16 <-> f32: the high half of the f32 bits; rounding adds 0x7fff and
/// the kept half's lowest bit (to nearest even), a NaN keeps its top bits
/// with the quiet bit set; with SUM it rounds FROM[i] + TO[i] (the sum in
/// f32). Written for the compiler's vectorizer, inlined once into AVX2 code
/// and once into the baseline's.
__attribute__((always_inline)) inline void widenBf16(const uint16_t *from, float *to, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    uint32_t u = uint32_t(from[i]) << 16;
    std::memcpy(to + i, &u, sizeof u);
  }
}
template <bool Sum>
__attribute__((always_inline)) inline void roundBf16(const float *from, uint16_t *to, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    float x = from[i];
    if (Sum)
      x += floatOf(uint32_t(to[i]) << 16);
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    uint32_t rounded = (u + 0x7fff + ((u >> 16) & 1)) >> 16;
    to[i] = uint16_t((u & 0x7fffffff) > 0x7f800000 ? (u >> 16) | 0x40 : rounded);
  }
}
__attribute__((target("avx2"))) void widenBf16Avx2(const uint16_t *from, float *to,
                                                   int64_t count) {
  widenBf16(from, to, count);
}
template <bool Sum>
__attribute__((target("avx2"))) void roundBf16Avx2(const float *from, uint16_t *to,
                                                   int64_t count) {
  roundBf16<Sum>(from, to, count);
}

bool hasAvx2() {
  static const bool has = hostCpuFeatures().count("avx2");
  return has;
}

/// Runs BODY(begin, end) over [0, COUNT) in chunks across the calling
/// thread's OpenMP threads (on the calling thread alone when one chunk).
template <typename Body> void chunked(int64_t count, Body body) {
  int64_t chunks = (count + kChunk - 1) / kChunk;
  if (chunks <= 1 || parallelThreads() <= 1) {
    body(int64_t(0), count);
    return;
  }
  struct Context {
    Body *body;
    int64_t count;
  } context = {&body, count};
  parallelFor(
      0, chunks, parallelThreads(),
      [](void *c, int64_t chunk) {
        auto *ctx = static_cast<Context *>(c);
        int64_t begin = chunk * kChunk;
        (*ctx->body)(begin, std::min(ctx->count, begin + kChunk));
      },
      &context);
}

} // namespace

void widenOnThread(int32_t dtype, const uint16_t *from, float *to, int64_t count) {
  if (dtype == TCC_DTYPE_F16)
    widenSerial(from, to, count);
  else if (hasAvx2())
    widenBf16Avx2(from, to, count);
  else
    widenBf16(from, to, count);
}

void roundOnThread(int32_t dtype, const float *from, uint16_t *to, int64_t count, bool sum) {
  if (dtype == TCC_DTYPE_F16)
    roundSerial(from, to, count, sum);
  else if (hasAvx2())
    sum ? roundBf16Avx2<true>(from, to, count) : roundBf16Avx2<false>(from, to, count);
  else
    sum ? roundBf16<true>(from, to, count) : roundBf16<false>(from, to, count);
}

float halfToFloatPortable(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0x1f) // infinity, or NaN made quiet with its payload kept
    return floatOf(sign | 0x7f800000 | (mantissa << 13) | (mantissa ? 0x400000 : 0));
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in f32
    float magnitude = float(mantissa) * floatOf(0x33800000);
    return floatOf(sign | bitsOf(magnitude));
  }
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t floatToHalfPortable(float f) {
  uint32_t x = bitsOf(f);
  auto sign = uint16_t((x >> 16) & 0x8000);
  uint32_t magnitude = x & 0x7fffffff;
  if (magnitude >= 0x7f800000) // infinity, or NaN made quiet with its payload's top bits
    return sign | 0x7c00 |
           (magnitude > 0x7f800000 ? uint16_t(0x200 | ((magnitude >> 13) & 0x3ff)) : 0);
  if (magnitude >= 0x477ff000) // 65520 and up round to infinity
    return sign | 0x7c00;
  if (magnitude < 0x38800000) { // below 2^-14: an f16 subnormal (or zero)
    if (magnitude < 0x33000000) // at most 2^-25: rounds to zero
      return sign;
    // magnitude * 2^24 rounded to an integer, to nearest even.
    uint32_t mantissa = (magnitude & 0x7fffff) | 0x800000;
    int shift = 126 - int(magnitude >> 23);
    uint32_t result = mantissa >> shift, rest = mantissa & ((1u << shift) - 1),
             half = 1u << (shift - 1);
    if (rest > half || (rest == half && (result & 1)))
      ++result;
    return sign | uint16_t(result);
  }
  // Normal: rebias the exponent, round the mantissa's 13 dropped bits to
  // nearest even (a carry moves into the exponent).
  uint32_t result = (magnitude >> 13) - (112u << 10), rest = magnitude & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (result & 1)))
    ++result;
  return sign | uint16_t(result);
}

void widenBuffer(int32_t dtype, const uint16_t *from, float *to, int64_t count) {
  chunked(count, [&](int64_t begin, int64_t end) {
    widenOnThread(dtype, from + begin, to + begin, end - begin);
  });
}

void roundBuffer(int32_t dtype, const float *from, uint16_t *to, int64_t count, bool sum) {
  chunked(count, [&](int64_t begin, int64_t end) {
    roundOnThread(dtype, from + begin, to + begin, end - begin, sum);
  });
}

} // namespace tcc::rt
