//===- tcc-opt.cpp - MlirOptMain with the tcc dialect and passes ----------===//
//
// The tool lit tests drive: parses, runs passes, prints. Registers the tcc
// dialect, the upstream dialects tcc lowers through, and all their passes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Registration.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tcc::registerAllDialects(registry);
  tcc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tcc optimizer driver\n", registry));
}
