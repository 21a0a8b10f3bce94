//===- conv_reference.h - float64 references of the convolution calls -----===//
//
// The oracles of the runtime's convolution tests (oneDNN unit test, CUDA
// self-test): CONV2D in float64 straight from abi.h's definition, and the
// two gradient calls as float64 central finite differences of
// L(X, W) = sum(CONV2D(X, W) * dY), which never uses a gradient formula.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TESTING_CONV_REFERENCE_H
#define TCC_RUNTIME_TESTING_CONV_REFERENCE_H

#include "runtime/include/tcc/abi.h"

#include <cstdint>
#include <vector>

namespace tcc::testing {

/// The sizes of a convolution call's operands: X, W, Y (element counts).
struct ConvSizes {
  size_t x, w, y;
};

/// Groups of a convolution call's parameters (18 or 19).
inline int64_t convGroups(const std::vector<int64_t> &p) { return p.size() > 18 ? p[18] : 1; }

inline ConvSizes convSizes(const std::vector<int64_t> &p) {
  return {size_t(p[0] * p[1] * p[2] * p[3]), size_t(p[4] * (p[1] / convGroups(p)) * p[5] * p[6]),
          size_t(p[0] * p[4] * p[7] * p[8])};
}

/// The element counts of a call of KIND's operands, in the kind's order:
/// {X, W, Y}, {dY, W, dX} or {X, dY, dW}.
inline std::vector<size_t> convOperandSizes(int32_t kind, const std::vector<int64_t> &p) {
  ConvSizes n = convSizes(p);
  if (kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA)
    return {n.y, n.w, n.x};
  if (kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS)
    return {n.x, n.y, n.w};
  return {n.x, n.w, n.y};
}

/// Y = CONV2D(X, W) of parameters P (abi.h; the accumulate flag is
/// ignored), zero padding, groups, in float64.
inline std::vector<double> conv2d(const std::vector<int64_t> &p, const std::vector<double> &x,
                                  const std::vector<double> &w) {
  int64_t N = p[0], C = p[1], H = p[2], W = p[3], F = p[4], KH = p[5], KW = p[6], OH = p[7],
          OW = p[8], sh = p[9], sw = p[10], dh = p[11], dw = p[12], pt = p[13], pl = p[14];
  int64_t G = convGroups(p), Cg = C / G, Fg = F / G;
  std::vector<double> y(size_t(N * F * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double sum = 0.0;
          for (int64_t cg = 0; cg < Cg; ++cg)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t ih = oh * sh - pt + kh * dh, iw = ow * sw - pl + kw * dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                  continue;
                int64_t c = f / Fg * Cg + cg;
                sum += x[size_t(((n * C + c) * H + ih) * W + iw)] *
                       w[size_t(((f * Cg + cg) * KH + kh) * KW + kw)];
              }
          y[size_t(((n * F + f) * OH + oh) * OW + ow)] = sum;
        }
  return y;
}

/// What library call KIND (CONV2D, or one of its gradients) of parameters
/// P leaves in its output, given its float operands in the kind's order
/// ({X, W, Y0}, {dY, W, dX0} or {X, dY, dW0}; the third is the output's
/// old contents, added when P accumulates). CONV2D is computed directly;
/// a gradient, by central differences of L = sum(CONV2D(X, W) * dY) with
/// step 0.5 in float64 (L is linear in each argument, so the difference
/// is exact up to float64 rounding).
inline std::vector<double> convCallReference(int32_t kind, const std::vector<int64_t> &p,
                                             const std::vector<float> &a,
                                             const std::vector<float> &b,
                                             const std::vector<float> &out0) {
  auto wide = [](const std::vector<float> &v) { return std::vector<double>(v.begin(), v.end()); };
  bool accumulate = p[17];
  std::vector<double> result;
  if (kind == TCC_LIBRARY_CALL_CONV2D) {
    result = conv2d(p, wide(a), wide(b));
  } else {
    bool data = kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA;
    std::vector<double> dy = wide(data ? a : b);
    std::vector<double> x = data ? std::vector<double>(convSizes(p).x) : wide(a);
    std::vector<double> w = data ? wide(b) : std::vector<double>(convSizes(p).w);
    // The other operand keeps its values; the one differentiated by is
    // perturbed around fixed values (any point would do: L is linear in it).
    std::vector<double> &v = data ? x : w;
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = double(i % 7) / 7.0 - 0.4;
    auto loss = [&] {
      std::vector<double> y = conv2d(p, x, w);
      double sum = 0;
      for (size_t i = 0; i < y.size(); ++i)
        sum += y[i] * dy[i];
      return sum;
    };
    const double h = 0.5;
    result.resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      double saved = v[i];
      v[i] = saved + h;
      double up = loss();
      v[i] = saved - h;
      double down = loss();
      v[i] = saved;
      result[i] = (up - down) / (2 * h);
    }
  }
  if (accumulate)
    for (size_t i = 0; i < result.size(); ++i)
      result[i] += out0[i];
  return result;
}

} // namespace tcc::testing

#endif // TCC_RUNTIME_TESTING_CONV_REFERENCE_H
