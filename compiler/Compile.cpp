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
#include "compiler/BatchMetadata.h"
#include "compiler/LengthBuckets.h"
#include "compiler/CompileCache.h"
#include "compiler/MemoryReport.h"
#include "compiler/PrecisionReport.h"
#include "passes/training/RematSummary.h"
#include "runtime/cpu/cpu_features.h"
#include "compiler/SourceKey.h"
#include "compiler/Weights.h"
#include "compiler/cpu/CpuPipeline.h"
#include "compiler/cuda/CudaPipeline.h"
#include "dialects/TccNames.h"
#include "frontend/dsl/DslImporter.h"
#include "runtime/include/tcc/abi.h"
#include "runtime/support/file_roles.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "passes/Passes.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
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
        train(options.train), training(options.training), batch(options.import.batch) {
    timing.setEnabled(options.timeReport);
    timing.setOutput(
        createOutputStrategy(DefaultTimingManager::OutputFormat::Text, *options.reportStream));
    root = timing.getRootScope();
  }

  LogicalResult run();
  /// The stages after the import, up to the one asked for.
  LogicalResult compileStages();
  /// The training step and the plans, recomputing as `memoryBudget` and
  /// `remat` say; fails with an explanation when the budget cannot hold.
  LogicalResult planWithBudget();
  template <typename Attempt>
  LogicalResult recomputeLess(Attempt &attempt, int64_t fits, tcc::MemoryFootprint got);
  /// --batch=auto: the largest batch (with --global-batch, the largest
  /// divisor of it, and the accumulation reaching it) whose plan fits the
  /// budget; leaves the module imported at that batch.
  LogicalResult chooseBatch();

private:
  InFlightDiagnostic error() { return emitError(UnknownLoc::get(&context)); }
  LogicalResult checkOptions();
  LogicalResult importModel();
  LogicalResult importDsl();
  /// The model's buffers (parameters marked tcc.buffer) keep their exact
  /// values under tcc-run --init: their initializer record says so.
  void recordBufferInits();
  /// --length-buckets: the model again at each value but the largest
  /// (lengthVariants), through the import passes when IMPORTPASSES.
  LogicalResult importLengthVariants();
  /// --length-buckets: each variant's training step, moved into the module.
  LogicalResult mergeLengthVariants(const tcc::RematOptions &remat);
  void applyRecipe(const tcc::dsl::Recipe &recipe);
  /// Runs the passes BUILD adds on TARGET (default: the module).
  LogicalResult runStage(StringRef name, llvm::function_ref<void(OpPassManager &)> build,
                         ModuleOp target = nullptr);
  /// The training step (with REMAT), linalg and fusion, and, from
  /// Bufferized on, the memory plan.
  LogicalResult planStages(const tcc::RematOptions &remat);
  /// The plans of MODULE (planned), and what they allocate.
  FailureOr<tcc::MemoryFootprint> readFootprint();
  /// The refusal of a budget: by how much, what is live at the peak, and
  /// the least that recomputation reaches (LEAST; none for --remat=off).
  LogicalResult refuseBudget(const tcc::MemoryFootprint &needed,
                             std::optional<tcc::MemoryFootprint> least);
  tcc::CpuPipelineOptions cpuOptions() const;
  /// The CUDA kernels, then the plans (split reductions grow the arena by
  /// their scratch), then PTX output or the host code's LLVM dialect.
  LogicalResult lowerPlanned();
  LogicalResult writeArtifact();
  LogicalResult writeText(llvm::function_ref<void(llvm::raw_ostream &)> print);
  /// A hash of what determines the artifact: the imported program, the
  /// weights and the options. The artifact carries it; with the compiler's
  /// identity it keys the artifact in the cache.
  std::string fingerprint() const;
  /// --zero=1: the fingerprint of the same compile without it, as the
  /// metadata TCC_METADATA_STATE_FINGERPRINT (its checkpoints' identity).
  void recordStateFingerprint();
  /// The options in the fingerprint: those of tcc::artifactOptionsKey
  /// after the import (a .tcc recipe applied), the training step's only
  /// when it trains.
  std::string canonicalOptions() const;
  /// The fingerprint the source key maps to, then its artifact, when there.
  FailureOr<bool> reuseBySource();
  /// Maps the source key to the fingerprint (after a compile or a reuse).
  void storeSource();
  /// The artifact and its weights from the cache, when there; the
  /// warnings of the compile that stored it, after EARLIER ones.
  FailureOr<bool> reuseArtifact(StringRef earlier = "");
  void storeArtifact();
  void printTimeReport();

  MLIRContext &context;
  const tcc::CompileOptions &options;
  bool device;
  /// What to train with: the options, under a .tcc file's recipe.
  bool train;
  tcc::TrainingOptions training;
  tcc::CudaPipelineOptions cuda;
  /// --cpu, resolved by checkOptions (x86-64-v3 before).
  tcc::TargetCpu targetCpu;
  OwningOpRef<ModuleOp> module;
  std::vector<tcc::Weight> weights;
  /// --length-buckets: the model imported at each smaller value (after the
  /// import passes), and while one is imported, that value.
  std::vector<std::pair<int64_t, OwningOpRef<ModuleOp>>> lengthVariants;
  std::optional<int64_t> variantLength;
  std::vector<tcc::PlannedEntry> plans;
  /// The plans without recomputation, when a budget made the compiler
  /// recompute (for the report and the plot).
  std::vector<tcc::PlannedEntry> plansWithoutRemat;
  DefaultTimingManager timing;
  TimingScope root;
  std::unique_ptr<tcc::CompileCache> cache;
  std::string artifactFingerprint;
  tcc::CodegenStats codegen;
  bool artifactFromCache = false;
  /// The artifact's cache key taken before the import, when the model can
  /// be keyed so; whether the artifact was found by it.
  std::optional<tcc::SourceKey> source;
  bool foundBySource = false;
  /// The import's warnings, kept with the source key (a compile that
  /// skips the import repeats them).
  std::string importWarnings;
  /// The warnings of this compile, one line each (location fields and the
  /// message, tab-separated), stored with a cached artifact and replayed
  /// when it is reused: a warm compile says what a cold one said.
  std::string warnings;
  /// The batch the import binds (--batch, or the one chooseBatch tries).
  std::optional<int64_t> batch;
  /// While chooseBatch probes: a budget that does not hold fails quietly
  /// and sets notFitting.
  bool probing = false, notFitting = false;
};

