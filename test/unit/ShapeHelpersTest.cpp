//===- ShapeHelpersTest.cpp - the dialect's shared shape arithmetic -------===//

#include "dialects/TccOps.h"

#include <gtest/gtest.h>

using namespace tcc;

TEST(ShapeHelpers, NumElementsIsCheckedForOverflow) {
  EXPECT_EQ(checkedNumElements({2, 3, 4}), 24);
  EXPECT_EQ(checkedNumElements({}), 1);
  EXPECT_EQ(checkedNumElements({5, 0, 7}), 0);
  EXPECT_FALSE(checkedNumElements({-1, 3}).has_value());
  EXPECT_FALSE(checkedNumElements({int64_t(1) << 30, int64_t(1) << 30}).has_value());
  EXPECT_FALSE(checkedNumElements({INT64_MAX, 2}).has_value());
}

TEST(ShapeHelpers, WindowOutputSizeMatchesPyTorch) {
  // torch.nn.Conv2d(k=3, s=1, p=1) keeps the size.
  EXPECT_EQ(windowOutputSize(32, 3, 1, 1, 1, 1, false), 32);
  // k=3, s=2, p=1 on 7 -> 4.
  EXPECT_EQ(windowOutputSize(7, 3, 2, 1, 1, 1, false), 4);
  // Dilation 2 makes a 3-tap window span 5.
  EXPECT_EQ(windowOutputSize(10, 3, 1, 2, 0, 0, false), 6);
  // MaxPool2d(k=2, s=2, ceil_mode=True) on 5 -> 3, floor -> 2.
  EXPECT_EQ(windowOutputSize(5, 2, 2, 1, 0, 0, true), 3);
  EXPECT_EQ(windowOutputSize(5, 2, 2, 1, 0, 0, false), 2);
  // ceil_mode drops a last window that would start in the high padding.
  EXPECT_EQ(windowOutputSize(4, 2, 2, 1, 1, 1, true), 3);
  // A window larger than the padded input does not fit.
  EXPECT_LT(windowOutputSize(2, 5, 1, 1, 0, 0, false), 1);
}

TEST(ShapeHelpers, ReducedShapeKeepsOrDropsAxes) {
  EXPECT_EQ(reducedShape({2, 3, 4}, {1}, true), (llvm::SmallVector<int64_t>{2, 1, 4}));
  EXPECT_EQ(reducedShape({2, 3, 4}, {0, 2}, false), (llvm::SmallVector<int64_t>{3}));
  EXPECT_EQ(reducedShape({2, 3}, {}, false), (llvm::SmallVector<int64_t>{2, 3}));
}
