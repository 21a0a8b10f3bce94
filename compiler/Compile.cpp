//===- Compile.cpp - the compiler as one call ------------------------------===//
//
// The stages in order: import, the training step, linalg and fusion,
// bufferization and the memory plan, the CUDA kernels, the LLVM dialect, and
// the artifact. Each stage is a pipeline function of its own file; this one
// decides how far to go, reads the plans once, and writes the outputs.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"

#include "compiler/ArtifactWriter.h"
#include "compiler/MemoryReport.h"
#include "compiler/Weights.h"
#include "compiler/cpu/CpuPipeline.h"
#include "compiler/cuda/CudaPipeline.h"
#include "dialects/TccNames.h"
#include "frontend/dsl/DslImporter.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace {

/// One compile: the options, the module as it moves through the stages, and
/// what the stages hand to the writers.
class Compilation {
public:
  Compilation(MLIRContext &context, const tcc::CompileOptions &options)
      : context(context), options(options), device(options.target != "cpu"),
        train(options.train), training(options.training) {}

  LogicalResult run();

private:
  InFlightDiagnostic error() { return emitError(UnknownLoc::get(&context)); }
  LogicalResult checkOptions();
  LogicalResult importModel();
  LogicalResult importDsl();
  void applyRecipe(const tcc::dsl::Recipe &recipe);
  LogicalResult runStage(llvm::function_ref<void(OpPassManager &)> build);
  tcc::CpuPipelineOptions cpuOptions() const;
  /// The CUDA kernels, then the plans (split reductions grow the arena by
  /// their scratch), then PTX output or the host code's LLVM dialect.
  LogicalResult lowerPlanned();
  LogicalResult writeArtifact();
  LogicalResult writeText(llvm::function_ref<void(llvm::raw_ostream &)> print);
  std::string fingerprint() const;

  MLIRContext &context;
  const tcc::CompileOptions &options;
  bool device;
  /// What to train with: the options, under a .tcc file's recipe.
  bool train;
  tcc::TrainingOptions training;
  tcc::CudaPipelineOptions cuda;
  OwningOpRef<ModuleOp> module;
  std::vector<tcc::Weight> weights;
  std::vector<tcc::PlannedEntry> plans;
};

LogicalResult Compilation::checkOptions() {
  using tcc::Stage;
  Stage stage = options.stage;
  if (device && !tcc::parseCudaTarget(options.target, cuda))
    return error() << "--target=" << options.target
                   << ": expected cpu, cuda, cuda:sm_80 or cuda:sm_90";
  cuda.toolkitPath = tcc::defaultCudaToolkitPath();
  if (stage >= Stage::Object && options.output == "-")
    return error() << "--emit=obj and --emit=so need an output file (-o FILE)";
  // Where the output goes is checked before the compile, not after it.
  if (options.output != "-") {
    StringRef output = options.output;
    StringRef folder = llvm::sys::path::parent_path(output);
    if (folder.empty())
      folder = ".";
    if (llvm::sys::fs::is_directory(output))
      return error() << output << ": is a folder, not a file (-o FILE)";
    if (!llvm::sys::fs::is_directory(folder))
      return error() << output << ": the folder " << folder << " does not exist";
    if (llvm::sys::fs::access(folder, llvm::sys::fs::AccessMode::Write))
      return error() << output << ": the folder " << folder << " is not writable";
  }
  if (options.report == tcc::Report::Memory && stage < Stage::Bufferized)
    return error() << "--report=memory needs compilation through the memory plan "
                      "(--emit=bufferized or later, or -o model.so)";
  if (options.report == tcc::Report::Fusion && stage < Stage::Linalg)
    return error() << "--report=fusion needs compilation through fusion (--emit=linalg or "
                      "later, or -o model.so)";
  if (stage == Stage::Ptx && !device)
    return error() << "--emit=ptx needs --target=cuda";
  return success();
}

