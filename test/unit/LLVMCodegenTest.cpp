//===- LLVMCodegenTest.cpp - rewrites of the IR before instruction selection ===//
//
// tcc::createMinMax stands in for llvm.maximum / llvm.minimum in AVX-512
// code, so it must give their results on every pair of special values:
// checked by constant folding its compares and selects against APFloat's
// maximum / minimum (IEEE 754-2019), in f32 and f64.
//
//===----------------------------------------------------------------------===//

#include "compiler/LLVMCodegen.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>

namespace {

std::vector<double> specialValues() {
  double inf = std::numeric_limits<double>::infinity();
  return {0.0, -0.0, 1.0, -1.0, 3.5, -2.25, 1e-40, -1e-40, FLT_MAX, -FLT_MAX, inf, -inf,
          std::nan(""), -std::nan("")};
}

void checkAllPairs(llvm::Type *type) {
  llvm::LLVMContext &ctx = type->getContext();
  llvm::IRBuilder<> builder(ctx);
  for (bool max : {true, false})
    for (double x : specialValues())
      for (double y : specialValues()) {
        auto *cx = llvm::cast<llvm::ConstantFP>(llvm::ConstantFP::get(type, x));
        auto *cy = llvm::cast<llvm::ConstantFP>(llvm::ConstantFP::get(type, y));
        llvm::Value *v = tcc::createMinMax(builder, max, cx, cy);
        auto *result = llvm::dyn_cast<llvm::ConstantFP>(v);
        ASSERT_NE(result, nullptr) << "did not fold to a constant";
        llvm::APFloat want = max ? llvm::maximum(cx->getValueAPF(), cy->getValueAPF())
                                 : llvm::minimum(cx->getValueAPF(), cy->getValueAPF());
        const llvm::APFloat &got = result->getValueAPF();
        std::string what = std::string(max ? "maximum(" : "minimum(") + std::to_string(x) +
                           (std::signbit(x) ? " (neg)" : "") + ", " + std::to_string(y) +
                           (std::signbit(y) ? " (neg)" : "") + ")";
        if (want.isNaN())
          EXPECT_TRUE(got.isNaN()) << what;
        else
          EXPECT_TRUE(got.bitwiseIsEqual(want))
              << what << ": got " << got.convertToDouble() << " want " << want.convertToDouble();
      }
}

TEST(CreateMinMax, MatchesIeeeMaximumAndMinimumInF32) {
  llvm::LLVMContext ctx;
  checkAllPairs(llvm::Type::getFloatTy(ctx));
}

TEST(CreateMinMax, MatchesIeeeMaximumAndMinimumInF64) {
  llvm::LLVMContext ctx;
  checkAllPairs(llvm::Type::getDoubleTy(ctx));
}

} // namespace
