//===- TccBuilders.h - short builders of tcc ops on tensors ---------------===//
//
// The passes that write tcc ops (composite expansion, the gradient rules, the
// training step) build the same few things over and over: a constant tensor
// of one float value and the elementwise arithmetic on it. These read like
// the formulas they build: mul(b, loc, splat(b, loc, x, 0.5), x).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_SUPPORT_TCCBUILDERS_H
#define TCC_PASSES_SUPPORT_TCCBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace tcc {

/// A tcc.constant of TYPE (a float tensor), every element V.
mlir::Value splat(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type, double v);
/// A tcc.constant shaped like LIKE (a ranked float tensor), every element V.
mlir::Value splat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value like, double v);

/// x + y, x - y, x * y, x / y and -x as tcc ops (operands of one type).
mlir::Value add(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value sub(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value mul(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value div(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value neg(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

} // namespace tcc

#endif // TCC_PASSES_SUPPORT_TCCBUILDERS_H
