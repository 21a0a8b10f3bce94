//===- tcc.cpp - the tcc compiler driver ----------------------------------===//
//
// `tcc MODEL.onnx -o model.so` compiles a model; `--emit=mlir|...|so` stops
// at any stage. The driver is flag parsing over tcc::compile
// (compiler/Compile.h): every flag binds a field of CompileOptions, the
// training flags bind tcc-build-train-step's own options. Every failure ends
// with exit status 1 and a message that names the file, the node and what is
// wrong; MLIR's debugging flags (--mlir-print-ir-after-all, --mlir-timing,
// ...) pass through to the pass managers.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"
#include "runtime/support/file_roles.h"
#include "compiler/Registration.h"
#include "frontend/dsl/DslImporter.h"
#include "frontend/onnx/DialectExport.h"
#include "frontend/onnx/OnnxExport.h"
#include "runtime/data/host_tensor.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;

// tcc's own options, grouped for --help; MLIR's and LLVM's stay reachable
// (--help-hidden lists them).
/// An enum option's parser whose error lists the values it takes:
/// "tcc: for the --loss option: 'hinge' is not one of mse, cross_entropy,
/// none".
template <typename T>
struct ChoiceParser : cl::parser<T> {
  using cl::parser<T>::parser;
  bool parse(cl::Option &option, llvm::StringRef name, llvm::StringRef arg, T &value) {
    std::string choices;
    for (unsigned i = 0, e = this->getNumOptions(); i != e; ++i) {
      if (arg == this->getOption(i)) {
        value = this->Values[i].V.getValue();
        return false;
      }
      choices += (i ? ", " : "") + this->getOption(i).str();
    }
    return option.error("'" + arg + "' is not one of " + choices);
  }
};

static cl::OptionCategory inputCategory("Input");
static cl::OptionCategory trainingCategory("Training (the compiled step's loss and optimizer)");
static cl::OptionCategory optimizationCategory("Optimization");
static cl::OptionCategory targetCategory("Target");
static cl::OptionCategory outputCategory("Output");
static cl::OptionCategory reportCategory("Reports and profiling");

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.onnx | model.onnxtxt | model.tcc | input.mlir>"),
                                      cl::cat(inputCategory));

