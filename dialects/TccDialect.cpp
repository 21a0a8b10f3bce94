//===- TccDialect.cpp - the tcc dialect -----------------------------------===//
//
// Registers the ops and materializes folded constants as tcc.constant.
//
//===----------------------------------------------------------------------===//

#include "dialects/TccDialect.h"
#include "dialects/TccOps.h"

using namespace mlir;
using namespace tcc;

#include "dialects/TccDialect.cpp.inc"
#include "dialects/TccEnums.cpp.inc"
#include "dialects/TccInterfaces.cpp.inc"

void TccDialect::initialize() { registerTccDialectOperations(this); }

Operation *TccDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

llvm::StringRef tcc::precisionClassName(PrecisionClass c) {
  switch (c) {
  case PrecisionClass::Low:
    return "low";
  case PrecisionClass::Follow:
    return "follow";
  case PrecisionClass::Widened:
    return "widened";
  case PrecisionClass::Fp32:
    return "fp32";
  case PrecisionClass::Explicit:
    return "explicit";
  }
  return "?";
}
