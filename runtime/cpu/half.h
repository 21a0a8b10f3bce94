//===- half.h - f16 <-> f32 conversion of buffers --------------------------===//
//
// oneDNN 2.6 has no JIT reorder for f16: its f16 <-> f32 reorders are the
// reference implementation ("simple:any"), about 16 ns per element, which
// made a --precision=fp16 step on the CPU 12-24x slower than its fp32 step
// (every f16 library call is widened: oneDNN 2.6 has no f16 CPU kernels).
// The runtime converts f16 buffers itself: F16C's vcvtph2ps / vcvtps2ph
// where the CPU has them (every x86-64-v3 CPU), the same arithmetic in
// integers elsewhere, across the calling thread's OpenMP threads.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CPU_HALF_H
#define TCC_RUNTIME_CPU_HALF_H

#include <cstdint>

namespace tcc::rt {

/// TO[i] = FROM[i] widened (exact), for i in [0, COUNT).
void widenHalf(const uint16_t *from, float *to, int64_t count);

/// TO[i] = FROM[i] rounded to f16 (to nearest even; overflow to infinity,
/// NaN stays NaN), or with SUM the rounding of FROM[i] + TO[i] (the sum in
/// f32), for i in [0, COUNT): what oneDNN's reorder (with a sum post-op)
/// computes.
void roundToHalf(const float *from, uint16_t *to, int64_t count, bool sum);

/// A 16-bit DTYPE's (TCC_DTYPE_BF16 or TCC_DTYPE_F16) conversions on the
/// calling thread alone: TO[i] = FROM[i] widened (exact), or rounded to
/// nearest even (bf16: a NaN stays a NaN, made quiet; f16 as roundToHalf).
void widenOnThread(int32_t dtype, const uint16_t *from, float *to, int64_t count);
void roundOnThread(int32_t dtype, const float *from, uint16_t *to, int64_t count);

/// The conversions without F16C, one element at a time (the fallback on a
/// CPU without it; the tests hold them to the instructions). Not the
/// compiler's _Float16 casts: on the baseline target they call libgcc's
/// __truncsfhf2, which would make the runtime need GCC 12's libgcc to load.
float halfToFloatPortable(uint16_t h);
uint16_t floatToHalfPortable(float f);

} // namespace tcc::rt

#endif // TCC_RUNTIME_CPU_HALF_H
