//===- SourceNames.cpp - the ONNX node an op came from --------------------===//

#include "passes/support/SourceNames.h"

#include "mlir/IR/Location.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>

using namespace mlir;

Location tcc::sourceLocation(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc); fused && !fused.getLocations().empty())
    loc = fused.getLocations().front();
  return loc;
}

std::string tcc::sourceName(Operation *op) {
  Location loc = sourceLocation(op);
  // In a fused location, the enclosing function's own location (ops that
  // the training step built: the loss, the optimizer) says less than the
  // model node beside it: the first other one names the op.
  if (auto fused = dyn_cast<FusedLoc>(op->getLoc()))
    if (auto fn = op->getParentOfType<FunctionOpInterface>())
      for (Location l : fused.getLocations())
        if (l != fn->getLoc()) {
          loc = l;
          break;
        }
  if (auto n = dyn_cast<NameLoc>(loc))
    return n.getName().str();
  // A DSL model's ops: FILE:LINE:COL, as a compiler's diagnostics write it.
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().str() + ":" + std::to_string(file.getLine()) + ":" +
            std::to_string(file.getColumn()));
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return s;
}

std::string tcc::kernelNodeName(Operation *op) {
  std::string name = isa<NameLoc>(sourceLocation(op)) ? sourceName(op) : "op";
  for (char &c : name)
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name.substr(0, 48);
}
