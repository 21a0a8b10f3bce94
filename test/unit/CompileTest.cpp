//===- CompileTest.cpp - the compiler as one call --------------------------===//
//
// Calls tcc::compile as a caller other than the driver would (Python, a
// benchmark): options filled in code, diagnostics collected by the caller,
// outputs checked on disk. No runtime is involved.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"
#include "compiler/Registration.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <fstream>

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
  options.training.loss = "mse";
  options.training.optimizer = "adamw";
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

} // namespace
