//===- tcc.cpp - the tcc compiler driver ----------------------------------===//
//
// `tcc MODEL.onnx --emit=mlir` imports a model, runs the pipeline up to the
// requested stage and prints (or writes with -o) the result. Every failure
// ends with exit status 1 and a message that names the file, the node and
// what is wrong; MLIR's debugging flags (--mlir-print-ir-after-all,
// --mlir-timing, ...) pass through to the pass manager.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipeline.h"
#include "compiler/Registration.h"
#include "compiler/cpu/ArtifactWriter.h"
#include "compiler/cpu/CpuPipeline.h"
#include "compiler/cuda/CudaPipeline.h"
#include "frontend/onnx/OnnxExport.h"
#include "frontend/onnx/OnnxImporter.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/data/host_tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory tccCategory("tcc options");

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.onnx | model.onnxtxt | input.mlir>"),
                                      cl::cat(tccCategory));

static cl::opt<std::string> outputFile("o", cl::desc("Write the output to this file (default: standard output)"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(tccCategory));

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
    cl::init(EmitKind::Default), cl::cat(tccCategory));

static cl::opt<bool> noOptimize("O0",
                                cl::desc("Do not optimize the LLVM IR"),
                                cl::cat(tccCategory));

static cl::opt<int64_t> batch("batch",
                              cl::desc("Bind the first dimension of every graph input that is symbolic"),
                              cl::value_desc("N"), cl::init(-1), cl::cat(tccCategory));

static cl::list<std::string> dimBindings(
    "dim", cl::desc("Bind a named symbolic dimension (repeatable)"),
    cl::value_desc("NAME=N"), cl::cat(tccCategory));

enum class ModeKind { Default, Infer, Train };
static cl::opt<ModeKind> mode(
    "mode", cl::desc("What the artifact computes (default: train when --loss or --optimizer "
                     "is given, else infer)"),
    cl::values(clEnumValN(ModeKind::Infer, "infer", "the forward model: an 'infer' entry point"),
               clEnumValN(ModeKind::Train, "train",
                          "also a 'train_step' entry point: forward, loss, backward, "
                          "optimizer update")),
    cl::init(ModeKind::Default), cl::cat(tccCategory));

static cl::opt<std::string> lossKind(
    "loss", cl::desc("Training loss: mse, cross_entropy, or none (the model's first output is "
                     "the loss)"),
    cl::value_desc("KIND"), cl::cat(tccCategory));
static cl::opt<std::string> labelsName(
    "labels", cl::desc("Name of the labels input of the training step (default y)"),
    cl::value_desc("NAME"), cl::init("y"), cl::cat(tccCategory));
static cl::opt<std::string> optimizerKind(
    "optimizer", cl::desc("Optimizer compiled into the training step: sgd (default), adam, adamw "
                          "(PyTorch's update formulas and defaults)"),
    cl::value_desc("KIND"), cl::cat(tccCategory));
static cl::opt<double> momentumOpt("momentum", cl::desc("SGD momentum (default 0)"),
                                   cl::init(0.0), cl::cat(tccCategory));
static cl::opt<double> dampeningOpt("dampening", cl::desc("SGD dampening (default 0)"),
                                    cl::init(0.0), cl::cat(tccCategory));
static cl::opt<bool> nesterovOpt("nesterov", cl::desc("SGD with Nesterov momentum"),
                                 cl::cat(tccCategory));
static cl::opt<double> weightDecayOpt(
    "weight-decay", cl::desc("Weight decay (default 0; 0.01 for adamw, decoupled)"),
    cl::init(-1.0), cl::cat(tccCategory));
static cl::opt<double> beta1Opt("beta1", cl::desc("Adam beta1 (default 0.9)"), cl::init(0.9),
                                cl::cat(tccCategory));
static cl::opt<double> beta2Opt("beta2", cl::desc("Adam beta2 (default 0.999)"), cl::init(0.999),
                                cl::cat(tccCategory));
