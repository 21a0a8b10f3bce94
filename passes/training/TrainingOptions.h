//===- TrainingOptions.h - the training step's settings as types ----------===//
//
// The loss, the optimizer, the precision and the recomputation mode: typed
// options of the passes that build and transform the training step
// (Passes.td), of tcc's command line and of the compile cache's key. Each
// is one table below (enumerator, spelling, help); the enum, the spellings,
// the parsers and the `cl::values` that Passes.td and tcc's flags take are
// derived from it, so nothing else spells them or compares their strings.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_TRAINING_TRAININGOPTIONS_H
#define TCC_PASSES_TRAINING_TRAININGOPTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <optional>

// X(enumerator, spelling, help)
#define TCC_LOSSES(X)                                                          \
  X(Mse, "mse", "mean squared error")                                          \
  X(CrossEntropy, "cross_entropy", "softmax cross-entropy over the last axis") \
  X(None, "none", "the model's first output is the loss")
#define TCC_OPTIMIZERS(X)                                                      \
  X(Sgd, "sgd", "SGD (momentum, dampening, Nesterov, weight decay)")           \
  X(Adam, "adam", "Adam")                                                      \
  X(AdamW, "adamw", "AdamW (decoupled weight decay, default 0.01)")
#define TCC_PRECISIONS(X)                                                      \
  X(FP32, "fp32", "f32")                                                       \
  X(TF32, "tf32",                                                              \
    "--target=cuda: fp32 storage, matmuls and convolutions on TF32 tensor "    \
    "cores")                                                                   \
  X(BF16, "bf16", "bf16 mixed precision")                                      \
  X(FP16, "fp16", "fp16 mixed precision with dynamic loss scaling")
#define TCC_REMAT_MODES(X)                                                     \
  X(Auto, "auto", "recompute until the budget holds")                          \
  X(Max, "max", "the least memory")                                            \
  X(Off, "off", "recompute nothing")

namespace tcc {

#define TCC_ENUMERATOR(e, name, help) e,
/// --loss.
enum class Loss { TCC_LOSSES(TCC_ENUMERATOR) };
/// --optimizer.
enum class Optimizer { TCC_OPTIMIZERS(TCC_ENUMERATOR) };
/// --precision: what the training step computes in.
enum class Precision { TCC_PRECISIONS(TCC_ENUMERATOR) };
/// tcc-rematerialize's mode (--remat, and the memory-budget search):
/// recompute until the budget holds (no budget: nothing), the least memory,
/// or nothing.
enum class RematMode { TCC_REMAT_MODES(TCC_ENUMERATOR) };
#undef TCC_ENUMERATOR

/// Each option's spelling (command line, pass options, metadata).
llvm::StringRef lossName(Loss loss);
llvm::StringRef optimizerName(Optimizer optimizer);
llvm::StringRef precisionName(Precision precision);

/// The option a spelling names (a .tcc recipe's words), or nullopt.
std::optional<Loss> parseLoss(llvm::StringRef name);
std::optional<Optimizer> parseOptimizer(llvm::StringRef name);

/// Each option's values for llvm::cl (Passes.td's options, tcc's flags).
llvm::cl::ValuesClass lossValues();
llvm::cl::ValuesClass optimizerValues();
llvm::cl::ValuesClass precisionValues();
llvm::cl::ValuesClass rematModeValues();

/// bf16 or fp16: the precision pass runs and the products are 16-bit.
inline bool isSixteenBit(Precision p) { return p == Precision::BF16 || p == Precision::FP16; }

} // namespace tcc

#endif // TCC_PASSES_TRAINING_TRAININGOPTIONS_H
