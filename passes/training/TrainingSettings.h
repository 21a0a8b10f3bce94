//===- TrainingSettings.h - the training settings a recipe may set --------===//
//
// A .tcc file's train block sets the training step's settings by key
// (frontend/dsl/Recipe.cpp), and a flag of tcc's (the key with dashes) wins
// over the recipe's value. The settings are one table below; the enum, the
// keys and the record of the ones a caller gave are derived from it.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_TRAINING_TRAININGSETTINGS_H
#define TCC_PASSES_TRAINING_TRAININGSETTINGS_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <bitset>
#include <vector>

// X(enumerator, recipe key)
#define TCC_TRAINING_SETTINGS(X)                                               \
  X(Loss, "loss")                                                              \
  X(Optimizer, "optimizer")                                                    \
  X(Labels, "labels")                                                          \
  X(Momentum, "momentum")                                                      \
  X(Dampening, "dampening")                                                    \
  X(Nesterov, "nesterov")                                                      \
  X(WeightDecay, "weight_decay")                                               \
  X(Beta1, "beta1")                                                            \
  X(Beta2, "beta2")                                                            \
  X(Eps, "eps")                                                                \
  X(GradClip, "grad_clip")                                                     \
  X(GradAccum, "grad_accum")                                                   \
  X(IgnoreIndex, "ignore_index")                                               \
  X(LabelSmoothing, "label_smoothing")                                         \
  X(Freeze, "freeze")

namespace tcc {

#define TCC_ENUMERATOR(e, key) e,
/// A training setting a .tcc recipe may set.
enum class TrainingSetting { TCC_TRAINING_SETTINGS(TCC_ENUMERATOR) };
#undef TCC_ENUMERATOR

#define TCC_COUNT(e, key) +1
constexpr unsigned kNumTrainingSettings = 0 TCC_TRAINING_SETTINGS(TCC_COUNT);
#undef TCC_COUNT

/// The setting's key in a recipe's train block ("weight_decay").
inline llvm::StringRef trainingSettingKey(TrainingSetting setting) {
  switch (setting) {
#define TCC_KEY_CASE(e, key)                                                   \
  case TrainingSetting::e:                                                     \
    return key;
    TCC_TRAINING_SETTINGS(TCC_KEY_CASE)
#undef TCC_KEY_CASE
  }
  return "";
}

/// The training settings a caller gave explicitly (tcc's flags): a .tcc
/// recipe sets only the others.
class TrainingGiven {
public:
  bool has(TrainingSetting setting) const { return bits.test(unsigned(setting)); }
  void set(TrainingSetting setting) { bits.set(unsigned(setting)); }

  /// The keys of the settings given, in sorted order (the compile cache's
  /// key prints them so).
  std::vector<llvm::StringRef> keys() const {
    std::vector<llvm::StringRef> keys;
    for (unsigned i = 0; i < kNumTrainingSettings; ++i)
      if (bits.test(i))
        keys.push_back(trainingSettingKey(TrainingSetting(i)));
    llvm::sort(keys);
    return keys;
  }

private:
  std::bitset<kNumTrainingSettings> bits;
};

} // namespace tcc

#endif // TCC_PASSES_TRAINING_TRAININGSETTINGS_H
