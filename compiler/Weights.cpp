//===- Weights.cpp - the initial parameter values beside an artifact ------===//

#include "compiler/Weights.h"

#include "runtime/checkpoint/safetensors.h"
#include "runtime/include/tcc/abi.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

std::string tcc::initializerKind(int32_t dtype, llvm::ArrayRef<char> bytes) {
  if (dtype != TCC_DTYPE_F32 || bytes.size() < sizeof(float))
    return "";
  size_t n = bytes.size() / sizeof(float);
  std::vector<float> v(n);
  std::memcpy(v.data(), bytes.data(), n * sizeof(float));
  double lo = v[0], hi = v[0], sum = 0, sq = 0;
  for (float x : v) {
    lo = std::min(lo, double(x));
    hi = std::max(hi, double(x));
    sum += x;
  }
  double mean = sum / double(n);
  for (float x : v)
    sq += (x - mean) * (x - mean);
  double std = std::sqrt(sq / double(n));
  auto fmt = [](double x) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.9g", x);
    return std::string(buffer);
  };
  if (lo == hi)
    return "constant " + fmt(lo);
  double range = hi - lo;
  if (n >= 64 && std::abs(range / std - std::sqrt(12.0)) < 0.15 * std::sqrt(12.0) &&
      std::abs(mean - (lo + hi) / 2) < 0.1 * range)
    return "uniform " + fmt(lo) + " " + fmt(hi);
  return "normal " + fmt(mean) + " " + fmt(std);
}

std::string tcc::bufferInitializerKind(int32_t dtype, llvm::ArrayRef<char> bytes) {
  std::string kind = initializerKind(dtype, bytes);
  // "constant -inf" would not read back as a number.
  if (llvm::StringRef(kind).starts_with("constant ") &&
      std::isfinite(std::strtod(kind.c_str() + 9, nullptr)))
    return kind;
  return TCC_METADATA_INIT_EXACT;
}

bool tcc::writeWeights(llvm::StringRef path, llvm::ArrayRef<Weight> weights,
                       llvm::StringRef fingerprint, std::string &error) {
  std::vector<tcc::rt::SafetensorsTensor> tensors;
  for (const Weight &w : weights)
    tensors.push_back({w.name, tcc_dtype(w.dtype), w.shape, w.bytes.data(), w.bytes.size()});
  return tcc::rt::writeSafetensors(path.str(), tensors,
                                   {{"producer", "tcc " TCC_VERSION},
                                    {"fingerprint", fingerprint.str()}},
                                   &error);
}
