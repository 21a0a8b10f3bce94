//===- AugmentTest.cpp - the augmentation's generator and transforms ------===//
//
// Philox4x32-10 against Random123's known answers; the crop, flip and
// normalization of one small image against hand-computed results. The whole
// path (data workers, a training step seeing the augmented batch) is
// checked against a float64 reference in test/e2e/train-augment.test.
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/augment.h"

#include <gtest/gtest.h>

namespace {

using tcc::train::philox4x32;

TEST(AugmentTest, PhiloxKnownAnswers) {
  using Words = std::array<uint32_t, 4>;
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(AugmentTest, NormalizeOnlyWithoutRandomness) {
  tcc::train::AugmentSpec spec;
  spec.channels = 2;
  spec.height = 1;
  spec.width = 2;
  spec.pad = 1;
  spec.flip = true;
  spec.mean = {1.0f, -2.0f};
  spec.std = {2.0f, 4.0f};
  float x[4] = {3.0f, 5.0f, 2.0f, -6.0f};
  // Validation: no crop or flip, (x - mean) / std per channel.
  tcc::train::augmentBatch(spec, 7, 0, /*random=*/false, x, 1);
  EXPECT_FLOAT_EQ(x[0], 1.0f);
  EXPECT_FLOAT_EQ(x[1], 2.0f);
  EXPECT_FLOAT_EQ(x[2], 1.0f);
  EXPECT_FLOAT_EQ(x[3], -1.0f);
}

TEST(AugmentTest, CropAndFlipFollowTheDraws) {
  // A 1 x 3 x 3 image with padding 1: recompute the offsets and the flip
  // from the same Philox words and check every output pixel.
  tcc::train::AugmentSpec spec;
  spec.channels = 1;
  spec.height = 3;
  spec.width = 3;
  spec.pad = 1;
  spec.flip = true;
  for (long k = 0; k < 8; ++k) {
    float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    tcc::train::augmentBatch(spec, 11, k, true, x, 1);
    std::array<uint32_t, 4> r = philox4x32({uint32_t(k), 0, 0, 0x4155474Du}, {11, 0});
    int dy = int(r[0] % 3) - 1, dx = int(r[1] % 3) - 1;
    bool flip = r[2] & 1;
    for (int y = 0; y < 3; ++y)
      for (int c = 0; c < 3; ++c) {
        int sy = y + dy, sx = (flip ? 2 - c : c) + dx;
        float want = sy >= 0 && sy < 3 && sx >= 0 && sx < 3 ? float(sy * 3 + sx + 1) : 0.0f;
        EXPECT_EQ(x[y * 3 + c], want) << "k " << k << " at " << y << "," << c;
      }
  }
}

} // namespace