static cl::opt<std::string> outputFile("o", cl::desc("Write the output to this file (default: standard output)"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(outputCategory));

enum class EmitKind {
  Default,
  MlirRaw,
  Mlir,
  Linalg,
  Bufferized,
  Ptx,
  LLVMDialect,
  LLVMIR,
  Object,
  SharedLibrary
};
static cl::opt<EmitKind> emit(
    "emit",
    cl::desc("The stage to stop at (default: so when -o names a .so file, "
             "obj for .o, llvm for .ll, else mlir)"),
    cl::values(
        clEnumValN(EmitKind::MlirRaw, "mlir-raw",
                   "the tcc IR exactly as the importer built it"),
        clEnumValN(EmitKind::Mlir, "mlir",
                   "the imported tcc IR, folded and verified"),
        clEnumValN(EmitKind::Linalg, "linalg",
                   "after lowering to linalg on tensors and fusion"),
        clEnumValN(EmitKind::Bufferized, "bufferized",
                   "after bufferization and the memory plan"),
        clEnumValN(EmitKind::Ptx, "ptx",
                   "the PTX of every kernel (--target=cuda), one module"),
        clEnumValN(EmitKind::LLVMDialect, "llvm-dialect",
                   "the LLVM dialect, before translation"),
        clEnumValN(EmitKind::LLVMIR, "llvm",
                   "optimized LLVM IR of the artifact"),
        clEnumValN(EmitKind::Object, "obj", "the artifact's object file"),
        clEnumValN(EmitKind::SharedLibrary, "so",
                   "the artifact: a shared library with its descriptor")),
    cl::init(EmitKind::Default), cl::cat(outputCategory));

static cl::opt<bool> noOptimize("O0",
                                cl::desc("Do not optimize the LLVM IR"),
                                cl::cat(optimizationCategory));

// `tcc export MODEL --weights FILE -o OUT`: the model with trained weights.
// Declared first: --batch and --dim bind a .tcc program's shapes there too.
static cl::SubCommand exportCommand(
    "export", "Write MODEL for inference with the trained weights (tcc-run --save, or a "
              "checkpoint: its optimizer state is ignored): an ONNX model's initializers "
              "replaced, or a .tcc program written as ONNX");

static cl::opt<std::string> batch("batch",
                              cl::desc("Bind the first dimension of every graph input that is "
                                       "symbolic; auto: the largest that fits --memory-budget"),
                              cl::value_desc("N|auto"), cl::cat(inputCategory),
                              cl::sub(cl::SubCommand::getTopLevel()), cl::sub(exportCommand));

static cl::list<std::string> dimBindings(
    "dim", cl::desc("Bind a named symbolic dimension, or override an integer constant of a "
                    ".tcc program (repeatable)"),
    cl::value_desc("NAME=N"), cl::cat(inputCategory), cl::sub(cl::SubCommand::getTopLevel()),
    cl::sub(exportCommand));

static cl::opt<std::string> lengthBucketsOpt(
    "length-buckets",
    cl::desc("Also compile the training step at these values of a symbolic dimension (a "
             "sequence length); the largest binds it everywhere else. tcc-run then runs each "
             "batch at the smallest that holds its samples (docs/training.md)"),
    cl::value_desc("DIM=N1,N2,..."), cl::cat(inputCategory));

enum class ModeKind { Default, Infer, Train };
static cl::opt<ModeKind> mode(
    "mode", cl::desc("What the artifact computes (default: train when --loss or --optimizer "
                     "is given, else infer)"),
    cl::values(clEnumValN(ModeKind::Infer, "infer", "the forward model: an 'infer' entry point"),
               clEnumValN(ModeKind::Train, "train",
                          "also a 'train_step' entry point: forward, loss, backward, "
                          "optimizer update")),
    cl::init(ModeKind::Default), cl::cat(trainingCategory));

/// What the flags fill in; tcc::compile reads it.
static tcc::CompileOptions options;
static tcc::TrainingOptions &training = options.training;

// The training step's flags bind tcc-build-train-step's options (their
// defaults and documentation are in passes/Passes.td).
static cl::opt<tcc::Loss, true, ChoiceParser<tcc::Loss>> lossKind(
    "loss", cl::desc("Training loss"), cl::value_desc("KIND"),
    tcc::lossValues(),
    cl::location(training.loss), cl::cat(trainingCategory));
static cl::opt<std::string, true> labelsName(
    "labels", cl::desc("Name of the labels input of the training step (default y)"),
    cl::value_desc("NAME"), cl::location(training.labels), cl::cat(trainingCategory));
static cl::opt<tcc::Optimizer, true, ChoiceParser<tcc::Optimizer>> optimizerKind(
    "optimizer", cl::desc("Optimizer compiled into the training step (PyTorch's update formulas "
                          "and defaults)"),
    cl::value_desc("KIND"),
    tcc::optimizerValues(),
    cl::location(training.optimizer), cl::cat(trainingCategory));
static cl::opt<double, true> momentumOpt("momentum", cl::desc("SGD momentum (default 0)"),
                                         cl::location(training.momentum), cl::cat(trainingCategory));
static cl::opt<double, true> dampeningOpt("dampening", cl::desc("SGD dampening (default 0)"),
                                          cl::location(training.dampening), cl::cat(trainingCategory));
static cl::opt<bool, true> nesterovOpt("nesterov", cl::desc("SGD with Nesterov momentum"),
                                       cl::location(training.nesterov), cl::cat(trainingCategory));
static cl::opt<double, true> weightDecayOpt(
    "weight-decay", cl::desc("Weight decay (default 0; 0.01 for adamw, decoupled)"),
    cl::location(training.weightDecay), cl::cat(trainingCategory));
static cl::opt<double, true> beta1Opt("beta1", cl::desc("Adam beta1 (default 0.9)"),
                                      cl::location(training.beta1), cl::cat(trainingCategory));
static cl::opt<double, true> beta2Opt("beta2", cl::desc("Adam beta2 (default 0.999)"),
                                      cl::location(training.beta2), cl::cat(trainingCategory));
static cl::opt<double, true> epsOpt("eps", cl::desc("Adam epsilon (default 1e-8)"),
                                    cl::location(training.eps), cl::cat(trainingCategory));
static cl::opt<double, true> gradClipOpt(
    "grad-clip", cl::desc("Clip the global gradient norm to NORM in the compiled step"),
    cl::value_desc("NORM"), cl::location(training.gradClip), cl::cat(trainingCategory));
static cl::opt<int64_t, true> gradAccumOpt(
    "grad-accum", cl::desc("Micro-batches of the compiled batch size per optimizer step; the "
                           "gradient and the reported loss are their mean (default 1)"),
    cl::value_desc("K"), cl::location(training.gradAccum), cl::cat(trainingCategory));
static cl::list<std::string, llvm::SmallVector<std::string>> freezeOpt(
    "freeze", cl::desc("Do not train the parameters whose names match this glob pattern (*, ?, "
                       "[...]; repeatable or comma-separated)"),
    cl::value_desc("PATTERN"), cl::CommaSeparated, cl::location(training.freeze),
    cl::cat(trainingCategory));
static cl::opt<int64_t, true> ignoreIndexOpt(
    "ignore-index", cl::desc("cross_entropy: label positions with this label do not count "
                             "(default -100, as in PyTorch)"),
    cl::value_desc("N"), cl::location(training.ignoreIndex), cl::cat(trainingCategory));
static cl::opt<tcc::Precision, true, ChoiceParser<tcc::Precision>> precisionOpt(
    "precision", cl::desc("Compute precision of the training step (bf16 / fp16: 16-bit matmuls, "
                          "convolutions and elementwise chains with f32 accumulation; softmax, "
                          "normalization, the loss and the optimizer in f32 on f32 master "
                          "weights)"),
    cl::value_desc("fp32|tf32|bf16|fp16"),
    tcc::precisionValues(),
    cl::location(training.precision), cl::cat(trainingCategory));
static cl::opt<bool, true> dataParallelOpt(
    "data-parallel", cl::desc("Train on several ranks (mpirun -np N tcc-run ...): train_step averages "
                              "its gradients over the ranks with bucketed all-reduces that overlap "
                              "the backward; one artifact runs on any world size, 1 included"),
    cl::location(training.dataParallel), cl::cat(trainingCategory));
static cl::opt<double, true> bucketMbOpt(
    "bucket-mb", cl::desc("--data-parallel: gradient bucket size in MB (default 25, as PyTorch DDP)"),
    cl::value_desc("MB"), cl::location(training.bucketMb), cl::cat(trainingCategory));
static cl::opt<int64_t, true> zeroOpt(
    "zero", cl::desc("--data-parallel: 1 shards the optimizer state (momentum, Adam moments) over "
                     "the ranks, as ZeRO stage 1: gradients reduce-scattered, each rank updates "
                     "its slice of the parameters, then all-gathers them (default 0)"),
    cl::value_desc("0|1"), cl::location(training.zero), cl::cat(trainingCategory));
static cl::opt<bool, true> skipNonFiniteOpt(
    "skip-nonfinite",
    cl::desc("Let the step skip its update when the loss or the gradient norm is inf or NaN "
             "(tcc-run --on-nonfinite=skip): parameters, optimizer state and running statistics "
             "stay as they were; every update then waits for the gradient norm"),
    cl::location(training.skipNonFinite), cl::cat(trainingCategory));
static cl::opt<double, true> labelSmoothingOpt(
    "label-smoothing", cl::desc("cross_entropy: PyTorch's label smoothing (default 0)"),
    cl::value_desc("EPS"), cl::location(training.labelSmoothing), cl::cat(trainingCategory));

static cl::opt<std::string, true> target(
    "target", cl::desc("Code generation target: cpu (x86-64 code for --cpu) or "
                       "cuda[:sm_80|:sm_90] (PTX kernels and a cubin, host code for x86-64; "
                       "default sm_90)"),
    cl::value_desc("cpu|cuda"), cl::location(options.target), cl::cat(targetCategory));

static cl::opt<bool, true> cudaEmulationOpt(
    "cuda-emulation",
    cl::desc("CUDA targets: also compile every kernel for the host, so that the runtime's "
             "emulated CUDA device runs the artifact on the CPU (TCC_CUDA_DEVICE=emulated; for "
             "testing the GPU code without a GPU, slowly)"),
    cl::location(options.cudaEmulation), cl::cat(targetCategory));

static cl::opt<std::string, true> cpuOpt(
    "cpu", cl::desc("The x86-64 CPU the code is for: x86-64-v3 (AVX2 and FMA, the default; "
                    "runs on any such CPU), native (this machine's, AVX-512 where it has it), or "
                    "an LLVM CPU name (x86-64-v4, skylake-avx512, znver4, ...); the runtime "
                    "refuses the artifact on a CPU that lacks a feature it uses"),
    cl::value_desc("name"), cl::location(options.cpu), cl::cat(targetCategory));

static cl::opt<bool, true> cpuVariantsOpt(
    "cpu-variants",
    cl::desc("A 16-bit (--precision=bf16|fp16) training step for x86-64-v3 also holds its code "
             "compiled for x86-64-v4 (AVX-512) with and without AVX512-BF16, which the runtime "
             "runs on CPUs that have them (default true; false: the x86-64-v3 code alone, "
             "compiled in less time)"),
    cl::location(options.cpuVariants), cl::cat(targetCategory));

enum class CpuLibraryKind { OneDnn, None };
static cl::opt<CpuLibraryKind> cpuLibrary(
    "cpu-library", cl::desc("Where f32 matmuls and convolutions run on CPUs"),
    cl::values(clEnumValN(CpuLibraryKind::OneDnn, "onednn",
                          "oneDNN primitives, created by the runtime once per session "
                          "(default)"),
               clEnumValN(CpuLibraryKind::None, "none",
                          "generated loops, like every other op")),
    cl::init(CpuLibraryKind::OneDnn), cl::cat(optimizationCategory));

static cl::opt<bool, true> profile(
    "profile", cl::desc("Compile every kernel into its own function named after its ONNX node, "
                        "so that perf gives a per-kernel profile (scripts/profile.py)"),
    cl::location(options.profile), cl::cat(reportCategory));

static cl::opt<tcc::Fusion, true> fusion(
    "fusion", cl::desc("Which ops fuse into one kernel"),
    cl::values(clEnumValN(tcc::Fusion::All, "all",
                          "elementwise chains, multi-output and sibling kernels, and on the CPU "
                          "reductions with their prologue and epilogue over rows (default)"),
               clEnumValN(tcc::Fusion::Elementwise, "elementwise",
                          "elementwise chains, multi-output and sibling kernels only"),
               clEnumValN(tcc::Fusion::None, "none", "none: one kernel per op")),
    cl::location(options.fusion), cl::cat(optimizationCategory));

static cl::opt<tcc::Report, true> report(
    "report", cl::desc("Print a report on standard error"),
    cl::values(clEnumValN(tcc::Report::Memory, "memory",
                          "arena and state sizes and the largest buffers of "
                          "each entry point (compiles through the memory plan)"),
               clEnumValN(tcc::Report::Fusion, "fusion",
                          "kernels before and after fusion per function, and the source "
                          "ops of each fused kernel"),
               clEnumValN(tcc::Report::Precision, "precision",
                          "what runs in which precision and why, per op and function "
                          "(--precision=bf16|fp16)")),
    cl::location(options.report), cl::cat(reportCategory));

static cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("Bytes the artifact may allocate on its target (arena, state, library workspace), "
             "with an optional KiB/MiB/GiB (or K/M/G) suffix: a training step that needs more "
             "recomputes forward values in the backward pass (--remat), or is refused"),
    cl::value_desc("SIZE"), cl::cat(optimizationCategory));