/// A line of Compilation::warnings: the name, file, line and column of the
/// location (a NameLoc around a FileLineColLoc, or a FileLineColLoc) and
/// the message, with tabs and newlines escaped.
std::string warningLine(Diagnostic &diag) {
  auto escape = [](StringRef text) {
    std::string out;
    for (char c : text)
      out += c == '\\' ? "\\\\" : c == '\t' ? "\\t" : c == '\n' ? "\\n" : std::string(1, c);
    return out;
  };
  std::string name, file;
  unsigned line = 0, col = 0;
  Location loc = diag.getLocation();
  if (auto n = dyn_cast<NameLoc>(loc)) {
    name = n.getName().str();
    loc = n.getChildLoc();
  }
  if (auto f = dyn_cast<FileLineColLoc>(loc)) {
    file = f.getFilename().str();
    line = f.getLine();
    col = f.getColumn();
  }
  return escape(name) + "\t" + escape(file) + "\t" + std::to_string(line) + "\t" +
         std::to_string(col) + "\t" + escape(diag.str()) + "\n";
}

/// A diagnostic handler's body: a warning's line goes to INTO, and every
/// diagnostic on to the caller's handler.
LogicalResult recordWarning(Diagnostic &diag, std::string &into) {
  if (diag.getSeverity() == DiagnosticSeverity::Warning)
    into += warningLine(diag);
  return failure();
}

/// Emits the warnings recorded by warningLine again.
void replayWarnings(MLIRContext &context, StringRef text) {
  auto unescape = [](StringRef text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '\\' || i + 1 == text.size()) {
        out += text[i];
        continue;
      }
      char c = text[++i];
      out += c == 't' ? '\t' : c == 'n' ? '\n' : c;
    }
    return out;
  };
  SmallVector<StringRef> lines;
  text.split(lines, '\n', -1, false);
  for (StringRef l : lines) {
    SmallVector<StringRef, 5> f;
    l.split(f, '\t');
    if (f.size() != 5)
      continue;
    unsigned line = 0, col = 0;
    f[2].getAsInteger(10, line);
    f[3].getAsInteger(10, col);
    Location loc = UnknownLoc::get(&context);
    if (!f[1].empty())
      loc = FileLineColLoc::get(&context, unescape(f[1]), line, col);
    if (!f[0].empty())
      loc = NameLoc::get(StringAttr::get(&context, unescape(f[0])), loc);
    emitWarning(loc) << unescape(f[4]);
  }
}

LogicalResult Compilation::checkOptions() {
  using tcc::Stage;
  Stage stage = options.stage;
  if (device && !tcc::parseCudaTarget(options.target, cuda))
    return error() << "--target=" << options.target
                   << ": expected cpu, cuda, cuda:sm_80 or cuda:sm_90";
  cuda.toolkitPath = tcc::defaultCudaToolkitPath();
  cuda.emulation = options.cudaEmulation;
  if (options.cudaEmulation && !device)
    return error() << "--cuda-emulation needs a CUDA target (--target=cuda)";
  std::string cpuError;
  std::optional<tcc::TargetCpu> resolved = tcc::resolveTargetCpu(options.cpu, cpuError);
  if (!resolved)
    return error() << "--cpu=" << options.cpu << ": " << cpuError;
  targetCpu = *resolved;
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
  // No output may be an input (`tcc m.onnx --emit=mlir -o m.onnx`) or
  // another output: tcc::rt::checkOutputsApart, as tcc-run checks its own.
  std::vector<tcc::rt::FileRole> outputs = {{"-o", options.output == "-" ? "" : options.output},
                                            {"--memory-plot", options.memoryPlot}};
  if (stage == Stage::SharedLibrary && options.output != "-") {
    llvm::SmallString<256> weights(options.output);
    llvm::sys::path::replace_extension(weights, ".safetensors");
    outputs.push_back({"the artifact's parameters", std::string(weights)});
  }
  std::vector<tcc::rt::FileRole> inputs = {{"the model", options.input}};
  // ONNX external data is an input too; read the model for it only when an
  // output exists already (a new file cannot be an input).
  bool anyExists = llvm::any_of(outputs, [](const tcc::rt::FileRole &f) {
    return !f.path.empty() && llvm::sys::fs::exists(f.path);
  });
  if (anyExists && StringRef(options.input).ends_with(".onnx"))
    if (auto bytes = llvm::MemoryBuffer::getFile(options.input, /*IsText=*/false,
                                                 /*RequiresNullTerminator=*/false))
      if (auto locations = tcc::onnxExternalDataLocations((*bytes)->getBuffer())) {
        llvm::SmallString<256> folder(options.input);
        llvm::sys::path::remove_filename(folder);
        for (const std::string &location : *locations) {
          llvm::SmallString<256> path(folder);
          llvm::sys::path::append(path, location);
          inputs.push_back({"the model's external data", std::string(path)});
        }
      }
  std::string clash;
  if (!tcc::rt::checkOutputsApart(inputs, outputs, &clash))
    return error() << clash;
  if (options.report == tcc::Report::Memory && stage < Stage::Bufferized)
    return error() << "--report=memory needs compilation through the memory plan "
                      "(--emit=bufferized or later, or -o model.so)";
  if (options.report == tcc::Report::Fusion && stage < Stage::Linalg)
    return error() << "--report=fusion needs compilation through fusion (--emit=linalg or "
                      "later, or -o model.so)";
  // TF32 is a tensor-core mode; the CPU's oneDNN calls have no such mode,
  // and running fp32 under the name would hide that the request did nothing.
  if (training.precision == tcc::Precision::TF32 && !device)
    return error() << "--precision=tf32 needs --target=cuda (TF32 is a tensor-core mode of "
                      "NVIDIA GPUs; on the CPU use --precision=fp32)";
  if (stage == Stage::Ptx && !device)
    return error() << "--emit=ptx needs --target=cuda";
  // ZeRO-1's update is a runtime loop over host memory for now.
  if (training.zero != 0 && device)
    return error() << "--zero=1 runs on the CPU only for now (the sharded update and its MPI "
                      "collectives use host memory); drop --target=" << options.target;
  if (training.zero != 0 && !options.lengthBuckets.empty())
    return error() << "--zero=1 cannot be combined with --length-buckets yet (each variant "
                      "would need its own flat gradient)";
  if (options.memoryBudget < 0)
    return error() << "--memory-budget: expected a positive size";
  if ((options.memoryBudget > 0 || options.autoBatch) && stage < Stage::Bufferized)
    return error() << "--memory-budget and --batch=auto need compilation through the memory "
                      "plan (--emit=bufferized or later, or -o model.so)";
  if (!options.memoryPlot.empty() && stage < Stage::Bufferized)
    return error() << "--memory-plot needs compilation through the memory plan (--emit=bufferized "
                      "or later, or -o model.so)";
  if (options.autoBatch && options.memoryBudget == 0)
    return error() << "--batch=auto needs --memory-budget=SIZE (the batch is chosen to fit it)";
  if (!options.lengthBuckets.empty() && options.autoBatch)
    return error() << "--length-buckets and --batch=auto cannot be combined yet";
  if (options.globalBatch < 0 || (options.globalBatch > 0 && !options.autoBatch))
    return error() << "--global-batch=N needs --batch=auto and a positive N";
  return success();
}

