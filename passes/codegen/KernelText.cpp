//===- KernelText.cpp - a kernel's body as comparable text -----------------===//

#include "passes/codegen/KernelText.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/raw_ostream.h"

std::string tcc::kernelText(mlir::SymbolOpInterface symbol) {
  mlir::StringAttr name = symbol.getNameAttr();
  symbol.setName(mlir::StringAttr::get(symbol->getContext(), "k"));
  std::string text;
  llvm::raw_string_ostream os(text);
  symbol->print(os, mlir::OpPrintingFlags().useLocalScope());
  symbol.setName(name);
  return text;
}
