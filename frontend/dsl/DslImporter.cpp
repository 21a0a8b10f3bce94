//===- DslImporter.cpp - tcc model language source to the tcc dialect -----===//
//
// Runs the frontend's stages in order and stops after the first stage that
// reported errors (later stages would only repeat them), then draws each
// parameter's initial values from its initializer, deterministically: the
// same program gives the same bytes on every machine.
//
//===----------------------------------------------------------------------===//

#include "frontend/dsl/DslImporter.h"

#include "dialects/BatchRows.h"

#include "frontend/dsl/Lower.h"
#include "frontend/dsl/Parser.h"
#include "frontend/dsl/Sema.h"

#include "mlir/IR/Threading.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using namespace tcc::dsl;

/// The values of one parameter as little-endian bytes of its element type.
/// Uniform: lo + (hi - lo) * u with u of 53 random bits; normal: Box-Muller.
/// mt19937_64 is specified by the standard, so the values are portable.
/// f32 and f64 are stored by the host's conversion, which rounds to nearest
/// even as APFloat does (APFloat per element was most of a GPT-2-small
/// import); f16 and bf16 go through APFloat.
static std::vector<char> drawValues(const ParamInfo &p) {
  int64_t count = 1;
  for (int64_t d : p.type.shape)
    count *= d;
  std::mt19937_64 rng(p.init.seed);
  auto uniform01 = [&] { return double(rng() >> 11) * 0x1.0p-53; };
  auto draw = [&] {
    if (p.init.kind == InitSpec::Uniform)
      return p.init.a + (p.init.b - p.init.a) * uniform01();
    if (p.init.kind == InitSpec::Normal) {
      double u1 = 1.0 - uniform01(), u2 = uniform01();
      return p.init.a + p.init.b * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2);
    }
    return p.init.a;
  };
  auto fill = [&](auto element) {
    std::vector<char> bytes(size_t(count) * sizeof(element));
    for (int64_t i = 0; i < count; ++i) {
      element = decltype(element)(draw());
      std::memcpy(bytes.data() + size_t(i) * sizeof(element), &element, sizeof(element));
    }
    return bytes;
  };
  if (p.type.dtype == DType::F64)
    return fill(double());
  if (p.type.dtype != DType::F16 && p.type.dtype != DType::BF16)
    return fill(float());
  const llvm::fltSemantics &sem =
      p.type.dtype == DType::F16 ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat();
  std::vector<char> bytes(size_t(count) * 2);
  for (int64_t i = 0; i < count; ++i) {
    llvm::APFloat v(draw());
    bool lost;
    v.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
    uint64_t bits = v.bitcastToAPInt().getZExtValue();
    bytes[size_t(i) * 2] = char(bits & 0xff);
    bytes[size_t(i) * 2 + 1] = char((bits >> 8) & 0xff);
  }
  return bytes;
}

/// Elaborates PROGRAM once more at batch B + 1, silently, and records on
/// MODULE's function which inputs and outputs follow the batch
/// (dialects/BatchRows.h); a program whose shapes fix the batch is left
/// unmarked.
static void probeBatch(ModuleOp module, Program &program, const SemaOptions &sema,
                       llvm::StringRef displayName, llvm::StringRef functionName) {
  MLIRContext *context = module.getContext();
  auto fn = module.lookupSymbol<func::FuncOp>(functionName);
  if (!fn)
    return;
  ScopedDiagnosticHandler silence(context, [](Diagnostic &) { return success(); });
  Diagnostics diags(context, displayName);
  SemaOptions probeSema = sema;
  probeSema.batch = *sema.batch + 1;
  Graph graph = analyze(program, probeSema, diags);
  if (diags.errorCount())
    return;
  OwningOpRef<ModuleOp> probe = lowerGraph(graph, diags, functionName);
  if (!probe)
    return;
  if (auto probeFn = probe->lookupSymbol<func::FuncOp>(functionName))
    tcc::annotateBatchRows(fn, probeFn, *sema.batch, *probeSema.batch);
}

OwningOpRef<ModuleOp> tcc::importDslBuffer(MLIRContext &context, llvm::StringRef source,
                                           llvm::StringRef displayName,
                                           const DslImportOptions &options, Recipe *recipe) {
  Diagnostics diags(&context, displayName);
  Program program = parseProgram(source, diags);
  if (diags.errorCount())
    return nullptr;
  SemaOptions sema;
  sema.batch = options.batch;
  sema.dims = options.dims;
  Graph graph = analyze(program, sema, diags);
  Recipe parsed = readRecipe(program, diags);
  if (diags.errorCount())
    return nullptr;
  if (recipe)
    *recipe = std::move(parsed);
  OwningOpRef<ModuleOp> module = lowerGraph(graph, diags, options.functionName);
  if (!module)
    return nullptr;
  if (options.batch)
    probeBatch(*module, program, sema, displayName, options.functionName);
  if (options.onParameter) {
    // Each parameter draws from its own seed: in parallel, handed over in order.
    std::vector<std::vector<char>> values(graph.params.size());
    parallelFor(&context, 0, graph.params.size(),
                [&](size_t i) { values[i] = drawValues(graph.params[i]); });
    for (auto [p, bytes] : llvm::zip_equal(graph.params, values))
      options.onParameter(p.name, elementType(&context, p.type.dtype), p.type.shape, bytes,
                          p.init.describe());
  }
  return module;
}

OwningOpRef<ModuleOp> tcc::importDslFile(MLIRContext &context, llvm::StringRef path,
                                         const DslImportOptions &options, Recipe *recipe) {
  llvm::sys::fs::file_status status;
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  if (!llvm::sys::fs::status(path, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file)
    return emitError(fileLoc) << "cannot read the file: not a regular file", nullptr;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return emitError(fileLoc) << "cannot read the file: " << buffer.getError().message(), nullptr;
  return importDslBuffer(context, (*buffer)->getBuffer(), path, options, recipe);
}
