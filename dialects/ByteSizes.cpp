//===- ByteSizes.cpp - the bytes of a tensor or buffer --------------------===//

#include "dialects/ByteSizes.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;

int64_t tcc::elementBytes(Type element) {
  if (!element.isIntOrFloat())
    return 8;
  return (int64_t(element.getIntOrFloatBitWidth()) + 7) / 8;
}

std::optional<int64_t> tcc::byteSize(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return std::nullopt;
  std::optional<int64_t> bytes = elementBytes(shaped.getElementType());
  for (int64_t d : shaped.getShape())
    if (bytes)
      bytes = llvm::checkedMul(*bytes, d);
  return bytes;
}