void Compilation::applyRecipe(const tcc::dsl::Recipe &recipe) {
  auto set = [&](const char *key, auto &field, const auto &value) {
    if (value && !options.trainingGiven.count(key))
      field = *value;
  };
  set("loss", training.loss, recipe.loss);
  set("optimizer", training.optimizer, recipe.optimizer);
  set("labels", training.labels, recipe.labels);
  set("momentum", training.momentum, recipe.momentum);
  set("dampening", training.dampening, recipe.dampening);
  set("nesterov", training.nesterov, recipe.nesterov);
  set("weight_decay", training.weightDecay, recipe.weightDecay);
  set("beta1", training.beta1, recipe.beta1);
  set("beta2", training.beta2, recipe.beta2);
  set("eps", training.eps, recipe.eps);
  set("grad_clip", training.gradClip, recipe.gradClip);
  set("grad_accum", training.gradAccum, recipe.gradAccum);
  set("ignore_index", training.ignoreIndex, recipe.ignoreIndex);
  set("label_smoothing", training.labelSmoothing, recipe.labelSmoothing);
  if (!recipe.freeze.empty() && !options.trainingGiven.count("freeze"))
    training.freeze.assign(recipe.freeze.begin(), recipe.freeze.end());
  // A recipe with a loss is a training recipe.
  if (recipe.loss && !options.inferOnly)
    train = true;
}

LogicalResult Compilation::importDsl() {
  tcc::DslImportOptions import;
  import.batch = options.import.batch;
  for (const auto &d : options.import.dims)
    import.dims[d.getKey()] = d.getValue();
  import.functionName = options.import.functionName;
  if (!options.import.constantInputs.empty())
    return error() << "--const-input is for ONNX models; a .tcc program computes its constants";
  if (options.stage == tcc::Stage::SharedLibrary)
    import.onParameter = [&](StringRef name, Type elementType, ArrayRef<int64_t> shape,
                             ArrayRef<char> bytes, StringRef init) {
      weights.push_back({name.str(), tcc::abiDtypeOf(elementType),
                         std::vector<int64_t>(shape.begin(), shape.end()),
                         std::vector<char>(bytes.begin(), bytes.end()), init.str()});
    };
  tcc::dsl::Recipe recipe;
  module = tcc::importDslFile(context, options.input, import, &recipe);
  if (!module)
    return failure();
  applyRecipe(recipe);
  if (train && options.trainingGiven.count("loss") == 0 && !recipe.loss)
    return error() << options.input
                   << ": training needs a loss: --loss=mse|cross_entropy|none or "
                      "'train { loss = ... }' in the file";
  return success();
}

LogicalResult Compilation::importModel() {
  if (llvm::sys::path::extension(options.input) == ".tcc")
    return importDsl();
  if (llvm::sys::path::extension(options.input) == ".mlir") {
    llvm::SourceMgr sourceMgr;
    std::string message;
    auto file = openInputFile(options.input, &message);
    if (!file)
      return error() << options.input << ": " << message;
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    return success(bool(module));
  }
  tcc::OnnxImportOptions import = options.import;
  // Initial parameter values go beside the library; only an artifact needs
  // them.
  if (options.stage == tcc::Stage::SharedLibrary)
    import.onParameter = [&](StringRef name, Type elementType, ArrayRef<int64_t> shape,
                             ArrayRef<char> bytes) {
      weights.push_back({name.str(), tcc::abiDtypeOf(elementType),
                         std::vector<int64_t>(shape.begin(), shape.end()),
                         std::vector<char>(bytes.begin(), bytes.end())});
    };
  module = tcc::importOnnxFile(context, options.input, import);
  return success(bool(module));
}

LogicalResult Compilation::runStage(llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(&context);
  if (options.configurePassManager && failed(options.configurePassManager(pm)))
    return failure();
  build(pm);
  return pm.run(*module);
}

tcc::CpuPipelineOptions Compilation::cpuOptions() const {
  tcc::CpuPipelineOptions cpu;
  cpu.libraryCalls = options.libraryCalls;
  cpu.fuse = options.fusion != tcc::Fusion::None;
  cpu.fuseRows = options.fusion == tcc::Fusion::All;
  cpu.reportFusion = options.report == tcc::Report::Fusion;
  cpu.outlineKernels = options.profile;
  cpu.device = device;
  return cpu;
}

LogicalResult Compilation::lowerPlanned() {
  if (device && failed(runStage([&](OpPassManager &pm) { tcc::buildCudaKernelPipeline(pm, cuda); })))
    return failure();
  if (plans.empty()) {
    FailureOr<std::vector<tcc::PlannedEntry>> read = tcc::readPlans(*module);
    if (failed(read))
      return failure();
    plans = std::move(*read);
  }
  if (options.stage == tcc::Stage::Ptx) {
    auto ptx = (*module)->getAttrOfType<StringAttr>(tcc::attr::devicePtx);
    if (!ptx)
      return error() << "the model compiled to no GPU kernel";
    return writeText([&](llvm::raw_ostream &os) { os << ptx.getValue(); });
  }
  tcc::CpuPipelineOptions cpu = cpuOptions();
  return runStage([&](OpPassManager &pm) { tcc::buildCpuLowerToLLVMPipeline(pm, cpu); });
}