void Compilation::applyRecipe(const tcc::dsl::Recipe &recipe) {
  auto set = [&](const char *key, auto &field, const auto &value) {
    if (value && !options.trainingGiven.count(key))
      field = *value;
  };
  // The recipe's words were checked against these spellings when it was read.
  set("loss", training.loss, recipe.loss ? tcc::parseLoss(*recipe.loss) : std::nullopt);
  set("optimizer", training.optimizer,
      recipe.optimizer ? tcc::parseOptimizer(*recipe.optimizer) : std::nullopt);
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
  import.batch = batch;
  for (const auto &d : options.import.dims)
    import.dims[d.getKey()] = d.getValue();
  if (variantLength)
    import.dims[options.lengthDim] = *variantLength;
  import.functionName = options.import.functionName;
  if (!options.import.constantInputs.empty())
    return error() << "--const-input is for ONNX models; a .tcc program computes its constants";
  if (options.stage == tcc::Stage::SharedLibrary && !variantLength)
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
  weights.clear();
  bool onnx = llvm::sys::path::extension(options.input) != ".tcc" &&
              llvm::sys::path::extension(options.input) != ".mlir";
  if (!onnx && !options.import.buffers.empty())
    return error() << "--buffers is for ONNX models: it names initializers (in MLIR, the "
                   << "attribute " << tcc::attr::buffer
                   << " on a parameter's argument marks a buffer)";
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
  import.batch = batch;
  if (variantLength)
    import.dims[options.lengthDim] = *variantLength;
  // Initial parameter values go beside the library; only an artifact needs
  // them.
  if (options.stage == tcc::Stage::SharedLibrary && !variantLength)
    import.onParameter = [&](StringRef name, Type elementType, ArrayRef<int64_t> shape,
                             ArrayRef<char> bytes) {
      weights.push_back({name.str(), tcc::abiDtypeOf(elementType),
                         std::vector<int64_t>(shape.begin(), shape.end()),
                         std::vector<char>(bytes.begin(), bytes.end()), ""});
    };
  module = tcc::importOnnxFile(context, options.input, import);
  if (!module)
    return failure();
  recordBufferInits();
  return success();
}

void Compilation::recordBufferInits() {
  auto fn = module->lookupSymbol<func::FuncOp>(options.import.functionName);
  if (!fn || weights.empty())
    return;
  llvm::StringSet<> buffers;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (fn.getArgAttr(i, tcc::attr::buffer))
      if (auto name = fn.getArgAttrOfType<StringAttr>(i, tcc::attr::param))
        buffers.insert(name.getValue());
  for (tcc::Weight &w : weights)
    if (buffers.contains(w.name))
      w.init = tcc::bufferInitializerKind(w.dtype, w.bytes);
}

LogicalResult Compilation::runStage(StringRef name,
                                    llvm::function_ref<void(OpPassManager &)> build,
                                    ModuleOp target) {
  TimingScope scope = root.nest(name);
  PassManager pm(&context);
  if (options.configurePassManager && failed(options.configurePassManager(pm)))
    return failure();
  build(pm);
  // The IR is verified once per stage, not after every pass: the verifier
  // after each of the lowering's ~30 passes over every kernel was a third
  // of the MLIR time (squeezenet: 6.6 G instructions to the LLVM dialect,
  // 4.5 G without). A broken pass is still caught at its stage's end, and
  // tcc-opt (the passes' lit tests) verifies after every pass.
  pm.enableVerifier(false);
  ModuleOp on = target ? target : *module;
  if (failed(pm.run(on)))
    return failure();
  return verify(on);
}

LogicalResult Compilation::importLengthVariants() {
  OwningOpRef<ModuleOp> mainModule = std::move(module);
  std::vector<tcc::Weight> mainWeights = std::move(weights);
  LogicalResult result = success();
  for (int64_t value : ArrayRef<int64_t>(options.lengthBuckets).drop_back()) {
    variantLength = value;
    if (failed(importModel())) {
      result = failure();
      break;
    }
    lengthVariants.emplace_back(value, std::move(module));
  }
  variantLength.reset();
  module = std::move(mainModule);
  weights = std::move(mainWeights);
  return result;
}

