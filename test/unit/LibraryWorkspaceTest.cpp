//===- LibraryWorkspaceTest.cpp - the device workspace a library call gets -===//

#include "compiler/cuda/CudaPipeline.h"
#include "runtime/include/tcc/abi.h"

#include <gtest/gtest.h>

using tcc::libraryWorkspaceBytes;

constexpr int64_t MiB = int64_t(1) << 20;

TEST(LibraryWorkspace, MatmulGetsNvidiasRecommendationPerArchitecture) {
  std::vector<int64_t> matmul = {1, 512, 512, 512, 0, 0, 0};
  EXPECT_EQ(libraryWorkspaceBytes(TCC_LIBRARY_CALL_MATMUL, matmul, "sm_80"), 4 * MiB);
  EXPECT_EQ(libraryWorkspaceBytes(TCC_LIBRARY_CALL_MATMUL, matmul, "sm_90"), 32 * MiB);
}

TEST(LibraryWorkspace, ConvolutionGetsItsIm2colMatrixWithinBounds) {
  // {N, C, H, W, F, KH, KW, OH, OW, strides, dilations, padding, accumulate}
  auto conv = [](int64_t n, int64_t c, int64_t k, int64_t out) {
    return std::vector<int64_t>{n, c, out, out, 64, k, k, out, out, 1, 1, 1, 1, 1, 1, 1, 1, 0};
  };
  // 32 x 64 x 3 x 3 over 32 x 32 outputs: 32*32*32 rows of 576 floats.
  EXPECT_EQ(libraryWorkspaceBytes(TCC_LIBRARY_CALL_CONV2D, conv(32, 64, 3, 32), "sm_90"),
            int64_t(32) * 32 * 32 * 64 * 3 * 3 * 4);
  // Small: at least 1 MiB; huge (ResNet's first layers at batch 256): 256 MiB.
  EXPECT_EQ(libraryWorkspaceBytes(TCC_LIBRARY_CALL_CONV2D, conv(1, 1, 3, 8), "sm_80"), MiB);
  EXPECT_EQ(libraryWorkspaceBytes(TCC_LIBRARY_CALL_CONV2D, conv(256, 64, 3, 56), "sm_80"),
            256 * MiB);
  // Sizes whose product overflows int64 still give the cap.
  std::vector<int64_t> huge = {1 << 30, 1 << 30, 1, 1, 1, 1 << 20, 1 << 20, 1 << 30, 1 << 30,
                               1,       1,       1, 1, 0, 0,       0,       0,       0};
  EXPECT_EQ(libraryWorkspaceBytes(TCC_LIBRARY_CALL_CONV2D, huge, "sm_90"), 256 * MiB);
}
