//===- TccInterfaces.h - interfaces of the tcc dialect ---------------------===//

#ifndef TCC_DIALECTS_TCCINTERFACES_H
#define TCC_DIALECTS_TCCINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace tcc {

/// How an op computes under a 16-bit precision policy (PrecisionOpInterface).
enum class PrecisionClass {
  Low,      ///< computes in 16 bits: its f32 operands are cast down
  Follow,   ///< computes in its operands' type: 16 bits when any float operand is
  Widened,  ///< typed as Follow, but computes in f32 inside and rounds once (the
            ///< lowering widens it): softmax, transcendental functions
  Fp32,     ///< keeps f32: 16-bit operands are cast up
  Explicit, ///< its types are its own (casts, constants): left as they are
};

/// The spelling in --report=precision and in the ODS traits.
llvm::StringRef precisionClassName(PrecisionClass c);

namespace OpTrait {
/// The traits behind Tcc_Precision<CLASS, ...> in ODS: each gives the op its
/// class for PrecisionOpInterface.
template <typename T>
struct PrecisionLow : mlir::OpTrait::TraitBase<T, PrecisionLow> {
  static constexpr PrecisionClass kPrecisionClass = PrecisionClass::Low;
};
template <typename T>
struct PrecisionFollow : mlir::OpTrait::TraitBase<T, PrecisionFollow> {
  static constexpr PrecisionClass kPrecisionClass = PrecisionClass::Follow;
};
template <typename T>
struct PrecisionWidened : mlir::OpTrait::TraitBase<T, PrecisionWidened> {
  static constexpr PrecisionClass kPrecisionClass = PrecisionClass::Widened;
};
template <typename T>
struct PrecisionFp32 : mlir::OpTrait::TraitBase<T, PrecisionFp32> {
  static constexpr PrecisionClass kPrecisionClass = PrecisionClass::Fp32;
};
template <typename T>
struct PrecisionExplicit : mlir::OpTrait::TraitBase<T, PrecisionExplicit> {
  static constexpr PrecisionClass kPrecisionClass = PrecisionClass::Explicit;
};
} // namespace OpTrait

} // namespace tcc

#include "dialects/TccInterfaces.h.inc"

#endif // TCC_DIALECTS_TCCINTERFACES_H