static cl::opt<tcc::Remat, true> remat(
    "remat", cl::desc("Recompute forward values in the backward pass (rematerialization)"),
    cl::values(clEnumValN(tcc::Remat::Auto, "auto",
                          "as much as --memory-budget needs (default; nothing without one)"),
               clEnumValN(tcc::Remat::Off, "off", "never: a budget the step exceeds is refused"),
               clEnumValN(tcc::Remat::Max, "max", "the least memory recomputation reaches")),
    cl::location(options.remat), cl::cat(optimizationCategory));

static cl::opt<int64_t, true> globalBatch(
    "global-batch",
    cl::desc("With --batch=auto: the samples per optimizer step; the gradient accumulation "
             "(--grad-accum) is chosen with the batch to reach it"),
    cl::value_desc("N"), cl::location(options.globalBatch), cl::cat(optimizationCategory));

static cl::opt<std::string, true> memoryPlot(
    "memory-plot",
    cl::desc("Draw the live arena bytes over the training step's schedule, without and with "
             "recomputation, as an SVG file"),
    cl::value_desc("FILE.svg"), cl::location(options.memoryPlot), cl::cat(reportCategory));

[[noreturn]] static void fail(const llvm::Twine &message);

/// SIZE as bytes: a number (14.5, 1e6) with an optional K/KiB, M/MiB, G/GiB
/// suffix (powers of 1024), rounded to a whole byte.
static int64_t parseSize(llvm::StringRef flag, llvm::StringRef text) {
  llvm::StringRef number =
      text.take_while([](char c) { return llvm::isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'; });
  // An exponent's 'e' is part of the number only when digits follow it.
  while (!number.empty() && !llvm::isDigit(number.back()) && number.back() != '.')
    number = number.drop_back();
  llvm::StringRef suffix = text.drop_front(number.size()).trim();
  double n = 0;
  uint64_t scale = 0;
  if (!number.empty() && !number.getAsDouble(n))
    scale = llvm::StringSwitch<uint64_t>(suffix.lower())
                .Cases({"", "b"}, 1)
                .Cases({"k", "kib", "kb"}, 1ull << 10)
                .Cases({"m", "mib", "mb"}, 1ull << 20)
                .Cases({"g", "gib", "gb"}, 1ull << 30)
                .Default(0);
  double bytes = std::round(n * double(scale));
  if (scale == 0 || !(bytes >= 1) || bytes >= 9.2e18)
    fail("--" + flag + "=" + text +
         ": expected a positive size in bytes (14.5MiB, 1e6), with an optional KiB, MiB or GiB "
         "suffix");
  return int64_t(bytes);
}

static cl::opt<bool, true> timeReport(
    "time-report",
    cl::desc("Print each stage's time (import, passes, LLVM per kernel group, link), the "
             "kernel counts and the compile cache's hits"),
    cl::location(options.timeReport), cl::cat(reportCategory));

static cl::opt<unsigned, true> jobs(
    "jobs", cl::desc("Threads for LLVM's optimization and code generation (default: every "
                     "core); the artifact is the same for any number"),
    cl::value_desc("N"), cl::location(options.threads), cl::cat(optimizationCategory));
static cl::opt<unsigned, true> jobsShort("j", cl::desc("Same as --jobs (-j2, -j 2)"), cl::Prefix,
                                         cl::value_desc("N"), cl::location(options.threads),
                                         cl::cat(optimizationCategory));

static cl::opt<bool> noCache(
    "no-cache",
    cl::desc("Neither use nor fill the compile cache ($TCC_CACHE_DIR, else "
             "$XDG_CACHE_HOME/tcc or ~/.cache/tcc; bounded by $TCC_CACHE_SIZE, default 5G)"),
    cl::cat(optimizationCategory));

static cl::list<std::string> constInputs(
    "const-input",
    cl::desc("Fix a graph input's value when compiling, from a .npy or ONNX "
             ".pb file (repeatable); needed for inputs that feed shapes"),
    cl::value_desc("NAME=FILE"), cl::cat(inputCategory));

static cl::list<std::string> buffersOpt(
    "buffers",
    cl::desc("The model's buffers (PyTorch's register_buffer): initializers whose names match "
             "this glob pattern (*, ?, [...]; repeatable or comma-separated) are state, never "
             "trained, and keep their values under tcc-run --init. Needed for exports that do "
             "not record them (PyTorch's TorchScript exporter)"),
    cl::value_desc("PATTERN"), cl::CommaSeparated, cl::cat(inputCategory));

static cl::opt<std::string> exportModel(cl::Positional,
                                        cl::desc("<MODEL.onnx | model.tcc | input.mlir>"),
                                        cl::sub(exportCommand));
static cl::opt<std::string> exportWeights("weights", cl::desc("The trained weights"),
                                          cl::value_desc("WEIGHTS.safetensors"),
                                          cl::sub(exportCommand));
static cl::opt<std::string> exportOutput("o", cl::desc("The model to write"),
                                         cl::value_desc("OUT.onnx"), cl::sub(exportCommand));

/// The source files of .tcc programs, loaded once for printing their lines.
static llvm::SourceMgr &dslSources() {
  static llvm::SourceMgr sources;
  return sources;
}

/// Prints a diagnostic at a line of a .tcc program as compilers do:
/// `FILE:LINE:COL: error: message`, the source line, a caret under the
/// column. False when the location is not in a readable .tcc file.
static bool printSourceDiagnostic(Diagnostic &diag) {
  auto file = dyn_cast<FileLineColLoc>(diag.getLocation());
  if (!file || !file.getLine() || !file.getFilename().getValue().ends_with(".tcc"))
    return false;
  llvm::SourceMgr &sources = dslSources();
  std::string path = file.getFilename().str();
  unsigned id = 0;
  for (unsigned i = 1; i <= sources.getNumBuffers(); ++i)
    if (sources.getMemoryBuffer(i)->getBufferIdentifier() == path)
      id = i;
  if (!id) {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!buffer)
      return false;
    id = sources.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  }
  llvm::SMLoc at = sources.FindLocForLineAndColumn(id, file.getLine(), file.getColumn());
  if (!at.isValid())
    return false;
  llvm::SourceMgr::DiagKind kind = llvm::SourceMgr::DK_Error;
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error: kind = llvm::SourceMgr::DK_Error; break;
  case DiagnosticSeverity::Warning: kind = llvm::SourceMgr::DK_Warning; break;
  case DiagnosticSeverity::Note: kind = llvm::SourceMgr::DK_Note; break;
  case DiagnosticSeverity::Remark: kind = llvm::SourceMgr::DK_Remark; break;
  }
  sources.PrintMessage(llvm::errs(), at, kind, diag.str());
  return true;
}

