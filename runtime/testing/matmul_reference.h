//===- matmul_reference.h - float64 reference of a MATMUL library call ----===//
//
// The oracle of the runtime's matmul tests (oneDNN and BLAS unit tests, CUDA
// self-test): the call's semantics of abi.h in float64, the tests' random
// operands, their encoding in 16 bits and their error measure.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TESTING_MATMUL_REFERENCE_H
#define TCC_RUNTIME_TESTING_MATMUL_REFERENCE_H

#include "runtime/include/tcc/abi.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace tcc::testing {

/// N values uniform in [-1, 1): random, never zero-filled, operands.
inline std::vector<float> randomVector(size_t n, std::mt19937_64 &rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = u(rng);
  return v;
}

/// X rounded to DTYPE (f32, bf16 or f16) and stored in its bytes at OUT.
inline void encode(float x, int32_t dtype, uint8_t *out) {
  if (dtype == TCC_DTYPE_F32) {
    std::memcpy(out, &x, 4);
  } else if (dtype == TCC_DTYPE_F16) {
    _Float16 h = static_cast<_Float16>(x);
    std::memcpy(out, &h, 2);
  } else { // bf16: the high half of the f32, rounded to nearest even
    uint32_t u;
    std::memcpy(&u, &x, 4);
    uint16_t b = uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
    std::memcpy(out, &b, 2);
  }
}

/// The DTYPE value stored at IN, as a float (exact).
inline float decode(const uint8_t *in, int32_t dtype) {
  if (dtype == TCC_DTYPE_F32) {
    float x;
    std::memcpy(&x, in, 4);
    return x;
  }
  if (dtype == TCC_DTYPE_F16) {
    _Float16 h;
    std::memcpy(&h, in, 2);
    return float(h);
  }
  uint16_t b;
  std::memcpy(&b, in, 2);
  uint32_t u = uint32_t(b) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

/// Bytes of one element of DTYPE (f32, bf16 or f16).
inline size_t elementSize(int32_t dtype) { return dtype == TCC_DTYPE_F32 ? 4 : 2; }

/// max |got - ref| over max |ref|; infinite when GOT holds a NaN.
inline double relativeError(const std::vector<float> &got, const std::vector<double> &ref) {
  double diff = 0, scale = 1e-30;
  for (size_t k = 0; k < ref.size(); ++k) {
    double d = std::fabs(double(got[k]) - ref[k]);
    diff = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(diff, d);
    scale = std::max(scale, std::fabs(ref[k]));
  }
  return diff / scale;
}

/// C (+)= op(A) op(B), or C = relu(op(A) op(B) + bias + D) as the epilogue
/// parameter says, row-major, batched, in float64; with HEADS and
/// INTERLEAVED (12 parameters) the named operands' stored rows interleave
/// across the heads (abi.h). The result is in C's layout.
inline std::vector<double> matmulReference(const std::vector<int64_t> &params,
                                    const std::vector<float> &a, const std::vector<float> &b,
                                    const std::vector<float> &c0, const std::vector<float> &bias,
                                    const std::vector<float> &d) {
  const int64_t *p = params.data();
  int64_t batch = p[0], M = p[1], N = p[2], K = p[3];
  bool ta = p[4], tb = p[5], acc = p[6];
  int64_t epilogue = params.size() > 7 ? p[7] : 0;
  int64_t heads = params.size() > 11 ? p[10] : 1, interleaved = params.size() > 11 ? p[11] : 0;
  // Element (row, col) of matrix s of an operand stored ROWS x COLS.
  auto element = [&](int64_t s, int64_t row, int64_t col, int64_t rows, int64_t cols,
                     int64_t bit) {
    if (!(interleaved & bit))
      return size_t((s * rows + row) * cols + col);
    return size_t((((s / heads) * rows + row) * heads + s % heads) * cols + col);
  };
  std::vector<double> c(size_t(batch * M * N));
  for (int64_t s = 0; s < batch; ++s)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        size_t at = element(s, i, j, M, N, TCC_MATMUL_INTERLEAVED_C);
        double sum = acc ? c0[at] : 0.0;
        for (int64_t k = 0; k < K; ++k) {
          double av = a[ta ? element(s, k, i, K, M, TCC_MATMUL_INTERLEAVED_A)
                           : element(s, i, k, M, K, TCC_MATMUL_INTERLEAVED_A)];
          double bv = b[tb ? element(s, j, k, N, K, TCC_MATMUL_INTERLEAVED_B)
                           : element(s, k, j, K, N, TCC_MATMUL_INTERLEAVED_B)];
          sum += av * bv;
        }
        if (epilogue & TCC_MATMUL_EPILOGUE_BIAS)
          sum += bias[size_t(j)];
        if (epilogue & TCC_MATMUL_EPILOGUE_RESIDUAL)
          sum += d[at];
        if (epilogue & TCC_MATMUL_EPILOGUE_RELU)
          sum = std::max(sum, 0.0);
        c[at] = sum;
      }
  return c;
}

} // namespace tcc::testing

#endif // TCC_RUNTIME_TESTING_MATMUL_REFERENCE_H
