//===- Weights.h - the initial parameter values beside an artifact --------===//
//
// An artifact's parameters are arguments, never IR constants: their initial
// values go beside the library as safetensors (the checkpoint format), and
// how each is distributed goes into the descriptor's metadata, so that
// tcc-run --init can generate weights on the machine instead of shipping them.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_WEIGHTS_H
#define TCC_COMPILER_WEIGHTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tcc {

/// One parameter as the importer read it.
struct Weight {
  std::string name;
  int32_t dtype; // tcc_dtype
  std::vector<int64_t> shape;
  std::vector<char> bytes; // little-endian
  /// The initializer's distribution when the frontend knows it (.tcc
  /// programs, the model's buffers); else initializerKind guesses it from
  /// the bytes.
  std::string init;
};

/// How a parameter's initial values are distributed: "constant V" when all
/// are equal, "uniform LO HI" when the spread is a uniform one's (range / std
/// within 15% of sqrt(12), centred), else "normal MEAN STD". Empty for
/// non-f32 parameters.
std::string initializerKind(int32_t dtype, llvm::ArrayRef<char> bytes);

/// The record of one of the model's buffers, which --init must not redraw:
/// "constant V" when all values are equal and finite, else
/// TCC_METADATA_INIT_EXACT (the values of the parameters file).
std::string bufferInitializerKind(int32_t dtype, llvm::ArrayRef<char> bytes);

/// Writes WEIGHTS (in the model's order) to PATH as safetensors whose
/// metadata names the producer and FINGERPRINT; false with ERROR set.
bool writeWeights(llvm::StringRef path, llvm::ArrayRef<Weight> weights,
                  llvm::StringRef fingerprint, std::string &error);

} // namespace tcc

#endif // TCC_COMPILER_WEIGHTS_H
