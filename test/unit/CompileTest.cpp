//===- CompileTest.cpp - the compiler as one call --------------------------===//
//
// Calls tcc::compile as a caller other than the driver would (Python, a
// benchmark): options filled in code, diagnostics collected by the caller,
// outputs checked on disk. No runtime is involved.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"
#include "compiler/Registration.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <set>

using namespace mlir;

namespace {

constexpr const char *kModel = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4, 3] x) => (float[4, 2] out)
<float[3, 2] w = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6}, float[2] b = {0.01, -0.02}> {
  h = MatMul(x, w)
  out = Add(h, b)
}
)";

class Compile : public ::testing::Test {
protected:
  Compile() {
    DialectRegistry registry;
    tcc::registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    llvm::SmallString<128> dir;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("tcc-compile-test", dir));
    folder = std::string(dir);
    model = folder + "/model.onnxtxt";
    std::ofstream(model) << kModel;
  }
  ~Compile() override { llvm::sys::fs::remove_directories(folder); }

  /// Runs compile and keeps the diagnostics.
  LogicalResult run(const tcc::CompileOptions &options) {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      errors.push_back(d.str());
      return success();
    });
    return tcc::compile(ctx, options);
  }

  std::string read(const std::string &path) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    return buffer ? (*buffer)->getBuffer().str() : "";
  }

  MLIRContext ctx;
  std::string folder, model;
  std::vector<std::string> errors;
};

TEST_F(Compile, BuildsTheTrainingStepFromOptions) {
  tcc::CompileOptions options;
  options.input = model;
  options.train = true;
  options.training.loss = tcc::Loss::Mse;
  options.training.optimizer = tcc::Optimizer::AdamW;
  options.stage = tcc::Stage::Mlir;
  options.output = folder + "/step.mlir";
  ASSERT_TRUE(succeeded(run(options))) << (errors.empty() ? "" : errors[0]);
  std::string ir = read(options.output);
  EXPECT_NE(ir.find("func.func @train_step"), std::string::npos);
  EXPECT_NE(ir.find("func.func @eval_step"), std::string::npos);
  EXPECT_NE(ir.find("optimizer = \"adamw\""), std::string::npos);
}

TEST_F(Compile, WritesTheArtifactAndItsWeights) {
  tcc::CompileOptions options;
  options.input = model;
  options.stage = tcc::Stage::SharedLibrary;
  options.output = folder + "/infer.so";
  ASSERT_TRUE(succeeded(run(options))) << (errors.empty() ? "" : errors[0]);
  EXPECT_TRUE(llvm::sys::fs::exists(options.output));
  // The weights beside it: safetensors, both parameters by name.
  std::string weights = read(folder + "/infer.safetensors");
  EXPECT_NE(weights.find("\"w\""), std::string::npos);
  EXPECT_NE(weights.find("\"b\""), std::string::npos);
}

TEST_F(Compile, ReportsBadOptionsAsDiagnostics) {
  tcc::CompileOptions options;
  options.input = model;
  options.target = "tpu";
  EXPECT_TRUE(failed(run(options)));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("--target=tpu: expected cpu, cuda"), std::string::npos) << errors[0];

  errors.clear();
  options.target = "cpu";
  options.stage = tcc::Stage::Object;
  options.output = "-";
  EXPECT_TRUE(failed(run(options)));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("need an output file"), std::string::npos) << errors[0];
}

/// The names of the training step's pass options, as the pass prints them
/// ("tcc-build-train-step{loss=mse optimizer=sgd ...}").
std::set<std::string> trainingOptionNames() {
  std::string text;
  llvm::raw_string_ostream os(text);
  // An empty list is not printed: one value makes `freeze` show.
  tcc::TrainingOptions options;
  options.freeze = {"x"};
  tcc::createBuildTrainStepPass(options)->printAsTextualPipeline(os);
  std::set<std::string> names;
  llvm::StringRef rest = llvm::StringRef(text).split('{').second.rsplit('}').first;
  while (!rest.empty()) {
    auto [option, tail] = rest.split(' ');
    // A list's values are in braces and may hold spaces.
    if (option.contains('{') && !option.contains('}'))
      tail = tail.split('}').second.ltrim();
    names.insert(option.split('=').first.str());
    rest = tail.ltrim();
  }
  return names;
}