/// Prints a diagnostic as `tcc: error: FILE: node 'NAME': message` (or, in a
/// .tcc program, with its source line).
static void printDiagnostic(Diagnostic &diag) {
  if (printSourceDiagnostic(diag)) {
    for (Diagnostic &note : diag.getNotes())
      printDiagnostic(note);
    return;
  }
  llvm::raw_ostream &os = llvm::errs();
  std::string where;
  Location loc = diag.getLocation();
  if (auto name = dyn_cast<NameLoc>(loc)) {
    if (auto file = dyn_cast<FileLineColLoc>(name.getChildLoc()))
      where = (file.getFilename().str() + ": ");
    where += "node '" + name.getName().str() + "': ";
  } else if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    where = file.getFilename().str();
    if (file.getLine())
      where += ":" + std::to_string(file.getLine()) + ":" +
               std::to_string(file.getColumn());
    where += ": ";
  } else if (!isa<UnknownLoc>(loc)) {
    std::string s;
    llvm::raw_string_ostream(s) << loc;
    where = s + ": ";
  }
  const char *kind = "error";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error: kind = "error"; break;
  case DiagnosticSeverity::Warning: kind = "warning"; break;
  case DiagnosticSeverity::Note: kind = "note"; break;
  case DiagnosticSeverity::Remark: kind = "remark"; break;
  }
  os << "tcc: " << kind << ": " << where << diag.str() << "\n";
  for (Diagnostic &note : diag.getNotes())
    printDiagnostic(note);
}

