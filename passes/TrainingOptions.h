//===- TrainingOptions.h - the training step's settings as types ----------===//
//
// The loss, the optimizer, the precision and the recomputation mode: typed
// options of the passes that build and transform the training step
// (Passes.td declares them with these types and their spellings), of tcc's
// command line and of the compile cache's key, which all print and parse
// the same spellings. Nothing compares their strings.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_TRAININGOPTIONS_H
#define TCC_PASSES_TRAININGOPTIONS_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace tcc {

/// --loss.
enum class Loss { Mse, CrossEntropy, None };
/// --optimizer.
enum class Optimizer { Sgd, Adam, AdamW };
/// --precision: what the training step computes in.
enum class Precision { FP32, TF32, BF16, FP16 };
/// tcc-rematerialize's mode (--remat, and the memory-budget search):
/// recompute until the budget holds (no budget: nothing), the least memory,
/// or nothing.
enum class RematMode { Auto, Max, Off };

/// Each option's spelling (command line, pass options, metadata).
llvm::StringRef lossName(Loss loss);
llvm::StringRef optimizerName(Optimizer optimizer);
llvm::StringRef precisionName(Precision precision);
llvm::StringRef rematModeName(RematMode mode);

/// The option a spelling names (a .tcc recipe's words), or nullopt.
std::optional<Loss> parseLoss(llvm::StringRef name);
std::optional<Optimizer> parseOptimizer(llvm::StringRef name);

/// bf16 or fp16: the precision pass runs and the products are 16-bit.
inline bool isSixteenBit(Precision p) { return p == Precision::BF16 || p == Precision::FP16; }

} // namespace tcc

#endif // TCC_PASSES_TRAININGOPTIONS_H