static cl::opt<double> epsOpt("eps", cl::desc("Adam epsilon (default 1e-8)"), cl::init(1e-8),
                              cl::cat(tccCategory));
static cl::opt<double> gradClipOpt(
    "grad-clip", cl::desc("Clip the global gradient norm to NORM in the compiled step"),
    cl::value_desc("NORM"), cl::init(0.0), cl::cat(tccCategory));
static cl::opt<int64_t> gradAccumOpt(
    "grad-accum", cl::desc("Micro-batches of the compiled batch size per optimizer step; the "
                           "gradient and the reported loss are their mean (default 1)"),
    cl::value_desc("K"), cl::init(1), cl::cat(tccCategory));
static cl::list<std::string> freezeOpt(
    "freeze", cl::desc("Do not train the parameters whose names match this glob pattern (*, ?, "
                       "[...]; repeatable or comma-separated)"),
    cl::value_desc("PATTERN"), cl::CommaSeparated, cl::cat(tccCategory));
static cl::opt<int64_t> ignoreIndexOpt(
    "ignore-index", cl::desc("cross_entropy: label positions with this label do not count "
                             "(default -100, as in PyTorch)"),
    cl::value_desc("N"), cl::init(-100), cl::cat(tccCategory));
static cl::opt<double> labelSmoothingOpt(
    "label-smoothing", cl::desc("cross_entropy: PyTorch's label smoothing (default 0)"),
    cl::value_desc("EPS"), cl::init(0.0), cl::cat(tccCategory));

static cl::opt<std::string> target(
    "target", cl::desc("Code generation target: cpu (x86-64-v3 code) or cuda[:sm_80|:sm_90] "
                       "(PTX kernels and a cubin, host code for x86-64; default sm_90)"),
    cl::value_desc("cpu|cuda"), cl::init("cpu"), cl::cat(tccCategory));

enum class CpuLibraryKind { OneDnn, None };
static cl::opt<CpuLibraryKind> cpuLibrary(
    "cpu-library", cl::desc("Where f32 matmuls and convolutions run on CPUs"),
    cl::values(clEnumValN(CpuLibraryKind::OneDnn, "onednn",
                          "oneDNN primitives, created by the runtime once per session "
                          "(default)"),
               clEnumValN(CpuLibraryKind::None, "none",
                          "generated loops, like every other op")),
    cl::init(CpuLibraryKind::OneDnn), cl::cat(tccCategory));

static cl::opt<bool> profile(
    "profile", cl::desc("Compile every kernel into its own function named after its ONNX node, "
                        "so that perf gives a per-kernel profile (scripts/profile.sh)"),
    cl::init(false), cl::cat(tccCategory));

enum class FusionKind { All, Elementwise, None };
static cl::opt<FusionKind> fusion(
    "fusion", cl::desc("Which ops fuse into one kernel"),
    cl::values(clEnumValN(FusionKind::All, "all",
                          "elementwise chains, multi-output and sibling kernels, and on the CPU "
                          "reductions with their prologue and epilogue over rows (default)"),
               clEnumValN(FusionKind::Elementwise, "elementwise",
                          "elementwise chains, multi-output and sibling kernels only"),
               clEnumValN(FusionKind::None, "none", "none: one kernel per op")),
    cl::init(FusionKind::All), cl::cat(tccCategory));

enum class ReportKind { None, Memory, Fusion };
static cl::opt<ReportKind> report(
    "report", cl::desc("Print a report on standard error"),
    cl::values(clEnumValN(ReportKind::Memory, "memory",
                          "arena and state sizes and the largest buffers of "
                          "each entry point (compiles through the memory plan)"),
               clEnumValN(ReportKind::Fusion, "fusion",
                          "kernels before and after fusion per function, and the source "
                          "ops of each fused kernel")),
    cl::init(ReportKind::None), cl::cat(tccCategory));