LogicalResult Compilation::mergeLengthVariants(const tcc::RematOptions &remat) {
  std::map<std::string, int64_t> axes;
  for (auto &[value, imported] : lengthVariants) {
    OwningOpRef<ModuleOp> variant(imported->clone());
    std::string name = "training step at " + options.lengthDim + "=" + std::to_string(value);
    if (failed(runStage(
            name,
            [&](OpPassManager &pm) {
              tcc::buildTrainingPipeline(pm, training, remat, /*reportPrecision=*/false);
            },
            *variant)))
      return failure();
    if (failed(tcc::mergeLengthVariant(*module, *variant, options.lengthDim, value, axes)))
      return failure();
  }
  if (axes.empty())
    return error() << "--length-buckets: " << options.lengthDim
                   << " changes no input of the training step";
  tcc::recordLengthMetadata(*module, options.lengthDim, options.lengthBuckets, axes);
  return success();
}

tcc::CpuPipelineOptions Compilation::cpuOptions() const {
  tcc::CpuPipelineOptions cpu;
  cpu.libraryCalls = options.libraryCalls;
  cpu.fuse = options.fusion != tcc::Fusion::None;
  cpu.fuseRows = options.fusion == tcc::Fusion::All;
  cpu.reportFusion = options.report == tcc::Report::Fusion;
  cpu.outlineKernels = options.profile;
  cpu.device = device;
  cpu.tf32 = training.precision == tcc::Precision::TF32;
  cpu.vectorBits = targetCpu.vectorBits;
  return cpu;
}

LogicalResult Compilation::lowerPlanned() {
  if (device && failed(runStage("CUDA kernels", [&](OpPassManager &pm) {
        tcc::buildCudaKernelPipeline(pm, cuda);
      })))
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
  return runStage("to the LLVM dialect", [&](OpPassManager &pm) {
    if (device)
      tcc::buildCudaHostPipeline(pm, cpu);
    else
      tcc::buildCpuLowerToLLVMPipeline(pm, cpu);
  });
}

namespace {

/// BLAKE3 over whatever is printed to it: the IR is hashed as it prints,
/// never held as one string.
class HashStream : public llvm::raw_ostream {
public:
  HashStream() { SetUnbuffered(); }
  std::string digest() {
    flush();
    return llvm::toHex(hash.final<32>(), /*LowerCase=*/true);
  }

private:
  void write_impl(const char *ptr, size_t size) override {
    hash.update(ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(ptr), size));
    written += size;
  }
  uint64_t current_pos() const override { return written; }
  llvm::BLAKE3 hash;
  uint64_t written = 0;
};

} // namespace

/// Prints every option of OPTIONS that shapes the artifact beyond the
/// imported program (whose shapes the import options fix), with CPU the
/// resolved --cpu, and TRAINING, the step's options, when given.
void printArtifactOptions(llvm::raw_ostream &os, const tcc::CompileOptions &options,
                          const tcc::TargetCpu &cpu, bool train,
                          const tcc::TrainingOptions *training) {
  os << "target=" << options.target << " cpu=" << cpu.name << "+" << cpu.features
     << " library-calls=" << options.libraryCalls << " fusion=" << int(options.fusion)
     << " profile=" << options.profile << " optimize=" << options.optimize << " train=" << train
     << " memory-budget=" << options.memoryBudget << " remat=" << int(options.remat)
     << " auto-batch=" << options.autoBatch;
  if (options.globalBatch != 0)
    os << " global-batch=" << options.globalBatch;
  if (!options.lengthBuckets.empty()) {
    os << " length-buckets=" << options.lengthDim;
    for (int64_t v : options.lengthBuckets)
      os << "," << v;
  }
  // The cubin is ptxas' (the PTX is this compiler's, in its identity).
  if (options.target != "cpu")
    os << " ptxas="
       << tcc::hashKey({tcc::findPtxas(tcc::defaultCudaToolkitPath()).version});
  if (options.cudaEmulation)
    os << " cuda-emulation=1";
  if (training)
    tcc::createBuildTrainStepPass(*training)->printAsTextualPipeline(os);
}

std::string Compilation::canonicalOptions() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  printArtifactOptions(os, options, targetCpu, train, train ? &training : nullptr);
  return text;
}

std::string Compilation::fingerprint() const {
  HashStream program;
  module.get()->print(program, OpPrintingFlags().enableDebugInfo(false));
  HashStream parameters;
  for (const tcc::Weight &w : weights) {
    parameters << w.name << '\0' << w.dtype << '\0' << w.init << '\0';
    for (int64_t d : w.shape)
      parameters << d << ',';
    parameters.write(w.bytes.data(), w.bytes.size());
  }
  return tcc::hashKey({"fingerprint", canonicalOptions(), program.digest(), parameters.digest()});
}

void Compilation::recordStateFingerprint() {
  // ZeRO-1 only moves where the optimizer state lives: its checkpoints are
  // those of the same compile without --zero (the fingerprint that compile
  // computes), so that either artifact resumes the other's.
  int64_t zero = training.zero;
  training.zero = 0;
  std::string state = fingerprint();
  training.zero = zero;
  MLIRContext *ctx = &context;
  NamedAttrList merged;
  if (auto existing = (*module)->getAttrOfType<DictionaryAttr>(tcc::attr::metadata))
    merged.append(existing.getValue());
  merged.set(StringAttr::get(ctx, TCC_METADATA_STATE_FINGERPRINT), StringAttr::get(ctx, state));
  (*module)->setAttr(tcc::attr::metadata, merged.getDictionary(ctx));
}

