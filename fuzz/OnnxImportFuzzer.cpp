//===- OnnxImportFuzzer.cpp - libFuzzer target for the ONNX importer ------===//
//
// Feeds arbitrary bytes to tcc::importOnnxBuffer. The importer must turn any
// input into either a verified module or diagnostics: a crash, a hang, an
// out-of-memory or an abort is a bug in the importer. Inputs whose first byte
// has the high bit set are read as ONNX's textual syntax (the rest of the
// bytes; text is ASCII, and a binary ModelProto starts with a one-byte tag),
// all others as a binary ModelProto.
//
//===----------------------------------------------------------------------===//

#include "compiler/Registration.h"
#include "frontend/onnx/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

/// One context for the whole run: creating a context per input would spend
/// the fuzzer's time in dialect registration instead of the importer.
static mlir::MLIRContext &fuzzContext() {
  static mlir::MLIRContext *context = [] {
    mlir::DialectRegistry registry;
    tcc::registerAllDialects(registry);
    auto *ctx = new mlir::MLIRContext(
        registry, mlir::MLIRContext::Threading::DISABLED);
    // Diagnostics are the expected outcome of bad input; printing them would
    // only slow the run down.
    ctx->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    return ctx;
  }();
  return *context;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &ctx = fuzzContext();
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  bool text = size > 0 && (data[0] & 0x80);
  if (text)
    bytes = bytes.drop_front();
  tcc::OnnxImportOptions options;
  options.batch = 1;
  // No model folder: external data is refused rather than read from disk.
  mlir::OwningOpRef<mlir::ModuleOp> module = tcc::importOnnxBuffer(
      ctx, bytes, text, text ? "fuzz.onnxtxt" : "fuzz.onnx",
      /*modelDir=*/"", options);
  (void)module;
  return 0;
}