/// Prints the memory plan of every planned function: region sizes, then the
/// buffers by size (named tensors and intermediates).
/// How a parameter's initial values are distributed, for tcc-run --init
/// (which generates weights on the machine instead of shipping them):
/// "constant V" when all are equal, "uniform LO HI" when the spread is a
/// uniform one's (range / std within 15% of sqrt(12), centred), else
/// "normal MEAN STD". Empty for non-f32 parameters.
static std::string initializerKind(int32_t dtype, llvm::ArrayRef<char> bytes) {
  if (dtype != TCC_DTYPE_F32 || bytes.size() < sizeof(float))
    return "";
  size_t n = bytes.size() / sizeof(float);
  std::vector<float> v(n);
  std::memcpy(v.data(), bytes.data(), n * sizeof(float));
  double lo = v[0], hi = v[0], sum = 0, sq = 0;
  for (float x : v) {
    lo = std::min(lo, double(x));
    hi = std::max(hi, double(x));
    sum += x;
  }
  double mean = sum / double(n);
  for (float x : v)
    sq += (x - mean) * (x - mean);
  double std = std::sqrt(sq / double(n));
  auto fmt = [](double x) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.9g", x);
    return std::string(buffer);
  };
  if (lo == hi)
    return "constant " + fmt(lo);
  double range = hi - lo;
  if (n >= 64 && std::abs(range / std - std::sqrt(12.0)) < 0.15 * std::sqrt(12.0) &&
      std::abs(mean - (lo + hi) / 2) < 0.1 * range)
    return "uniform " + fmt(lo) + " " + fmt(hi);
  return "normal " + fmt(mean) + " " + fmt(std);
}

/// CHIP ("sm_90"; empty for the CPU) adds the library calls' device workspace.
static void printMemoryReport(ModuleOp module, llvm::raw_ostream &os, llvm::StringRef chip) {
  auto human = [](int64_t bytes) {
    std::string s;
    llvm::raw_string_ostream o(s);
    if (bytes >= (1 << 20))
      o << llvm::format("%.1f MiB", bytes / 1048576.0);
    else if (bytes >= 1024)
      o << llvm::format("%.1f KiB", bytes / 1024.0);
    else
      o << bytes << " B";
    return s;
  };
  for (auto fn : module.getOps<mlir::func::FuncOp>()) {
    auto plan = fn->getAttrOfType<ArrayAttr>("tcc.plan");
    if (!plan)
      continue;
    int64_t arena = fn->getAttrOfType<IntegerAttr>("tcc.arena_size").getInt();
    int64_t state = fn->getAttrOfType<IntegerAttr>("tcc.state_size").getInt();
    struct Row { std::string what; int64_t offset, size; };
    std::vector<Row> rows;
    int64_t inputs = 0, outputs = 0, temps = 0;
    for (Attribute a : plan) {
      auto d = cast<DictionaryAttr>(a);
      std::string role = d.getAs<StringAttr>("role").str();
      int64_t size = d.getAs<IntegerAttr>("size").getInt();
      (role == "input" ? inputs : role == "output" ? outputs : temps) +=
          role == "param" ? 0 : size;
      rows.push_back({role + " " + d.getAs<StringAttr>("name").str() +
                          (role == "param" ? " (state)" : ""),
                      d.getAs<IntegerAttr>("offset").getInt(), size});
    }
    temps = 0;
    int index = 0;
    if (auto t = fn->getAttrOfType<ArrayAttr>("tcc.plan_temps"))
      for (Attribute a : t) {
        ArrayRef<int64_t> v = cast<DenseI64ArrayAttr>(a).asArrayRef();
        temps += v[1];
        rows.push_back({"intermediate #" + std::to_string(index++) +
                            " (ops " + std::to_string(v[2]) + ".." +
                            std::to_string(v[3]) + ")",
                        v[0], v[1]});
      }
    llvm::stable_sort(rows, [](const Row &x, const Row &y) { return x.size > y.size; });
    os << "memory plan of @" << fn.getSymName() << ":\n"
       << "  arena " << human(arena) << " (inputs " << human(inputs) << ", outputs "
       << human(outputs) << ", intermediates " << human(temps) << " before reuse)\n"
       << "  state " << human(state) << " (parameters)\n";
    if (!chip.empty()) {
      // The calls are still func.calls carrying their kind and parameters.
      int64_t workspace = 0, calls = 0;
      std::string largest;
      fn.walk([&](func::CallOp call) {
        auto info = call->getAttrOfType<DictionaryAttr>("tcc.library_call");
        auto kind = info ? info.getAs<IntegerAttr>("kind") : nullptr;
        auto params = info ? info.getAs<DenseI64ArrayAttr>("params") : nullptr;
        if (!kind || !params)
          return;
        ++calls;
        int64_t bytes =
            tcc::libraryWorkspaceBytes(int32_t(kind.getInt()), params.asArrayRef(), chip);
        if (bytes > workspace) {
          workspace = bytes;
          largest = kind.getInt() == TCC_LIBRARY_CALL_MATMUL ? "a cuBLASLt matmul on " + chip.str()
                                                             : "a cuDNN convolution's im2col bound";
        }
      });
      if (calls > 0)
        os << "  library workspace " << human(workspace)
           << " at the device arena's tail (shared by " << calls
           << " library call(s); the largest need: " << largest << ")\n";
    }
    os << "  largest buffers:\n";
    for (size_t i = 0; i < rows.size() && i < 10; ++i)
      os << "    " << llvm::right_justify(human(rows[i].size), 10) << "  at "
         << llvm::right_justify(std::to_string(rows[i].offset), 8) << "  "
         << rows[i].what << "\n";
  }
}