LogicalResult Compilation::writeArtifact() {
  tcc::ArtifactOptions artifact;
  artifact.fingerprint = artifactFingerprint;
  artifact.cpu = targetCpu;
  artifact.optimize = options.optimize;
  artifact.cudaToolkit = cuda.toolkitPath;
  artifact.threads = options.threads;
  artifact.cache = cache && cache->enabled() ? cache.get() : nullptr;
  TimingScope llvmScope = root.nest("LLVM");
  artifact.timing = &llvmScope;
  artifact.stats = &codegen;
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
  auto text = [&](int64_t v) { return StringAttr::get(&context, std::to_string(v)); };
  if (options.memoryBudget > 0)
    metadata.set(StringAttr::get(&context, TCC_METADATA_MEMORY_BUDGET), text(options.memoryBudget));
  if (options.autoBatch)
    metadata.set(StringAttr::get(&context, TCC_METADATA_AUTO_BATCH), text(batch.value_or(0)));
  if (!metadata.empty())
    (*module)->setAttr(tcc::attr::metadata, metadata.getDictionary(&context));
  if (failed(tcc::writeArtifact(*module, plans, artifact, stage, options.output)))
    return failure();
  llvmScope.stop();
  if (stage != tcc::ArtifactStage::SharedLibrary)
    return success();
  // model.so -> model.safetensors: the parameters the plan placed in the
  // state region, in the model's order.
  llvm::SmallString<256> path(options.output);
  llvm::sys::path::replace_extension(path, ".safetensors");
  std::string message;
  {
    TimingScope scope = root.nest("weights");
    if (!tcc::writeWeights(path, weights, artifact.fingerprint, message))
      return error() << message;
  }
  TimingScope scope = root.nest("artifact cache store");
  storeArtifact();
  return success();
}

namespace {

std::string weightsPath(StringRef artifact) {
  llvm::SmallString<256> path(artifact);
  llvm::sys::path::replace_extension(path, ".safetensors");
  return std::string(path);
}

/// Writes BYTES to PATH through a temporary file of its own beside it
/// (concurrent compiles may write one output).
std::error_code writeAtomically(StringRef path, StringRef bytes) {
  llvm::SmallString<256> tmp;
  llvm::sys::fs::createUniquePath(path + ".tmp-%%%%%%%%", tmp, /*MakeAbsolute=*/false);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return ec;
    os << bytes;
    os.close();
    if (os.has_error()) {
      ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return ec;
    }
  }
  return llvm::sys::fs::rename(tmp, path);
}

} // namespace

FailureOr<bool> Compilation::reuseArtifact(StringRef earlier) {
  std::string key = tcc::hashKey({"artifact", tcc::compilerIdentity(), artifactFingerprint});
  TimingScope scope = root.nest("artifact cache lookup");
  std::optional<std::string> library = cache->lookup(key, "so");
  if (!library)
    return false;
  std::optional<std::string> recorded = cache->lookup(key, "warnings");
  if (!recorded)
    return false;
  // The weights first (linked from the cache, not copied): an artifact is
  // never there without its weights.
  std::string message;
  if (!cache->lookupFile(key, "weights", weightsPath(options.output), message))
    return message.empty() ? FailureOr<bool>(false) : FailureOr<bool>(error() << message);
  if (std::error_code ec = writeAtomically(options.output, *library))
    return error() << "cannot write '" << options.output << "': " << ec.message();
  replayWarnings(context, earlier);
  replayWarnings(context, *recorded);
  artifactFromCache = true;
  return true;
}

void Compilation::storeArtifact() {
  if (!cache || !cache->enabled() || options.report != tcc::Report::None ||
      !options.memoryPlot.empty())
    return;
  auto library = llvm::MemoryBuffer::getFile(options.output, /*IsText=*/false,
                                             /*RequiresNullTerminator=*/false);
  if (!library)
    return;
  std::string key = tcc::hashKey({"artifact", tcc::compilerIdentity(), artifactFingerprint});
  cache->store(key, "warnings", warnings);
  cache->storeFile(key, "weights", weightsPath(options.output));
  cache->store(key, "so", (*library)->getBuffer());
  storeSource();
}

FailureOr<bool> Compilation::reuseBySource() {
  TimingScope scope = root.nest("source key");
  source = tcc::SourceKey::compute(options.input, tcc::artifactOptionsKey(options));
  if (!source)
    return false;
  std::optional<std::string> entry = cache->lookup(source->key(), "fingerprint");
  if (!entry)
    return false;
  auto [fingerprint, recorded] = StringRef(*entry).split('\n');
  artifactFingerprint = fingerprint.str();
  scope.stop();
  FailureOr<bool> reused = reuseArtifact(recorded);
  foundBySource = succeeded(reused) && *reused;
  return reused;
}

void Compilation::storeSource() {
  if (source && source->storable())
    cache->store(source->key(), "fingerprint", artifactFingerprint + "\n" + importWarnings);
}