// Tests that every option that can change the artifact changes the compile
// cache's key: each CompileOptions field and every option of the training
// step (the list of those is checked against the pass's own), whether or not
// `train` is set, since a .tcc recipe may turn training on after the key is
// taken. A new pass option without a line here fails the test.
TEST(ArtifactOptionsKey, EveryOptionThatShapesTheArtifactChangesIt) {
  using Change = std::function<void(tcc::CompileOptions &)>;
  std::map<std::string, Change> compileChanges = {
      {"train", [](auto &o) { o.train = true; }},
      {"trainingGiven", [](auto &o) { o.trainingGiven.set(tcc::TrainingSetting::Loss); }},
      {"inferOnly", [](auto &o) { o.inferOnly = true; }},
      {"lengthBuckets",
       [](auto &o) {
         o.lengthDim = "T";
         o.lengthBuckets = {32, 64};
       }},
      {"memoryBudget", [](auto &o) { o.memoryBudget = 1 << 20; }},
      {"remat", [](auto &o) { o.remat = tcc::Remat::Max; }},
      {"autoBatch", [](auto &o) { o.autoBatch = true; }},
      {"globalBatch", [](auto &o) { o.globalBatch = 64; }},
      {"target", [](auto &o) { o.target = "cuda"; }},
      {"cpu", [](auto &o) { o.cpu = "x86-64-v4"; }},
      {"cpuVariants", [](auto &o) { o.cpuVariants = false; }},
      {"libraryCalls", [](auto &o) { o.libraryCalls = false; }},
      {"fusion", [](auto &o) { o.fusion = tcc::Fusion::None; }},
      {"profile", [](auto &o) { o.profile = true; }},
      {"optimize", [](auto &o) { o.optimize = false; }},
      {"import.batch", [](auto &o) { o.import.batch = 8; }},
      {"import.dims", [](auto &o) { o.import.dims["T"] = 16; }},
      {"import.functionName", [](auto &o) { o.import.functionName = "model"; }},
      {"import.buffers", [](auto &o) { o.import.buffers = {"mask"}; }},
      {"import.constantInputs",
       [](auto &o) { o.import.constantInputs["shape"] = tcc::ConstantInput{7, {1}, {2, 0, 0, 0, 0, 0, 0, 0}}; }},
  };
  std::map<std::string, Change> trainingChanges = {
      {"loss", [](auto &o) { o.training.loss = tcc::Loss::CrossEntropy; }},
      {"labels", [](auto &o) { o.training.labels = "target"; }},
      {"optimizer", [](auto &o) { o.training.optimizer = tcc::Optimizer::AdamW; }},
      {"momentum", [](auto &o) { o.training.momentum = 0.9; }},
      {"dampening", [](auto &o) { o.training.dampening = 0.1; }},
      {"nesterov", [](auto &o) { o.training.nesterov = true; }},
      {"weight-decay", [](auto &o) { o.training.weightDecay = 0.01; }},
      {"beta1", [](auto &o) { o.training.beta1 = 0.8; }},
      {"beta2", [](auto &o) { o.training.beta2 = 0.99; }},
      {"eps", [](auto &o) { o.training.eps = 1e-6; }},
      {"grad-clip", [](auto &o) { o.training.gradClip = 1.0; }},
      {"ignore-index", [](auto &o) { o.training.ignoreIndex = 0; }},
      {"label-smoothing", [](auto &o) { o.training.labelSmoothing = 0.1; }},
      {"grad-accum", [](auto &o) { o.training.gradAccum = 4; }},
      {"freeze", [](auto &o) { o.training.freeze = {"embed*"}; }},
      {"precision", [](auto &o) { o.training.precision = tcc::Precision::BF16; }},
      {"data-parallel", [](auto &o) { o.training.dataParallel = true; }},
      {"bucket-mb", [](auto &o) { o.training.bucketMb = 1.0; }},
      {"zero", [](auto &o) { o.training.zero = 1; }},
      {"skip-nonfinite", [](auto &o) { o.training.skipNonFinite = true; }},
  };
  std::set<std::string> listed;
  for (const auto &[name, change] : trainingChanges)
    listed.insert(name);
  EXPECT_EQ(listed, trainingOptionNames())
      << "every option of tcc-build-train-step needs a line in trainingChanges";

  tcc::CompileOptions base;
  base.input = "model.tcc";
  std::map<std::string, std::string> keys;
  keys["(none)"] = tcc::artifactOptionsKey(base);
  auto add = [&](const std::map<std::string, Change> &changes) {
    for (const auto &[name, change] : changes) {
      tcc::CompileOptions changed = base;
      change(changed);
      keys[name] = tcc::artifactOptionsKey(changed);
    }
  };
  add(compileChanges);
  add(trainingChanges);
  std::map<std::string, std::string> byKey;
  for (const auto &[name, key] : keys) {
    auto [it, fresh] = byKey.emplace(key, name);
    EXPECT_TRUE(fresh) << name << " and " << it->second << " give the same key: " << key;
  }
  // What does not shape the artifact leaves the key as it is.
  tcc::CompileOptions elsewhere = base;
  elsewhere.output = "other/place.so";
  elsewhere.threads = 1;
  elsewhere.cacheDir = "/tmp/another-cache";
  elsewhere.timeReport = true;
  EXPECT_EQ(tcc::artifactOptionsKey(elsewhere), keys["(none)"]);
}

// Tests that the settings the caller gave print in the key as their recipe
// keys in sorted order, each followed by a comma: the text every source key
// in a compile cache was made with, so it must not change.
TEST(ArtifactOptionsKey, PrintsTheGivenSettingsAsSortedRecipeKeys) {
  tcc::CompileOptions options;
  EXPECT_NE(tcc::artifactOptionsKey(options).find(" given= batch="), std::string::npos);
  using S = tcc::TrainingSetting;
  for (S setting : {S::WeightDecay, S::Loss, S::Freeze, S::GradClip, S::Beta1, S::LabelSmoothing})
    options.trainingGiven.set(setting);
  EXPECT_NE(tcc::artifactOptionsKey(options).find(
                " given=beta1,freeze,grad_clip,label_smoothing,loss,weight_decay, batch="),
            std::string::npos);
}

} // namespace