static cl::list<std::string> constInputs(
    "const-input",
    cl::desc("Fix a graph input's value when compiling, from a .npy or ONNX "
             ".pb file (repeatable); needed for inputs that feed shapes"),
    cl::value_desc("NAME=FILE"), cl::cat(tccCategory));

/// Prints a diagnostic as `tcc: error: FILE: node 'NAME': message`.
static void printDiagnostic(Diagnostic &diag) {
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

/// `tcc export MODEL --weights FILE -o OUT`: the model with trained weights.
static int exportMain(int argc, char **argv) {
  std::string model, weights, out;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *what) -> std::string {
      if (i + 1 >= argc)
        fail(llvm::Twine("export: ") + what + " needs a value");
      return argv[++i];
    };
    if (arg == "--weights")
      weights = value("--weights");
    else if (arg.rfind("--weights=", 0) == 0)
      weights = arg.substr(10);
    else if (arg == "-o")
      out = value("-o");
    else if (arg == "--help" || arg == "-h") {
      llvm::outs() << "usage: tcc export MODEL.onnx --weights WEIGHTS.safetensors -o OUT.onnx\n"
                      "Writes MODEL with its initializers replaced by the trained values\n"
                      "(tcc-run --save, or a checkpoint: its optimizer state is ignored).\n";
      return 0;
    } else if (!arg.empty() && arg[0] == '-')
      fail("export: unknown option " + arg);
    else if (model.empty())
      model = arg;
    else
      fail("export: unexpected argument '" + arg + "'");
  }
  if (model.empty() || weights.empty() || out.empty())
    fail("usage: tcc export MODEL.onnx --weights WEIGHTS.safetensors -o OUT.onnx");
  tcc::ExportSummary summary;
  std::string error;
  if (!tcc::exportTrainedModel(model, weights, out, summary, error))
    fail(error);
  llvm::errs() << "tcc: wrote " << out << " with " << summary.replaced
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