void Compilation::printTimeReport() {
  if (!options.timeReport)
    return;
  root.stop();
  timing.print();
  // Printed once: the manager would print (empty) timers again when it dies.
  timing.setEnabled(false);
  llvm::raw_ostream &os = *options.reportStream;
  if (artifactFromCache) {
    os << "tcc: the artifact came from the compile cache (" << cache->dir() << ")"
       << (foundBySource ? ", found before the import" : "") << "\n";
    return;
  }
  if (codegen.groups)
    os << "tcc: " << codegen.kernels << " distinct kernels (" << codegen.kernelCalls
       << " kernel calls) in " << codegen.groups << " LLVM groups, " << codegen.cached
       << " of them from the compile cache\n";
  if (!cache)
    os << "tcc: compile cache off\n";
  else if (!cache->enabled())
    os << "tcc: compile cache off: " << cache->problem() << "\n";
  else
    os << "tcc: compile cache " << cache->dir() << ": " << cache->stats().hits << " hits, "
       << cache->stats().misses << " misses (" << cache->stats().corrupt << " bad entries removed), "
       << cache->stats().stores << " stores\n";
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
  if (failed(checkOptions()))
    return failure();
  Stage stage = options.stage;
  // Reports come from the passes: a compile that prints one runs them.
  bool reusable = options.report == tcc::Report::None && options.memoryPlot.empty();
  if (stage == Stage::SharedLibrary && options.cache) {
    std::optional<uint64_t> size = tcc::defaultCacheSize();
    if (!size)
      return error() << "TCC_CACHE_SIZE: expected a size in bytes, with an optional K, M or G "
                        "suffix";
    cache = std::make_unique<tcc::CompileCache>(
        options.cacheDir.empty() ? tcc::defaultCacheDir() : options.cacheDir, *size);
    // --batch=auto reports its choice while it imports: it keeps the import.
    if (cache->enabled() && reusable && !options.autoBatch) {
      FailureOr<bool> reused = reuseBySource();
      if (failed(reused))
        return failure();
      if (*reused) {
        printTimeReport();
        return success();
      }
    }
  }
  {
    TimingScope scope = root.nest("import");
    ScopedDiagnosticHandler record(
        &context, [&](Diagnostic &diag) { return recordWarning(diag, importWarnings); });
    // --batch=auto imports at every batch it tries, and last at its choice.
    if (failed(options.autoBatch ? chooseBatch() : importModel()))
      return failure();
    // A .tcc recipe may make the compile train: checked after the import.
    if (options.report == tcc::Report::Precision &&
        (!tcc::isSixteenBit(training.precision) || !train))
      return error() << "--report=precision needs a training step with --precision=bf16 or fp16";
    if (!options.lengthBuckets.empty() && !train)
      return error() << "--length-buckets compiles the training step at several lengths; it "
                        "needs training (--loss=...)";
    if (!options.lengthBuckets.empty() && stage != Stage::MlirRaw &&
        failed(importLengthVariants()))
      return failure();
  }
  if (stage >= Stage::LLVMIR) {
    TimingScope scope = root.nest("fingerprint");
    artifactFingerprint = fingerprint();
    if (train && training.zero != 0)
      recordStateFingerprint();
  }
  if (cache && cache->enabled() && reusable) {
    FailureOr<bool> reused = reuseArtifact();
    if (failed(reused))
      return failure();
    if (*reused) {
      storeSource();
      printTimeReport();
      return success();
    }
  }
  LogicalResult result = failure();
  {
    // Recorded, then passed on to the caller's handler.
    ScopedDiagnosticHandler record(
        &context, [&](Diagnostic &diag) { return recordWarning(diag, warnings); });
    result = compileStages();
  }
  if (cache && cache->enabled()) {
    TimingScope scope = root.nest("cache trim");
    cache->trim();
  }
  if (succeeded(result))
    printTimeReport();
  return result;
}

LogicalResult Compilation::planStages(const tcc::RematOptions &remat) {
  using tcc::Stage;
  Stage stage = options.stage;
  if (train && failed(runStage("training step", [&](OpPassManager &pm) {
        tcc::buildTrainingPipeline(pm, training, remat,
                                   options.report == tcc::Report::Precision);
      })))
    return failure();
  if (train && !lengthVariants.empty() && failed(mergeLengthVariants(remat)))
    return failure();
  // Which inputs and outputs a partial batch pads, read while the entry
  // points still carry their arguments' attributes.
  if (stage != Stage::MlirRaw)
    tcc::recordBatchMetadata(*module);
  tcc::CpuPipelineOptions cpu = cpuOptions();
  if (stage >= Stage::Linalg &&
      failed(runStage("linalg and fusion",
                      [&](OpPassManager &pm) { tcc::buildCpuLinalgPipeline(pm, cpu); })))
    return failure();
  if (stage >= Stage::Bufferized &&
      failed(runStage("bufferization and memory plan",
                      [&](OpPassManager &pm) { tcc::buildCpuBufferizePipeline(pm, cpu); })))
    return failure();
  return success();
}

FailureOr<tcc::MemoryFootprint> Compilation::readFootprint() {
  FailureOr<std::vector<tcc::PlannedEntry>> read = tcc::readPlans(*module);
  if (failed(read))
    return failure();
  return tcc::memoryFootprint(*module, *read, device ? StringRef(cuda.chip) : StringRef());
}

/// After a plan that fits with room to spare (the pass's tensor-level model
/// overestimates the real plan, most where fusion removes buffers), raises
/// the pass's target towards its model peak without recomputation, by
/// bisection, and keeps the highest target whose plan still fits: the same
/// budget for less recomputed arithmetic (resnet18 at state + 75% of its
/// arena: 28% of the step recomputed at the first target). Not while
/// --batch=auto probes (a fit is all it asks).
template <typename Attempt>
LogicalResult Compilation::recomputeLess(Attempt &attempt, int64_t fits,
                                         tcc::MemoryFootprint got) {
  int64_t budget = options.memoryBudget;
  int64_t above = 0;
  module->walk([&](func::FuncOp fn) {
    if (std::optional<tcc::RematSummary> remat = tcc::readRematSummary(fn))
      above = std::max(above, remat->peakBefore);
  });
  if (probing || budget - got.total() < budget / 32 || above <= fits)
    return success();
  // The plan moves with the model's target by about as much: a target more
  // than twice the room above the one that fits is not worth a round (the
  // 6-layer GPT at state + 35%: 9 MiB of room, a model peak 260 MiB above).
  above = std::min(above, fits + 2 * (budget - got.total()));
  bool lastFits = true;
  for (int round = 0; round < 3; ++round) {
    int64_t mid = fits + (above - fits) / 2;
    tcc::RematOptions remat;
    remat.arenaBudget = mid;
    FailureOr<tcc::MemoryFootprint> trial = attempt(remat);
    if (failed(trial))
      return failure();
    lastFits = trial->total() <= budget;
    (lastFits ? fits : above) = mid;
  }
  if (lastFits)
    return success();
  tcc::RematOptions remat;
  remat.arenaBudget = fits;
  return failed(attempt(remat)) ? failure() : success();
}

