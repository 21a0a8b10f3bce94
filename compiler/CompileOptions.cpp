//===- CompileOptions.cpp - a compile's options, checked ------------------===//
//
// What the options ask for is checked before anything is read or written, so
// a mistake costs no import; a .tcc file's train block fills in what the
// caller did not give.
//
//===---------------------------------------------------------------------===//

#include "compiler/Compilation.h"

#include "frontend/dsl/Graph.h"
#include "runtime/support/file_roles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;

LogicalResult tcc::Compilation::checkOptions() {
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

void tcc::Compilation::applyRecipe(const tcc::dsl::Recipe &recipe) {
  using S = tcc::TrainingSetting;
  auto set = [&](S setting, auto &field, const auto &value) {
    if (value && !options.trainingGiven.has(setting))
      field = *value;
  };
  // The recipe's words were checked against these spellings when it was read.
  set(S::Loss, training.loss, recipe.loss ? tcc::parseLoss(*recipe.loss) : std::nullopt);
  set(S::Optimizer, training.optimizer,
      recipe.optimizer ? tcc::parseOptimizer(*recipe.optimizer) : std::nullopt);
  set(S::Labels, training.labels, recipe.labels);
  set(S::Momentum, training.momentum, recipe.momentum);
  set(S::Dampening, training.dampening, recipe.dampening);
  set(S::Nesterov, training.nesterov, recipe.nesterov);
  set(S::WeightDecay, training.weightDecay, recipe.weightDecay);
  set(S::Beta1, training.beta1, recipe.beta1);
  set(S::Beta2, training.beta2, recipe.beta2);
  set(S::Eps, training.eps, recipe.eps);
  set(S::GradClip, training.gradClip, recipe.gradClip);
  set(S::GradAccum, training.gradAccum, recipe.gradAccum);
  set(S::IgnoreIndex, training.ignoreIndex, recipe.ignoreIndex);
  set(S::LabelSmoothing, training.labelSmoothing, recipe.labelSmoothing);
  if (!recipe.freeze.empty() && !options.trainingGiven.has(S::Freeze))
    training.freeze.assign(recipe.freeze.begin(), recipe.freeze.end());
  // A recipe with a loss is a training recipe.
  if (recipe.loss && !options.inferOnly)
    train = true;
}