std::string Compilation::fingerprint() const {
  // The model and everything that shapes the compiled code: the file's bytes
  // and what the caller says identifies the options (tcc's command line).
  llvm::SHA256 hash;
  if (auto bytes = llvm::MemoryBuffer::getFile(options.input))
    hash.update((*bytes)->getBuffer());
  for (const std::string &s : options.fingerprintInputs)
    hash.update(StringRef(s));
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

LogicalResult Compilation::writeArtifact() {
  tcc::ArtifactOptions artifact;
  artifact.fingerprint = fingerprint();
  artifact.optimize = options.optimize;
  artifact.cudaToolkit = cuda.toolkitPath;
  tcc::ArtifactStage stage = options.stage == tcc::Stage::LLVMIR ? tcc::ArtifactStage::LLVMIR
                             : options.stage == tcc::Stage::Object
                                 ? tcc::ArtifactStage::Object
                                 : tcc::ArtifactStage::SharedLibrary;
  // Each parameter's initializer distribution, for tcc-run --init.
  NamedAttrList metadata;
  if (auto existing = (*module)->getAttrOfType<DictionaryAttr>(tcc::attr::metadata))
    metadata.append(existing.getValue());
  for (const tcc::Weight &w : weights) {
    std::string kind = w.init.empty() ? tcc::initializerKind(w.dtype, w.bytes) : w.init;
    if (!kind.empty())
      metadata.set(StringAttr::get(&context, TCC_METADATA_INIT_PREFIX + w.name),
                   StringAttr::get(&context, kind));
  }
  if (!metadata.empty())
    (*module)->setAttr(tcc::attr::metadata, metadata.getDictionary(&context));
  if (failed(tcc::writeArtifact(*module, plans, artifact, stage, options.output)))
    return failure();
  if (stage != tcc::ArtifactStage::SharedLibrary)
    return success();
  // model.so -> model.safetensors: the parameters the plan placed in the
  // state region, in the model's order.
  llvm::SmallString<256> path(options.output);
  llvm::sys::path::replace_extension(path, ".safetensors");
  std::string message;
  if (!tcc::writeWeights(path, weights, artifact.fingerprint, message))
    return error() << message;
  return success();
}

LogicalResult Compilation::writeText(llvm::function_ref<void(llvm::raw_ostream &)> print) {
  std::string message;
  auto output = openOutputFile(options.output, &message);
  if (!output)
    return error() << options.output << ": " << message;
  print(output->os());
  output->keep();
  return success();
}

LogicalResult Compilation::run() {
  using tcc::Stage;
  if (failed(checkOptions()) || failed(importModel()))
    return failure();
  Stage stage = options.stage;
  // Reports print per function: in the functions' order, not the threads'.
  if (options.report != tcc::Report::None)
    context.disableMultithreading();
  if (stage != Stage::MlirRaw && failed(runStage(tcc::buildImportPipeline)))
    return failure();
  if (train && stage != Stage::MlirRaw &&
      failed(runStage([&](OpPassManager &pm) {
        tcc::buildTrainingPipeline(pm, training);
      })))
    return failure();
  tcc::CpuPipelineOptions cpu = cpuOptions();
  if (stage >= Stage::Linalg &&
      failed(runStage([&](OpPassManager &pm) { tcc::buildCpuLinalgPipeline(pm, cpu); })))
    return failure();
  if (stage >= Stage::Bufferized &&
      failed(runStage([&](OpPassManager &pm) { tcc::buildCpuBufferizePipeline(pm, cpu); })))
    return failure();
  if (options.report == tcc::Report::Memory) {
    // Right after the plan: the library calls still carry their parameters.
    // The CPU's plans are final here; a device's grow by the kernels' scratch.
    FailureOr<std::vector<tcc::PlannedEntry>> read = tcc::readPlans(*module);
    if (failed(read))
      return failure();
    tcc::printMemoryReport(*module, *read, *options.reportStream,
                           device ? StringRef(cuda.chip) : StringRef());
    if (!device)
      plans = std::move(*read);
  }
  if (stage >= Stage::Ptx && failed(lowerPlanned()))
    return failure();
  if (stage == Stage::Ptx)
    return success();
  if (stage >= Stage::LLVMIR)
    return writeArtifact();
  return writeText([&](llvm::raw_ostream &os) {
    module->print(os);
    os << "\n";
  });
}

} // namespace

LogicalResult tcc::compile(MLIRContext &context, const CompileOptions &options) {
  return Compilation(context, options).run();
}