LogicalResult Compilation::planWithBudget() {
  int64_t budget = options.memoryBudget;
  OwningOpRef<ModuleOp> base(module->clone());
  // Each attempt compiles a copy of the imported program through the plan
  // and measures what the real plan allocates, not the pass's estimate.
  auto attempt = [&](const tcc::RematOptions &remat) -> FailureOr<tcc::MemoryFootprint> {
    module = OwningOpRef<ModuleOp>(base->clone());
    if (failed(planStages(remat)))
      return failure();
    return readFootprint();
  };
  tcc::RematOptions off, max;
  off.mode = tcc::RematMode::Off;
  max.mode = tcc::RematMode::Max;
  if (probing) {
    // --batch=auto asks only whether the batch fits at all: with the most
    // recomputation it does, or no budgeted compile of it would (the
    // target ladder below ends at max). One plan per candidate instead of
    // up to eight; the chosen batch is then compiled as any other.
    bool recompute = train && options.remat != tcc::Remat::Off;
    FailureOr<tcc::MemoryFootprint> least = attempt(recompute ? max : off);
    if (failed(least))
      return failure();
    return least->total() <= budget ? success() : refuseBudget(*least, *least);
  }
  if (options.remat == tcc::Remat::Max) {
    if (failed(attempt(off)))
      return failure();
    FailureOr<std::vector<tcc::PlannedEntry>> unremat = tcc::readPlans(*module);
    if (succeeded(unremat))
      plansWithoutRemat = std::move(*unremat);
    FailureOr<tcc::MemoryFootprint> least = attempt(max);
    if (failed(least))
      return failure();
    return budget == 0 || least->total() <= budget ? success() : refuseBudget(*least, *least);
  }
  FailureOr<tcc::MemoryFootprint> plain = attempt(off);
  if (failed(plain))
    return failure();
  if (plain->total() <= budget)
    return success();
  if (!train || options.remat == tcc::Remat::Off)
    return refuseBudget(*plain, std::nullopt);
  FailureOr<std::vector<tcc::PlannedEntry>> unremat = tcc::readPlans(*module);
  if (succeeded(unremat))
    plansWithoutRemat = std::move(*unremat);
  // The pass plans the arena with a tensor-level model; the real plan
  // differs (fusion removes buffers, alignment and packing add bytes):
  // lower the model's target by what the plan overshot, a few times.
  int64_t arenaTarget = budget - plain->state - plain->workspace;
  int64_t target = arenaTarget;
  for (int round = 0; round < 6 && target > 0; ++round) {
    tcc::RematOptions remat;
    remat.arenaBudget = target;
    FailureOr<tcc::MemoryFootprint> got = attempt(remat);
    if (failed(got))
      return failure();
    if (got->total() <= budget)
      return recomputeLess(attempt, target, *got);
    if (tcc::rematModelPeak(*module) > target)
      break; // the pass reached its floor: only max can do better
    target -= std::max<int64_t>(got->total() - budget, 4096);
  }
  FailureOr<tcc::MemoryFootprint> least = attempt(max);
  if (failed(least))
    return failure();
  if (least->total() <= budget)
    return success();
  return refuseBudget(*plain, *least);
}

LogicalResult Compilation::chooseBatch() {
  int64_t global = options.globalBatch;
  auto accumulation = [&](int64_t b) { return global > 0 ? global / b : training.gradAccum; };
  // Compiles the whole plan at batch B (a fresh import each time).
  auto fits = [&](int64_t b) -> FailureOr<bool> {
    batch = b;
    training.gradAccum = accumulation(b);
    if (failed(importModel()) || failed(runStage("import passes", tcc::buildImportPipeline)))
      return failure();
    probing = true;
    notFitting = false;
    LogicalResult planned = planWithBudget();
    probing = false;
    if (failed(planned) && !notFitting)
      return failure();
    return succeeded(planned);
  };
  // The candidates: every batch (doubling, then bisection), or with a
  // global batch its divisors, largest first.
  int64_t best = 0, tooLarge = 0;
  if (global > 0) {
    for (int64_t b = global; b >= 1 && !best; --b) {
      if (global % b)
        continue;
      FailureOr<bool> ok = fits(b);
      if (failed(ok))
        return failure();
      if (*ok)
        best = b;
      else
        tooLarge = b;
    }
  } else {
    constexpr int64_t kLargest = int64_t(1) << 20;
    int64_t lo = 0, hi = 1;
    for (;; hi *= 2) {
      FailureOr<bool> ok = hi > kLargest ? FailureOr<bool>(false) : fits(hi);
      if (failed(ok))
        return failure();
      if (!*ok)
        break;
      lo = hi;
    }
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      FailureOr<bool> ok = fits(mid);
      if (failed(ok))
        return failure();
      (*ok ? lo : hi) = mid;
    }
    best = lo;
    tooLarge = hi;
  }
  if (best == 0) {
    // Batch 1 does not fit: compile it once more, to say why.
    batch = 1;
    training.gradAccum = accumulation(1);
    if (failed(importModel()) || failed(runStage("import passes", tcc::buildImportPipeline)))
      return failure();
    (void)planWithBudget();
    return error() << "--batch=auto: not even batch 1 fits --memory-budget="
                   << tcc::humanBytes(options.memoryBudget);
  }
  llvm::raw_ostream &os = *options.reportStream;
  os << "tcc: --batch=auto: batch " << best;
  if (global > 0)
    os << " x " << accumulation(best) << " accumulated micro-batches = " << global;
  os << " fits --memory-budget=" << tcc::humanBytes(options.memoryBudget);
  if (tooLarge > best)
    os << " (batch " << tooLarge << " does not)";
  os << "\n";
  os.flush();
  batch = best;
  training.gradAccum = accumulation(best);
  return importModel();
}