int main(int argc, char **argv) {
  if (argc > 1 && llvm::StringRef(argv[1]) == "export")
    return exportMain(argc, argv);
  llvm::InitLLVM init(argc, argv);
  // Internal failures end like any other error: a message and exit status 1.
  llvm::install_fatal_error_handler(
      [](void *, const char *reason, bool) {
        llvm::errs() << "tcc: internal error: " << reason << "\n";
        std::exit(1);
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
  cl::ParseCommandLineOptions(
      argc, argv,
      "tcc: an ahead-of-time compiler for training neural networks\n\n"
      "  tcc MODEL.onnx --emit=mlir [-o FILE] [--batch=N] [--dim NAME=N]\n");

  if (inputFile.empty())
    fail("no input file; run 'tcc --help' for usage");

  tcc::OnnxImportOptions options;
  if (batch.getNumOccurrences()) {
    if (batch <= 0)
      fail("--batch must be a positive integer");
    options.batch = batch;
  }
  for (const std::string &binding : dimBindings) {
    auto [name, value] = llvm::StringRef(binding).split('=');
    int64_t n;
    if (name.empty() || value.getAsInteger(10, n) || n <= 0)
      fail("--dim expects NAME=N with a positive N, got '" + binding + "'");
    options.dims[name] = n;
  }

  for (const std::string &binding : constInputs) {
    auto [name, file] = llvm::StringRef(binding).split('=');
    if (name.empty() || file.empty())
      fail("--const-input expects NAME=FILE, got '" + binding + "'");
    tcc::rt::HostTensor value;
    std::string error;
    if (!tcc::rt::readTensorFile(file.str(), value, &error))
      fail(error);
    options.constantInputs[name] = {
        int32_t(value.dtype), value.shape,
        std::vector<char>(value.bytes.begin(), value.bytes.end())};
  }

  DialectRegistry registry;
  tcc::registerAllDialects(registry);
  MLIRContext context(registry);
  // Reports print per function: in the functions' order, not the threads'.
  if (report != ReportKind::None)
    context.disableMultithreading();
  context.getDiagEngine().registerHandler(
      [](Diagnostic &diag) { printDiagnostic(diag); });

  struct Parameter {
    std::string name;
    int32_t dtype;
    std::vector<int64_t> shape;
    std::vector<char> bytes;
  };
  std::vector<Parameter> parameters;
  OwningOpRef<ModuleOp> module;
  if (llvm::sys::path::extension(inputFile) == ".mlir") {
    llvm::SourceMgr sourceMgr;
    std::string error;
    auto file = openInputFile(inputFile, &error);
    if (!file)
      fail(inputFile + ": " + error);
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  } else {
    // Initial parameter values go beside the library as safetensors, the
    // format of checkpoints; only an artifact needs them.
    if (emit == EmitKind::SharedLibrary ||
        (emit == EmitKind::Default &&
         llvm::sys::path::extension(outputFile) == ".so"))
      options.onParameter = [&](llvm::StringRef name, Type elementType,
                                llvm::ArrayRef<int64_t> shape,
                                llvm::ArrayRef<char> bytes) {
        parameters.push_back({name.str(), tcc::abiDtypeOf(elementType),
                              std::vector<int64_t>(shape.begin(), shape.end()),
                              std::vector<char>(bytes.begin(), bytes.end())});
      };
    module = tcc::importOnnxFile(context, inputFile, options);
  }
  if (!module)
    return 1;

  bool train = mode == ModeKind::Train ||
               (mode == ModeKind::Default && (!lossKind.empty() || !optimizerKind.empty()));
  if (mode == ModeKind::Infer && (!lossKind.empty() || !optimizerKind.empty()))
    fail("--loss and --optimizer describe training; they cannot be used with --mode=infer");
  if (train && lossKind.empty())
    fail("training needs --loss=mse|cross_entropy|none");
  tcc::CudaPipelineOptions cuda;
  bool device = target != "cpu";
  if (device && !tcc::parseCudaTarget(target, cuda))
    fail("--target=" + target + ": expected cpu, cuda, cuda:sm_80 or cuda:sm_90");
  cuda.toolkitPath = tcc::defaultCudaToolkitPath();

  EmitKind stage = emit;
  if (stage == EmitKind::Default) {
    llvm::StringRef ext = llvm::sys::path::extension(outputFile);
    stage = ext == ".so"   ? EmitKind::SharedLibrary
            : ext == ".o"  ? EmitKind::Object
            : ext == ".ll" ? EmitKind::LLVMIR
                           : EmitKind::Mlir;
  }
  if (stage >= EmitKind::Object && outputFile == "-")
    fail("--emit=obj and --emit=so need an output file (-o FILE)");
  // Where the output goes is checked before the compile, not after it.
  if (outputFile != "-") {
    llvm::StringRef folder = llvm::sys::path::parent_path(outputFile);
    if (folder.empty())
      folder = ".";
    if (llvm::sys::fs::is_directory(outputFile))
      fail(outputFile + ": is a folder, not a file (-o FILE)");
    if (!llvm::sys::fs::is_directory(folder))
      fail(llvm::Twine(outputFile) + ": the folder " + folder + " does not exist");
    if (llvm::sys::fs::access(folder, llvm::sys::fs::AccessMode::Write))
      fail(llvm::Twine(outputFile) + ": the folder " + folder + " is not writable");
  }

  DefaultTimingManager tm;
  applyDefaultTimingManagerCLOptions(tm);
  TimingScope timing = tm.getRootScope();
  // Runs one stage of the pipeline with MLIR's debugging flags applied.
  auto runStage = [&](llvm::function_ref<void(OpPassManager &)> build) {
    PassManager pm(&context);
    pm.enableTiming(timing);
    if (failed(applyPassManagerCLOptions(pm)))
      return false;
    build(pm);
    return succeeded(pm.run(*module));
  };
  if (stage != EmitKind::MlirRaw && !runStage(tcc::buildImportPipeline))
    return 1;
  // 0 is the pass's "no clipping"; said explicitly it is a mistake (PyTorch
  // would zero every gradient).
  if (gradClipOpt.getNumOccurrences() && gradClipOpt == 0)
    fail("--grad-clip must be a finite norm > 0 (leave it out for no clipping), got 0");
  if (train && stage != EmitKind::MlirRaw &&
      !runStage([&](OpPassManager &pm) {
        tcc::TrainingOptions options;
        options.loss = lossKind;
        options.labels = labelsName;
        options.optimizer = optimizerKind.empty() ? std::string("sgd") : std::string(optimizerKind);
        options.momentum = momentumOpt;
        options.dampening = dampeningOpt;
        options.nesterov = nesterovOpt;
        options.weightDecay = weightDecayOpt;
        options.beta1 = beta1Opt;
        options.beta2 = beta2Opt;
        options.eps = epsOpt;
        options.gradClip = gradClipOpt;
        options.gradAccum = gradAccumOpt;
        options.freeze.assign(freezeOpt.begin(), freezeOpt.end());
        options.ignoreIndex = ignoreIndexOpt;
        options.labelSmoothing = labelSmoothingOpt;
        tcc::buildTrainingPipeline(pm, options);
      }))
    return 1;

  if (report == ReportKind::Memory && stage < EmitKind::Bufferized)
    fail("--report=memory needs compilation through the memory plan "
         "(--emit=bufferized or later, or -o model.so)");
  tcc::CpuPipelineOptions cpu;
  cpu.libraryCalls = cpuLibrary == CpuLibraryKind::OneDnn;
  cpu.fuse = fusion != FusionKind::None;
  cpu.fuseRows = fusion == FusionKind::All;
  cpu.reportFusion = report == ReportKind::Fusion;
  cpu.outlineKernels = profile;
  cpu.device = device;
  if (report == ReportKind::Fusion && stage < EmitKind::Linalg)
    fail("--report=fusion needs compilation through fusion (--emit=linalg or later, or -o "
         "model.so)");
  if (stage >= EmitKind::Linalg &&
      !runStage([&](OpPassManager &pm) { tcc::buildCpuLinalgPipeline(pm, cpu); }))
    return 1;
  if (stage >= EmitKind::Bufferized &&
      !runStage([&](OpPassManager &pm) {
        tcc::buildCpuBufferizePipeline(pm, cpu);
      }))
    return 1;
  if (report == ReportKind::Memory)
    printMemoryReport(*module, llvm::errs(), device ? llvm::StringRef(cuda.chip) : "");
  std::vector<tcc::PlannedEntry> plans;
  if (stage == EmitKind::Ptx && !device)
    fail("--emit=ptx needs --target=cuda");
  if (stage >= EmitKind::Ptx) {
    if (device && !runStage([&](OpPassManager &pm) {
          tcc::buildCudaKernelPipeline(pm, cuda);
        }))
      return 1;
    // After the kernels: split reductions grow the arena by their scratch.
    auto read = tcc::readPlans(*module);
    if (failed(read))
      return 1;
    plans = std::move(*read);
    if (stage == EmitKind::Ptx) {
      auto ptx = module->getOperation()->getAttrOfType<StringAttr>("tcc.device_ptx");
      if (!ptx)
        fail("the model compiled to no GPU kernel");
      std::string error;
      auto output = openOutputFile(outputFile, &error);
      if (!output)
        fail(outputFile + ": " + error);
      output->os() << ptx.getValue();
      output->keep();
      return 0;
    }
    if (!runStage([&](OpPassManager &pm) {
          tcc::buildCpuLowerToLLVMPipeline(pm, cpu);
        }))
      return 1;
  }
  if (stage >= EmitKind::LLVMIR) {
    tcc::ArtifactOptions artifact;
    // The fingerprint identifies the model and everything that shapes the
    // compiled code: the file's bytes and the command line.
    llvm::SHA256 hash;
    if (auto bytes = llvm::MemoryBuffer::getFile(inputFile))
      hash.update((*bytes)->getBuffer());
    for (int i = 1; i < argc; ++i)
      hash.update(llvm::StringRef(argv[i]));
    artifact.fingerprint = llvm::toHex(hash.final(), /*LowerCase=*/true);
    artifact.optimize = !noOptimize;
    artifact.cudaToolkit = cuda.toolkitPath;
    tcc::ArtifactStage as = stage == EmitKind::LLVMIR ? tcc::ArtifactStage::LLVMIR
                            : stage == EmitKind::Object
                                ? tcc::ArtifactStage::Object
                                : tcc::ArtifactStage::SharedLibrary;
    // Each parameter's initializer distribution, for tcc-run --init.
    NamedAttrList metadata;
    if (auto existing = (*module)->getAttrOfType<DictionaryAttr>("tcc.metadata"))
      metadata.append(existing.getValue());
    for (const Parameter &p : parameters) {
      std::string kind = initializerKind(p.dtype, p.bytes);
      if (!kind.empty())
        metadata.set(StringAttr::get(&context, "init." + p.name), StringAttr::get(&context, kind));
    }
    if (!metadata.empty())
      (*module)->setAttr("tcc.metadata", metadata.getDictionary(&context));
    if (failed(tcc::writeArtifact(*module, plans, artifact, as, outputFile)))
      return 1;
    if (as == tcc::ArtifactStage::SharedLibrary) {
      // model.so -> model.safetensors, holding the parameters the plan
      // placed in the state region (in the model's order).
      llvm::SmallString<256> weights(outputFile);
      llvm::sys::path::replace_extension(weights, ".safetensors");
      std::vector<tcc::rt::SafetensorsTensor> tensors;
      for (const Parameter &p : parameters)
        tensors.push_back({p.name, tcc_dtype(p.dtype), p.shape,
                           p.bytes.data(), p.bytes.size()});
      std::string error;
      if (!tcc::rt::writeSafetensors(std::string(weights), tensors,
                                     {{"producer", "tcc " TCC_VERSION},
                                      {"fingerprint", artifact.fingerprint}},
                                     &error))
        fail(error);
    }
    return 0;
  }

  std::string error;
  auto output = openOutputFile(outputFile, &error);
  if (!output)
    fail(outputFile + ": " + error);
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
