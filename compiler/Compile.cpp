//===- Compile.cpp - the compiler as one call -----------------------------===//
//
// The stages in order: import, the training step, linalg and fusion,
// bufferization and the memory plan, the CUDA kernels, the LLVM dialect, and
// the artifact. Each stage is a pipeline function of its own file; this one
// decides how far to go, reads the plans once, and writes the outputs.
// Compilation.h says which file holds the rest of a compile.
//
//===---------------------------------------------------------------------===//

#include "compiler/Compilation.h"

#include "compiler/BatchMetadata.h"
#include "compiler/LengthBuckets.h"
#include "compiler/PrecisionReport.h"
#include "dialects/TccNames.h"
#include "frontend/dsl/DslImporter.h"
#include "runtime/cpu/cpu_features.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

LogicalResult tcc::Compilation::run() {
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

LogicalResult tcc::Compilation::compileStages() {
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
  if (options.report == tcc::Report::Precision && stage >= Stage::LLVMDialect) {
    std::set<std::string> target;
    for (llvm::StringRef f : llvm::split(llvm::StringRef(targetCpu.recorded), ','))
      if (!f.empty())
        target.insert(f.str());
    tcc::printLibraryCallPrecision(*module, device, tcc::rt::hostCpuFeatures(), target,
                                   variantCpus(), *options.reportStream);
  }
  if (stage == Stage::Ptx)
    return success();
  if (stage >= Stage::LLVMIR)
    return writeArtifact();
  return writeText([&](llvm::raw_ostream &os) {
    module->print(os);
    os << "\n";
  });
}

LogicalResult tcc::Compilation::planStages(const tcc::RematOptions &remat) {
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

LogicalResult tcc::Compilation::importModel() {
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

LogicalResult tcc::Compilation::importDsl() {
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
  if (train && !options.trainingGiven.has(tcc::TrainingSetting::Loss) && !recipe.loss)
    return error() << options.input
                   << ": training needs a loss: --loss=mse|cross_entropy|none or "
                      "'train { loss = ... }' in the file";
  return success();
}

void tcc::Compilation::recordBufferInits() {
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

LogicalResult tcc::Compilation::importLengthVariants() {
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

LogicalResult tcc::Compilation::mergeLengthVariants(const tcc::RematOptions &remat) {
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

LogicalResult tcc::Compilation::runStage(StringRef name,
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

tcc::CpuPipelineOptions tcc::Compilation::cpuOptions() const {
  tcc::CpuPipelineOptions cpu;
  cpu.libraryCalls = options.libraryCalls;
  cpu.fuse = options.fusion != tcc::Fusion::None;
  cpu.fuseRows = options.fusion == tcc::Fusion::All;
  cpu.reportFusion = options.report == tcc::Report::Fusion;
  cpu.outlineKernels = options.profile;
  cpu.device = device;
  cpu.tf32 = training.precision == tcc::Precision::TF32;
  cpu.vectorBits = targetCpu.vectorBits;
  cpu.nativeBF16Rounding = targetCpu.roundsBF16();
  return cpu;
}

LogicalResult tcc::Compilation::lowerPlanned() {
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
  // The variants first, each from its own copy of the planned module.
  if (options.stage >= tcc::Stage::LLVMIR)
    for (const tcc::TargetCpu &variant : variantCpus()) {
      OwningOpRef<ModuleOp> copy(module->clone());
      tcc::CpuPipelineOptions variantOptions = cpu;
      variantOptions.vectorBits = variant.vectorBits;
      variantOptions.nativeBF16Rounding = variant.roundsBF16();
      if (failed(runStage(
              "to the LLVM dialect (" + variant.variant() + ")",
              [&](OpPassManager &pm) { tcc::buildCpuLowerToLLVMPipeline(pm, variantOptions); },
              *copy)))
        return failure();
      cpuVariants.emplace_back(variant, std::move(copy));
    }
  return runStage("to the LLVM dialect", [&](OpPassManager &pm) {
    if (device)
      tcc::buildCudaHostPipeline(pm, cpu);
    else
      tcc::buildCpuLowerToLLVMPipeline(pm, cpu);
  });
}

std::vector<tcc::TargetCpu> tcc::Compilation::variantCpus() const {
  bool sixteenBit = training.precision == tcc::Precision::BF16 ||
                    training.precision == tcc::Precision::FP16;
  if (device || !train || !sixteenBit || !options.cpuVariants)
    return {};
  return tcc::cpuVariantsOf(targetCpu);
}

LogicalResult tcc::Compilation::writeArtifact() {
  tcc::ArtifactOptions artifact;
  artifact.fingerprint = artifactFingerprint;
  artifact.cpu = targetCpu;
  for (auto &[cpu, lowered] : cpuVariants)
    artifact.variants.push_back({cpu, *lowered});
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
  if (!metadata.empty()) {
    (*module)->setAttr(tcc::attr::metadata, metadata.getDictionary(&context));
    for (auto &[cpu, lowered] : cpuVariants)
      (*lowered)->setAttr(tcc::attr::metadata, metadata.getDictionary(&context));
  }
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

LogicalResult tcc::Compilation::writeText(llvm::function_ref<void(llvm::raw_ostream &)> print) {
  std::string message;
  auto output = openOutputFile(options.output, &message);
  if (!output)
    return error() << options.output << ": " << message;
  print(output->os());
  output->keep();
  return success();
}

void tcc::Compilation::printTimeReport() {
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