LogicalResult Compilation::refuseBudget(const tcc::MemoryFootprint &needed,
                                        std::optional<tcc::MemoryFootprint> least) {
  if (probing) {
    notFitting = true;
    return failure();
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  int64_t budget = options.memoryBudget;
  const tcc::MemoryFootprint &best = least ? *least : needed;
  os << "--memory-budget=" << tcc::humanBytes(budget) << " (" << budget
     << " bytes) cannot hold this model: ";
  if (least)
    os << "with the most recomputation (--remat=max) it needs " << tcc::humanBytes(best.total())
       << ", " << tcc::humanBytes(best.total() - budget) << " more";
  else
    os << "it needs " << tcc::humanBytes(best.total()) << ", "
       << tcc::humanBytes(best.total() - budget) << " more"
       << (train ? " (recomputation is off)" : " (an inference artifact recomputes nothing)");
  os << " (arena " << tcc::humanBytes(best.arena) << " + state " << tcc::humanBytes(best.state);
  if (best.workspace)
    os << " + library workspace " << tcc::humanBytes(best.workspace);
  os << ")\n";
  FailureOr<std::vector<tcc::PlannedEntry>> read = tcc::readPlans(*module);
  if (succeeded(read))
    tcc::printPeak(*read, os, 8);
  os << "the smallest budget that fits: " << tcc::humanBytes(best.total()) << " ("
     << best.total() << " bytes)";
  if (least)
    os << "; or a smaller batch (--batch=auto chooses the largest that fits)";
  return error() << text;
}

LogicalResult Compilation::compileStages() {
  using tcc::Stage;
  Stage stage = options.stage;
  // Reports print per function: in the functions' order, not the threads'.
  if (options.report != tcc::Report::None)
    context.disableMultithreading();
  if (stage != Stage::MlirRaw && failed(runStage("import passes", tcc::buildImportPipeline)))
    return failure();
  for (auto &[value, variant] : lengthVariants)
    if (failed(runStage("import passes at " + options.lengthDim + "=" + std::to_string(value),
                        tcc::buildImportPipeline, *variant)))
      return failure();
  if (stage != Stage::MlirRaw) {
    tcc::RematOptions remat;
    remat.mode = options.remat == tcc::Remat::Max ? tcc::RematMode::Max : tcc::RematMode::Off;
    // The plan before recomputation is also wanted for the report and plot.
    bool before = options.report == tcc::Report::Memory || !options.memoryPlot.empty();
    bool budgeted = stage >= Stage::Bufferized &&
                    (options.memoryBudget > 0 || (options.remat == tcc::Remat::Max && before));
    if (failed(budgeted ? planWithBudget() : planStages(remat)))
      return failure();
  }
  if (options.report == tcc::Report::Memory) {
    // Right after the plan: the library calls still carry their parameters.
    // The CPU's plans are final here; a device's grow by the kernels' scratch.
    FailureOr<std::vector<tcc::PlannedEntry>> read = tcc::readPlans(*module);
    if (failed(read))
      return failure();
    tcc::printMemoryReport(*module, *read, plansWithoutRemat, *options.reportStream,
                           device ? StringRef(cuda.chip) : StringRef());
    if (!device)
      plans = std::move(*read);
  }
  if (!options.memoryPlot.empty()) {
    FailureOr<std::vector<tcc::PlannedEntry>> read = tcc::readPlans(*module);
    if (failed(read))
      return failure();
    tcc::MemoryFootprint f =
        tcc::memoryFootprint(*module, *read, device ? StringRef(cuda.chip) : StringRef());
    std::string message;
    if (!tcc::writeMemoryPlot(options.memoryPlot, *read, plansWithoutRemat, options.memoryBudget,
                              f.state + f.workspace, message))
      return error() << "--memory-plot: " << message;
  }
  if (stage >= Stage::Ptx && failed(lowerPlanned()))
    return failure();
  // The library-call table exists once the calls are lowered.
  if (options.report == tcc::Report::Precision && stage >= Stage::LLVMDialect)
    tcc::printLibraryCallPrecision(*module, device, tcc::rt::hostCpuFeatures(),
                                   *options.reportStream);
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
  // One thread means one for MLIR's passes too (its pool has every core).
  bool threaded = context.isMultithreadingEnabled();
  if (options.threads == 1 && threaded)
    context.disableMultithreading();
  LogicalResult result = Compilation(context, options).run();
  if (options.threads == 1 && threaded)
    context.enableMultithreading();
  return result;
}

std::string tcc::artifactOptionsKey(const CompileOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string cpuError;
  std::optional<TargetCpu> cpu = resolveTargetCpu(options.cpu, cpuError);
  if (!cpu) {
    // A --cpu that does not resolve fails the compile; its text keys it here.
    cpu.emplace();
    cpu->name = options.cpu;
  }
  printArtifactOptions(os, options, *cpu, options.train, &options.training);
  // A .tcc recipe applies after the import, by these.
  os << " infer-only=" << options.inferOnly << " given=";
  for (const std::string &key : options.trainingGiven)
    os << key << ',';
  const OnnxImportOptions &import = options.import;
  os << " batch=" << (import.batch ? std::to_string(*import.batch) : "none")
     << " function=" << import.functionName << " dims=";
  std::vector<std::pair<std::string, int64_t>> dims;
  for (const auto &d : import.dims)
    dims.push_back({d.getKey().str(), d.getValue()});
  llvm::sort(dims);
  for (const auto &[name, size] : dims)
    os << name << '=' << size << ',';
  std::vector<std::string> constants;
  for (const auto &c : import.constantInputs)
    constants.push_back(c.getKey().str());
  llvm::sort(constants);
  for (const std::string &name : constants) {
    const ConstantInput &c = import.constantInputs.find(name)->second;
    os << " const " << name << ' ' << c.dtype << ' ';
    for (int64_t d : c.shape)
      os << d << ',';
    os << ' ' << hashKey({StringRef(c.bytes.data(), c.bytes.size())});
  }
  os << " buffers=";
  for (const std::string &pattern : import.buffers)
    os << pattern << ',';
  return text;
}
