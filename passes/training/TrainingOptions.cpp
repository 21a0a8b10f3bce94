//===- TrainingOptions.cpp - the training step's settings as types --------===//

#include "passes/training/TrainingOptions.h"

#include "llvm/ADT/StringSwitch.h"

using llvm::StringRef;
namespace cl = llvm::cl;

#define TCC_NAME_CASE(type, e, name) \
  case type::e:                      \
    return name;
#define TCC_PARSE_CASE(type, e, name) .Case(name, type::e)
#define TCC_CL_VALUE(type, e, name, help) clEnumValN(type::e, name, help),

StringRef tcc::lossName(Loss loss) {
  switch (loss) {
#define X(e, name, help) TCC_NAME_CASE(Loss, e, name)
    TCC_LOSSES(X)
#undef X
  }
  return "";
}

StringRef tcc::optimizerName(Optimizer optimizer) {
  switch (optimizer) {
#define X(e, name, help) TCC_NAME_CASE(Optimizer, e, name)
    TCC_OPTIMIZERS(X)
#undef X
  }
  return "";
}

StringRef tcc::precisionName(Precision precision) {
  switch (precision) {
#define X(e, name, help) TCC_NAME_CASE(Precision, e, name)
    TCC_PRECISIONS(X)
#undef X
  }
  return "";
}

std::optional<tcc::Loss> tcc::parseLoss(StringRef name) {
#define X(e, name, help) TCC_PARSE_CASE(Loss, e, name)
  return llvm::StringSwitch<std::optional<Loss>>(name) TCC_LOSSES(X).Default(std::nullopt);
#undef X
}

std::optional<tcc::Optimizer> tcc::parseOptimizer(StringRef name) {
#define X(e, name, help) TCC_PARSE_CASE(Optimizer, e, name)
  return llvm::StringSwitch<std::optional<Optimizer>>(name) TCC_OPTIMIZERS(X).Default(std::nullopt);
#undef X
}

cl::ValuesClass tcc::lossValues() {
#define X(e, name, help) TCC_CL_VALUE(Loss, e, name, help)
  return cl::ValuesClass({TCC_LOSSES(X)});
#undef X
}

cl::ValuesClass tcc::optimizerValues() {
#define X(e, name, help) TCC_CL_VALUE(Optimizer, e, name, help)
  return cl::ValuesClass({TCC_OPTIMIZERS(X)});
#undef X
}

cl::ValuesClass tcc::precisionValues() {
#define X(e, name, help) TCC_CL_VALUE(Precision, e, name, help)
  return cl::ValuesClass({TCC_PRECISIONS(X)});
#undef X
}

cl::ValuesClass tcc::rematModeValues() {
#define X(e, name, help) TCC_CL_VALUE(RematMode, e, name, help)
  return cl::ValuesClass({TCC_REMAT_MODES(X)});
#undef X
}
