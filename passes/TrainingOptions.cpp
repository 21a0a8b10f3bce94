//===- TrainingOptions.cpp - the training step's settings as types --------===//

#include "passes/TrainingOptions.h"

#include "llvm/ADT/StringSwitch.h"

using llvm::StringRef;

StringRef tcc::lossName(Loss loss) {
  switch (loss) {
  case Loss::Mse:
    return "mse";
  case Loss::CrossEntropy:
    return "cross_entropy";
  case Loss::None:
    return "none";
  }
  return "";
}

StringRef tcc::optimizerName(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::Sgd:
    return "sgd";
  case Optimizer::Adam:
    return "adam";
  case Optimizer::AdamW:
    return "adamw";
  }
  return "";
}

StringRef tcc::precisionName(Precision precision) {
  switch (precision) {
  case Precision::FP32:
    return "fp32";
  case Precision::TF32:
    return "tf32";
  case Precision::BF16:
    return "bf16";
  case Precision::FP16:
    return "fp16";
  }
  return "";
}

StringRef tcc::rematModeName(RematMode mode) {
  switch (mode) {
  case RematMode::Auto:
    return "auto";
  case RematMode::Max:
    return "max";
  case RematMode::Off:
    return "off";
  }
  return "";
}

std::optional<tcc::Loss> tcc::parseLoss(StringRef name) {
  return llvm::StringSwitch<std::optional<Loss>>(name)
      .Case("mse", Loss::Mse)
      .Case("cross_entropy", Loss::CrossEntropy)
      .Case("none", Loss::None)
      .Default(std::nullopt);
}

std::optional<tcc::Optimizer> tcc::parseOptimizer(StringRef name) {
  return llvm::StringSwitch<std::optional<Optimizer>>(name)
      .Case("sgd", Optimizer::Sgd)
      .Case("adam", Optimizer::Adam)
      .Case("adamw", Optimizer::AdamW)
      .Default(std::nullopt);
}
