//===- Registration.cpp - dialects and passes the tools register ----------===//

#include "compiler/Registration.h"

#include "dialects/TccOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/Passes.h"

void tcc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<tcc::TccDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::tensor::TensorDialect, mlir::linalg::LinalgDialect,
                  mlir::scf::SCFDialect>();
}

void tcc::registerAllPasses() {
  mlir::registerTransformsPasses();
  tcc::registerTccPasses();
}
