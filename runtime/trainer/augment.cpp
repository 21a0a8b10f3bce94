//===- augment.cpp - image augmentation of training batches ---------------===//

#include "runtime/trainer/augment.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace tcc::train {

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  // Ten rounds of two 32x32 -> 64-bit multiplications, the key bumped by
  // the Weyl constants between rounds.
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(0xD2511F53u) * c[0], p1 = uint64_t(0xCD9E8D57u) * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1],
         uint32_t(p0)};
    k = {k[0] + 0x9E3779B9u, k[1] + 0xBB67AE85u};
  }
  return c;
}

std::string AugmentSpec::describe() const {
  std::string text;
  auto add = [&](const std::string &part) { text += (text.empty() ? "" : ", ") + part; };
  char buffer[64];
  if (pad > 0)
    add("crop " + std::to_string(pad));
  if (flip)
    add("flip");
  if (!mean.empty()) {
    std::string m, s;
    for (size_t c = 0; c < mean.size(); ++c) {
      std::snprintf(buffer, sizeof buffer, "%s%.9g", c ? ":" : "", double(mean[c]));
      m += buffer;
      std::snprintf(buffer, sizeof buffer, "%s%.9g", c ? ":" : "", double(std[c]));
      s += buffer;
    }
    add("normalize " + m + "/" + s);
  }
  return text.empty() ? "none" : text;
}

void augmentBatch(const AugmentSpec &spec, uint64_t seed, long k, bool random, float *data,
                  int64_t batch) {
  const int64_t C = spec.channels, H = spec.height, W = spec.width, P = spec.pad;
  std::vector<float> image(size_t(C * H * W));
  // The stream "AUGM" keeps these draws apart from the dropout masks'.
  const uint32_t kStream = 0x4155474Du;
  std::array<uint32_t, 2> key = {uint32_t(seed), uint32_t(seed >> 32)};
  for (int64_t s = 0; s < batch; ++s) {
    float *x = data + s * C * H * W;
    if (random && spec.random()) {
      std::array<uint32_t, 4> r =
          philox4x32({uint32_t(k), uint32_t(uint64_t(k) >> 32), uint32_t(s), kStream}, key);
      // Offsets in [0, 2P] (uniform up to a bias below 2^-27), flip with 1/2.
      int64_t dy = P > 0 ? int64_t(r[0] % uint32_t(2 * P + 1)) - P : 0;
      int64_t dx = P > 0 ? int64_t(r[1] % uint32_t(2 * P + 1)) - P : 0;
      bool flip = spec.flip && (r[2] & 1u);
      std::memcpy(image.data(), x, image.size() * sizeof(float));
      for (int64_t c = 0; c < C; ++c)
        for (int64_t y = 0; y < H; ++y)
          for (int64_t col = 0; col < W; ++col) {
            // Output (y, col) of the crop of the padded image, then flipped.
            int64_t srcY = y + dy, srcX = (flip ? W - 1 - col : col) + dx;
            bool inside = srcY >= 0 && srcY < H && srcX >= 0 && srcX < W;
            x[(c * H + y) * W + col] = inside ? image[size_t((c * H + srcY) * W + srcX)] : 0.0f;
          }
    }
    if (!spec.mean.empty())
      for (int64_t c = 0; c < C; ++c) {
        size_t ch = spec.mean.size() == 1 ? 0 : size_t(c);
        float m = spec.mean[ch], sd = spec.std[ch];
        for (int64_t i = 0; i < H * W; ++i)
          x[c * H * W + i] = (x[c * H * W + i] - m) / sd;
      }
  }
}

} // namespace tcc::train