[[noreturn]] static void fail(const llvm::Twine &message) {
  llvm::errs() << "tcc: error: " << message << "\n";
  std::exit(1);
}

static void parseImportFlags(tcc::OnnxImportOptions &import);

/// `tcc export model.tcc` (or a tcc dialect .mlir file): the program's
/// function, imported as for inference, written as ONNX.
static int exportDialectMain() {
  DialectRegistry registry;
  tcc::registerAllDialects(registry);
  MLIRContext context(registry);
  context.getDiagEngine().registerHandler([](Diagnostic &diag) { printDiagnostic(diag); });
  tcc::OnnxImportOptions flags;
  parseImportFlags(flags);
  OwningOpRef<ModuleOp> module;
  if (llvm::sys::path::extension(exportModel) == ".tcc") {
    tcc::DslImportOptions import;
    import.batch = flags.batch;
    for (const auto &d : flags.dims)
      import.dims[d.getKey()] = d.getValue();
    module = tcc::importDslFile(context, exportModel, import);
  } else {
    llvm::SourceMgr sourceMgr;
    auto file = llvm::MemoryBuffer::getFile(exportModel, /*IsText=*/true);
    if (!file)
      fail(exportModel + ": " + file.getError().message());
    sourceMgr.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (!module)
    return 1;
  auto fn = module->lookupSymbol<func::FuncOp>("forward");
  if (!fn)
    fail(exportModel + ": has no function 'forward'");
  tcc::DialectExportSummary summary;
  if (failed(tcc::exportDialectFunction(fn, exportWeights, exportOutput, summary)))
    return 1;
  llvm::errs() << "tcc: wrote " << exportOutput << " (ONNX opset 17): " << summary.nodes
               << " node(s), " << summary.initializers << " trained initializer(s)";
  if (summary.batchNorms || summary.dropouts)
    llvm::errs() << "; for inference: " << summary.batchNorms
                 << " batch norm(s) use their running statistics, " << summary.dropouts
                 << " dropout(s) off";
  llvm::errs() << "\n";
  return 0;
}

static int exportMain() {
  if (exportModel.empty() || exportWeights.empty() || exportOutput.empty())
    fail("usage: tcc export MODEL.onnx|model.tcc --weights WEIGHTS.safetensors -o OUT.onnx "
         "[--batch=N] [--dim NAME=N]");
  std::string clash;
  if (!tcc::rt::checkOutputsApart({{"the model", exportModel}, {"--weights", exportWeights}},
                                  {{"-o", exportOutput}}, &clash))
    fail(clash);
  llvm::StringRef ext = llvm::sys::path::extension(exportModel);
  if (ext == ".tcc" || ext == ".mlir")
    return exportDialectMain();
  if (batch.getNumOccurrences() || dimBindings.getNumOccurrences())
    fail("--batch and --dim bind a .tcc program's shapes; an ONNX model is exported as it is");
  tcc::ExportSummary summary;
  std::string error;
  if (!tcc::exportTrainedModel(exportModel, exportWeights, exportOutput, summary, error))
    fail(error);
  llvm::errs() << "tcc: wrote " << exportOutput << " with " << summary.replaced
               << " trained initializer(s)";
  if (!summary.untouched.empty())
    llvm::errs() << "; kept as they were: " << summary.untouched;
  if (summary.batchNorms || summary.dropouts)
    llvm::errs() << "; for inference: " << summary.batchNorms
                 << " batch norm(s) use their running statistics, " << summary.dropouts
                 << " dropout(s) off";
  llvm::errs() << "\n";
  return 0;
}

/// The stage --emit names, or the one the output's extension implies.
static tcc::Stage stageToEmit() {
  switch (emit) {
  case EmitKind::MlirRaw: return tcc::Stage::MlirRaw;
  case EmitKind::Mlir: return tcc::Stage::Mlir;
  case EmitKind::Linalg: return tcc::Stage::Linalg;
  case EmitKind::Bufferized: return tcc::Stage::Bufferized;
  case EmitKind::Ptx: return tcc::Stage::Ptx;
  case EmitKind::LLVMDialect: return tcc::Stage::LLVMDialect;
  case EmitKind::LLVMIR: return tcc::Stage::LLVMIR;
  case EmitKind::Object: return tcc::Stage::Object;
  case EmitKind::SharedLibrary: return tcc::Stage::SharedLibrary;
  case EmitKind::Default: break;
  }
  llvm::StringRef ext = llvm::sys::path::extension(outputFile);
  return ext == ".so"   ? tcc::Stage::SharedLibrary
         : ext == ".o"  ? tcc::Stage::Object
         : ext == ".ll" ? tcc::Stage::LLVMIR
                        : tcc::Stage::Mlir;
}

/// The import flags: --batch, --dim, --const-input, --buffers.
static void parseImportFlags(tcc::OnnxImportOptions &import) {
  import.buffers.assign(buffersOpt.begin(), buffersOpt.end());
  if (batch.getNumOccurrences()) {
    int64_t n = 0;
    if (batch == "auto" && !exportCommand) {
      options.autoBatch = true;
    } else if (llvm::StringRef(batch).getAsInteger(10, n) || n <= 0) {
      fail("--batch must be a positive integer" +
           std::string(exportCommand ? "" : " or auto") + ", not '" + batch + "'");
    } else {
      import.batch = n;
    }
  }
  for (const std::string &binding : dimBindings) {
    auto [name, value] = llvm::StringRef(binding).split('=');
    int64_t n;
    // A .tcc constant may be 0 (a switch); its dimensions are checked
    // where they are used.
    bool dsl = llvm::sys::path::extension(exportCommand ? exportModel : inputFile) == ".tcc";
    if (name.empty() || value.getAsInteger(10, n) || n < 0 || (n == 0 && !dsl))
      fail("--dim expects NAME=N with a positive N, got '" + binding + "'");
    import.dims[name] = n;
  }
  if (lengthBucketsOpt.getNumOccurrences()) {
    auto [name, list] = llvm::StringRef(lengthBucketsOpt).split('=');
    llvm::SmallVector<llvm::StringRef> values;
    list.split(values, ',');
    std::vector<int64_t> buckets;
    for (llvm::StringRef v : values) {
      int64_t n;
      if (v.trim().getAsInteger(10, n) || n <= 0)
        fail("--length-buckets expects DIM=N1,N2,... with positive Ns, got '" + lengthBucketsOpt +
             "'");
      buckets.push_back(n);
    }
    std::sort(buckets.begin(), buckets.end());
    if (name.empty() || buckets.size() < 2 ||
        std::adjacent_find(buckets.begin(), buckets.end()) != buckets.end())
      fail("--length-buckets expects DIM=N1,N2,... with two or more different values, got '" +
           lengthBucketsOpt + "'");
    auto bound = import.dims.find(name);
    if (bound != import.dims.end() && bound->second != buckets.back())
      fail("--length-buckets " + lengthBucketsOpt + ": --dim " + name.str() + "=" +
           std::to_string(bound->second) + " must be the largest bucket (or left out)");
    import.dims[name] = buckets.back();
    options.lengthDim = name.str();
    options.lengthBuckets = std::move(buckets);
  }
  for (const std::string &binding : constInputs) {
    auto [name, file] = llvm::StringRef(binding).split('=');
    if (name.empty() || file.empty())
      fail("--const-input expects NAME=FILE, got '" + binding + "'");
    tcc::rt::HostTensor value;
    std::string error;
    if (!tcc::rt::readTensorFile(file.str(), value, &error))
      fail(error);
    import.constantInputs[name] = {int32_t(value.dtype), value.shape,
                                   std::vector<char>(value.bytes.begin(), value.bytes.end())};
  }
}

/// --mode, --loss and --optimizer: whether to train, checked for conflicts.
/// A .tcc program may carry its own loss (its train block), which the
/// compiler reads; the flags given are recorded so that they win over it.
static void parseTrainingFlags() {
  bool asked = lossKind.getNumOccurrences() || optimizerKind.getNumOccurrences();
  options.train = mode == ModeKind::Train || (mode == ModeKind::Default && asked);
  options.inferOnly = mode == ModeKind::Infer;
  if (mode == ModeKind::Infer && asked)
    fail("--loss and --optimizer describe training; they cannot be used with --mode=infer");
  bool recipe = llvm::sys::path::extension(inputFile) == ".tcc";
  if (options.train && !lossKind.getNumOccurrences() && !recipe)
    fail("training needs --loss=mse|cross_entropy|none");
  using S = tcc::TrainingSetting;
  const std::pair<S, cl::Option *> given[] = {
      {S::Loss, &lossKind},           {S::Optimizer, &optimizerKind},
      {S::Labels, &labelsName},       {S::Momentum, &momentumOpt},
      {S::Dampening, &dampeningOpt},  {S::Nesterov, &nesterovOpt},
      {S::WeightDecay, &weightDecayOpt}, {S::Beta1, &beta1Opt},
      {S::Beta2, &beta2Opt},          {S::Eps, &epsOpt},
      {S::GradClip, &gradClipOpt},    {S::GradAccum, &gradAccumOpt},
      {S::Freeze, &freezeOpt},        {S::IgnoreIndex, &ignoreIndexOpt},
      {S::LabelSmoothing, &labelSmoothingOpt}};
  static_assert(std::size(given) == tcc::kNumTrainingSettings, "a flag for every recipe setting");
  for (auto [setting, option] : given)
    if (option->getNumOccurrences())
      options.trainingGiven.set(setting);
  // 0 is the pass's "no clipping"; said explicitly it is a mistake (PyTorch
  // would zero every gradient).
  if (gradClipOpt.getNumOccurrences() && training.gradClip == 0)
    fail("--grad-clip must be a finite norm > 0 (leave it out for no clipping), got 0");
}

static bool isOurs(const cl::Option &option) {
  const cl::OptionCategory *ours[] = {&inputCategory,  &trainingCategory, &optimizationCategory,
                                      &targetCategory, &outputCategory,   &reportCategory};
  return llvm::any_of(option.Categories, [&](const cl::OptionCategory *c) {
    return llvm::is_contained(ours, c) || c->getName() == "Generic Options";
  });
}

/// MLIR's and LLVM's options out of --help, into --help-hidden (LLVM's
/// HideUnrelatedOptions would hide them from both).
static void hideForeignOptions() {
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (!isOurs(*option) && option->getOptionHiddenFlag() == cl::NotHidden)
      option->setHiddenFlag(cl::Hidden);
}

/// Whether one of MLIR's or LLVM's own flags was given: they can change the
/// code in ways the cache's keys do not see, so such a compile bypasses it.
static bool foreignOptionGiven() {
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (!isOurs(*option) && option->getNumOccurrences())
      return true;
  return false;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Internal failures end like any other error: a message and exit status 1.
  llvm::install_fatal_error_handler(
      [](void *, const char *reason, bool) {
        llvm::errs() << "tcc: internal error: " << reason << "\n";
        std::exit(1);
      },
      nullptr);
  // So does running out of memory (a model too large for this machine):
  // LLVM's handler, which InitLLVM makes `new` call too, would abort with
  // status 134. It may not allocate: a fixed message and _exit.
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *, bool) {
        static const char message[] =
            "tcc: error: out of memory: the compile needs more memory than this process may "
            "use (a smaller --batch or model, or a machine with more memory)\n";
        ssize_t ignored = ::write(2, message, sizeof message - 1);
        (void)ignored;
        ::_exit(1);
      },
      nullptr);

  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  tcc::registerAllPasses();
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "tcc " TCC_VERSION "\n"
       << "built with LLVM/MLIR " LLVM_VERSION_STRING "\n";
  });
  hideForeignOptions();
  cl::ParseCommandLineOptions(
      argc, argv,
      "tcc: an ahead-of-time compiler for training neural networks\n\n"
      "  tcc MODEL.onnx -o train.so --loss=cross_entropy --optimizer=adamw   a training step\n"
      "  tcc MODEL.onnx -o infer.so --batch=1                               inference only\n"
      "  tcc MODEL.onnx --emit=linalg -o -                                  stop at a stage\n"
      "  tcc model.tcc --batch=64 -o train.so                               a .tcc training recipe\n"
      "  tcc export MODEL.onnx --weights W.safetensors -o OUT.onnx          trained weights "
      "into ONNX\n"
      "  tcc export model.tcc --batch=1 --weights W.safetensors -o OUT.onnx a .tcc model as "
      "ONNX\n\n"
      "MLIR's and LLVM's own options (--mlir-timing, --mlir-print-ir-after-all, ...) are\n"
      "listed by --help-hidden.\n");
  if (exportCommand)
    return exportMain();

  if (inputFile.empty())
    fail("no input file; run 'tcc --help' for usage");
  options.input = inputFile;
  options.output = outputFile;
  options.stage = stageToEmit();
  options.libraryCalls = cpuLibrary == CpuLibraryKind::OneDnn;
  options.optimize = !noOptimize;
  parseImportFlags(options.import);
  parseTrainingFlags();
  if (memoryBudget.getNumOccurrences())
    options.memoryBudget = parseSize("memory-budget", memoryBudget);
  options.cache = !noCache && !foreignOptionGiven();

  DialectRegistry registry;
  tcc::registerAllDialects(registry);
  MLIRContext context(registry);
  // A user's error names the model and the node; the IR of the op it was
  // found on is for compiler work: only with --mlir-print-op-on-diagnostic.
  auto &registered = cl::getRegisteredOptions();
  auto printOp = registered.find("mlir-print-op-on-diagnostic");
  if (printOp == registered.end() || printOp->second->getNumOccurrences() == 0)
    context.printOpOnDiagnostic(false);
  context.getDiagEngine().registerHandler([](Diagnostic &diag) { printDiagnostic(diag); });
  DefaultTimingManager tm;
  applyDefaultTimingManagerCLOptions(tm);
  TimingScope timing = tm.getRootScope();
  options.configurePassManager = [&](PassManager &pm) {
    pm.enableTiming(timing);
    return applyPassManagerCLOptions(pm);
  };
  return failed(tcc::compile(context, options)) ? 1 : 0;
}
