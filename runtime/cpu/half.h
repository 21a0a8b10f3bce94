//===- half.h - 16-bit <-> f32 conversion of buffers -----------------------===//
//
// oneDNN 2.6 has no JIT reorder for f16, nor one for bf16 below AVX-512:
// those reorders are its reference implementation ("simple:any", about 16
// ns per element). It made a --precision=fp16 step on the CPU 12-24x slower
// than its fp32 step (every f16 library call is widened: oneDNN 2.6 has no
// f16 CPU kernels), and a bf16 step on an AVX2 CPU 2.3x slower. The runtime
// converts such buffers itself: F16C's vcvtph2ps / vcvtps2ph where the CPU
// has them (every x86-64-v3 CPU), bf16 as shifts and integer rounding in
// AVX2 code, the same arithmetic in scalar integers elsewhere, across the
// calling thread's OpenMP threads.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CPU_HALF_H
#define TCC_RUNTIME_CPU_HALF_H

#include <cstdint>

namespace tcc::rt {

/// For a 16-bit DTYPE (TCC_DTYPE_BF16 or TCC_DTYPE_F16), across the calling
/// thread's OpenMP threads: TO[i] = FROM[i] widened (exact), for i in
/// [0, COUNT).
void widenBuffer(int32_t dtype, const uint16_t *from, float *to, int64_t count);

/// TO[i] = FROM[i] rounded to DTYPE (to nearest even; f16 overflows to
/// infinity; a NaN stays a NaN, made quiet), or with SUM the rounding of
/// FROM[i] + TO[i] (the sum in f32), for i in [0, COUNT): what oneDNN's
/// reorder (with a sum post-op) computes.
void roundBuffer(int32_t dtype, const float *from, uint16_t *to, int64_t count, bool sum);

/// The same conversions on the calling thread alone.
void widenOnThread(int32_t dtype, const uint16_t *from, float *to, int64_t count);
void roundOnThread(int32_t dtype, const float *from, uint16_t *to, int64_t count,
                   bool sum = false);

/// The conversions without F16C, one element at a time (the fallback on a
/// CPU without it; the tests hold them to the instructions). Not the
/// compiler's _Float16 casts: on the baseline target they call libgcc's
/// __truncsfhf2, which would make the runtime need GCC 12's libgcc to load.
float halfToFloatPortable(uint16_t h);
uint16_t floatToHalfPortable(float f);

} // namespace tcc::rt

#endif // TCC_RUNTIME_CPU_HALF_H
