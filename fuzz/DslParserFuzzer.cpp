//===- DslParserFuzzer.cpp - libFuzzer target for the tcc model language --===//
//
// Feeds arbitrary bytes to tcc::importDslBuffer: lexing, parsing, name
// resolution, elaboration and lowering. Any input must end in a verified
// module or diagnostics; a crash, a hang (the elaborator's work budget bounds
// loops and recursion), an out-of-memory or an abort is a bug in the
// frontend. Parameter values are not drawn (no onParameter).
//
//===----------------------------------------------------------------------===//

#include "compiler/Registration.h"
#include "frontend/dsl/DslImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

/// One context for the whole run (dialect registration is not the target).
static mlir::MLIRContext &fuzzContext() {
  static mlir::MLIRContext *context = [] {
    mlir::DialectRegistry registry;
    tcc::registerAllDialects(registry);
    auto *ctx = new mlir::MLIRContext(registry, mlir::MLIRContext::Threading::DISABLED);
    ctx->getDiagEngine().registerHandler([](mlir::Diagnostic &) { return mlir::success(); });
    return ctx;
  }();
  return *context;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef source(reinterpret_cast<const char *>(data), size);
  tcc::DslImportOptions options;
  options.batch = 2;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      tcc::importDslBuffer(fuzzContext(), source, "fuzz.tcc", options);
  (void)module;
  return 0;
}
