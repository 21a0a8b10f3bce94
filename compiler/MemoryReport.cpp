//===- MemoryReport.cpp - what the memory plan holds, for people ----------===//

#include "compiler/MemoryReport.h"

#include "compiler/cuda/CudaPipeline.h"
#include "dialects/TccNames.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"

using namespace mlir;

namespace {

std::string human(int64_t bytes) {
  std::string s;
  llvm::raw_string_ostream o(s);
  if (bytes >= (1 << 20))
    o << llvm::format("%.1f MiB", bytes / 1048576.0);
  else if (bytes >= 1024)
    o << llvm::format("%.1f KiB", bytes / 1024.0);
  else
    o << bytes << " B";
  return s;
}

const char *roleWord(int32_t role) {
  switch (role) {
  case TCC_ROLE_INPUT: return "input";
  case TCC_ROLE_OUTPUT: return "output";
  case TCC_ROLE_PARAM: return "param";
  case TCC_ROLE_STATE: return "state";
  }
  return "?";
}

/// The workspace the library calls of FN need on CHIP, at the device arena's
/// tail (they run in order on one stream and share it).
void printWorkspace(func::FuncOp fn, llvm::raw_ostream &os, llvm::StringRef chip) {
  int64_t workspace = 0, calls = 0;
  std::string largest;
  fn.walk([&](func::CallOp call) {
    auto info = call->getAttrOfType<DictionaryAttr>(tcc::attr::libraryCall);
    auto kind = info ? info.getAs<IntegerAttr>("kind") : nullptr;
    auto params = info ? info.getAs<DenseI64ArrayAttr>("params") : nullptr;
    if (!kind || !params)
      return;
    ++calls;
    int64_t bytes = tcc::libraryWorkspaceBytes(int32_t(kind.getInt()), params.asArrayRef(), chip);
    if (bytes > workspace) {
      workspace = bytes;
      largest = kind.getInt() == TCC_LIBRARY_CALL_MATMUL ? "a cuBLASLt matmul on " + chip.str()
                                                         : "a cuDNN convolution's im2col bound";
    }
  });
  if (calls > 0)
    os << "  library workspace " << human(workspace) << " at the device arena's tail (shared by "
       << calls << " library call(s); the largest need: " << largest << ")\n";
}

} // namespace

void tcc::printMemoryReport(ModuleOp module, llvm::ArrayRef<PlannedEntry> plans,
                            llvm::raw_ostream &os, llvm::StringRef chip) {
  for (const PlannedEntry &e : plans) {
    struct Row {
      std::string what;
      int64_t offset, size;
    };
    std::vector<Row> rows;
    int64_t inputs = 0, outputs = 0, temps = 0;
    for (const PlannedTensor &t : e.tensors) {
      if (t.role == TCC_ROLE_INPUT)
        inputs += t.size;
      if (t.role == TCC_ROLE_OUTPUT)
        outputs += t.size;
      rows.push_back({std::string(roleWord(t.role)) + " " + t.name +
                          (t.role == TCC_ROLE_PARAM ? " (state)" : ""),
                      t.offset, t.size});
    }
    for (auto [index, temp] : llvm::enumerate(e.temps)) {
      temps += temp.size;
      rows.push_back({"intermediate #" + std::to_string(index) + " (ops " +
                          std::to_string(temp.firstOp) + ".." + std::to_string(temp.lastOp) + ")",
                      temp.offset, temp.size});
    }
    llvm::stable_sort(rows, [](const Row &x, const Row &y) { return x.size > y.size; });
    os << "memory plan of @" << e.function << ":\n"
       << "  arena " << human(e.arenaSize) << " (inputs " << human(inputs) << ", outputs "
       << human(outputs) << ", intermediates " << human(temps) << " before reuse)\n"
       << "  state " << human(e.stateSize) << " (parameters)\n";
    if (!chip.empty())
      if (auto fn = module.lookupSymbol<func::FuncOp>(e.function))
        printWorkspace(fn, os, chip);
    os << "  largest buffers:\n";
    for (size_t i = 0; i < rows.size() && i < 10; ++i)
      os << "    " << llvm::right_justify(human(rows[i].size), 10) << "  at "
         << llvm::right_justify(std::to_string(rows[i].offset), 8) << "  " << rows[i].what << "\n";
  }
}
