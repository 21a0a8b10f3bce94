//===- OnnxImporterTest.cpp - the ONNX importer as a library --------------===//
//
// Imports models held in memory and checks the IR and the diagnostics that a
// caller (the driver, the fuzzer, an application) receives.
//
//===----------------------------------------------------------------------===//

#include "compiler/Registration.h"
#include "dialects/TccOps.h"
#include "frontend/onnx/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

struct Imported {
  OwningOpRef<ModuleOp> module;
  std::vector<std::string> errors;
};

Imported importText(MLIRContext &ctx, const std::string &text,
                    tcc::OnnxImportOptions options = {}) {
  Imported result;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    result.errors.push_back(d.str());
    return success();
  });
  result.module = tcc::importOnnxBuffer(ctx, text, /*textFormat=*/true,
                                        "test.onnxtxt", "", options);
  return result;
}

class OnnxImporter : public ::testing::Test {
protected:
  OnnxImporter() {
    DialectRegistry registry;
    tcc::registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
  }
  MLIRContext ctx;
};

TEST_F(OnnxImporter, ImportsInputsParametersAndOutputs) {
  Imported r = importText(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 3] x) => (float[N, 2] y)
    <float[3, 2] w = {1, 2, 3, 4, 5, 6}> {
      y = MatMul(x, w)
    })",
                          {.batch = 4});
  ASSERT_TRUE(r.module) << (r.errors.empty() ? "" : r.errors[0]);
  auto func = *r.module->getOps<func::FuncOp>().begin();
  ASSERT_EQ(func.getNumArguments(), 2u);
  EXPECT_EQ(cast<RankedTensorType>(func.getArgument(0).getType()).getShape(),
            (ArrayRef<int64_t>{4, 3}));
  EXPECT_EQ(func.getArgAttrOfType<StringAttr>(0, "tcc.input").getValue(), "x");
  EXPECT_EQ(func.getArgAttrOfType<StringAttr>(1, "tcc.param").getValue(), "w");
  EXPECT_EQ(func.getResultAttrOfType<StringAttr>(0, "tcc.output").getValue(), "y");
}

TEST_F(OnnxImporter, UnboundSymbolicDimensionIsAnError) {
  Imported r = importText(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 3] x) => (float[N, 3] y) { y = Relu(x) })");
  EXPECT_FALSE(r.module);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("'N'"), std::string::npos) << r.errors[0];
  EXPECT_NE(r.errors[0].find("--batch"), std::string::npos) << r.errors[0];
}

TEST_F(OnnxImporter, NamedDimensionBindingWins) {
  Imported r = importText(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, T] x) => (float[B, T] y) { y = Relu(x) })",
                          {.batch = 2, .dims = {{"T", 7}}});
  ASSERT_TRUE(r.module);
  auto func = *r.module->getOps<func::FuncOp>().begin();
  EXPECT_EQ(cast<RankedTensorType>(func.getArgument(0).getType()).getShape(),
            (ArrayRef<int64_t>{2, 7}));
}

TEST_F(OnnxImporter, UnsupportedOperatorsAreReportedAllAtOnce) {
  Imported r = importText(ctx, R"(
    <ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
    g (float[2] x) => (float[2] y) {
      a = Foo(x)
      b = Bar(a)
      c = Foo(b)
      y = com.example.Baz(c)
    })");
  EXPECT_FALSE(r.module);
  ASSERT_EQ(r.errors.size(), 1u);
  const std::string &e = r.errors[0];
  EXPECT_NE(e.find("3 unsupported operator types"), std::string::npos) << e;
  EXPECT_NE(e.find("Foo"), std::string::npos);
  EXPECT_NE(e.find("Bar"), std::string::npos);
  EXPECT_NE(e.find("com.example.Baz"), std::string::npos);
}

TEST_F(OnnxImporter, GarbageIsRejectedWithoutThrowing) {
  MLIRContext &c = ctx;
  std::vector<std::string> errors;
  ScopedDiagnosticHandler handler(&c, [&](Diagnostic &d) {
    errors.push_back(d.str());
    return success();
  });
  std::string garbage = "\x08\x07\x12\xff\xff\xff\xff\x0f not a model";
  EXPECT_FALSE(tcc::importOnnxBuffer(c, garbage, false, "g.onnx", "", {}));
  EXPECT_FALSE(errors.empty());
  EXPECT_FALSE(tcc::importOnnxBuffer(c, "agraph (((", true, "g.onnxtxt", "", {}));
}

TEST_F(OnnxImporter, ShapeSubgraphsFoldToConstants) {
  // Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as PyTorch exports a
  // flatten: nothing of it survives as a runtime op.
  Imported r = importText(ctx, R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2, 3, 4] x) => (float[2, 12] y) {
      s = Shape(x)
      zero = Constant<value = int64 {0}>()
      n = Gather(s, zero)
      axes = Constant<value = int64[1] {0}>()
      n1 = Unsqueeze(n, axes)
      m = Constant<value = int64[1] {-1}>()
      shape = Concat<axis = 0>(n1, m)
      y = Reshape(x, shape)
    })");
  ASSERT_TRUE(r.module) << (r.errors.empty() ? "" : r.errors[0]);
  auto func = *r.module->getOps<func::FuncOp>().begin();
  int reshapes = 0, others = 0;
  func.walk([&](Operation *op) {
    if (isa<tcc::ReshapeOp>(op))
      ++reshapes;
    else if (!isa<func::FuncOp, func::ReturnOp, tcc::ConstantOp>(op))
      ++others;
  });
  EXPECT_EQ(reshapes, 1);
  EXPECT_EQ(others, 0);
}

} // namespace

//===----------------------------------------------------------------------===//
// External data: built with the protobuf API, written to a temporary folder.
//===----------------------------------------------------------------------===//

#include <onnx/onnx_pb.h>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <sys/stat.h>

namespace {

class ExternalData : public OnnxImporter {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tcc-extdata", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  /// y = Reshape(x, shape) with `shape` an int64[2] initializer stored in
  /// external data at `location`.
  std::string writeModel(const std::string &location, int64_t offset = 0,
                         const std::string &offsetText = "") {
    onnx::ModelProto model;
    model.set_ir_version(8);
    auto *opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(17);
    onnx::GraphProto *g = model.mutable_graph();
    g->set_name("g");
    auto addValue = [](google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> *list,
                       const char *name, std::vector<int64_t> dims) {
      onnx::ValueInfoProto *v = list->Add();
      v->set_name(name);
      auto *t = v->mutable_type()->mutable_tensor_type();
      t->set_elem_type(onnx::TensorProto::FLOAT);
      for (int64_t d : dims)
        t->mutable_shape()->add_dim()->set_dim_value(d);
    };
    addValue(g->mutable_input(), "x", {2, 3});
    addValue(g->mutable_output(), "y", {3, 2});
    onnx::TensorProto *shape = g->add_initializer();
    shape->set_name("shape");
    shape->set_data_type(onnx::TensorProto::INT64);
    shape->add_dims(2);
    shape->set_data_location(onnx::TensorProto::EXTERNAL);
    auto *loc = shape->add_external_data();
    loc->set_key("location");
    loc->set_value(location);
    auto *off = shape->add_external_data();
    off->set_key("offset");
    off->set_value(offsetText.empty() ? std::to_string(offset) : offsetText);
    onnx::NodeProto *n = g->add_node();
    n->set_op_type("Reshape");
    n->set_name("reshape");
    n->add_input("x");
    n->add_input("shape");
    n->add_output("y");
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, "model.onnx");
    std::ofstream out(std::string(path), std::ios::binary);
    model.SerializeToOstream(&out);
    return std::string(path);
  }

  void writeData(const char *name, const std::string &bytes) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    std::ofstream(std::string(path), std::ios::binary) << bytes;
  }

  std::vector<std::string> importErrors(const std::string &path) {
    std::vector<std::string> errors;
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      errors.push_back(d.str());
      return success();
    });
    module = tcc::importOnnxFile(ctx, path, {});
    return errors;
  }

  llvm::SmallString<128> dir;
  OwningOpRef<ModuleOp> module;
};

std::string int64Bytes(std::vector<int64_t> values) {
  return std::string(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(int64_t));
}

TEST_F(ExternalData, LoadsFromBesideTheModel) {
  writeData("weights.bin", "padding!" + int64Bytes({3, 2}));
  auto errors = importErrors(writeModel("weights.bin", /*offset=*/8));
  ASSERT_TRUE(module) << (errors.empty() ? "" : errors[0]);
  bool found = false;
  module->walk([&](tcc::ReshapeOp op) {
    found = op.getType().getShape() == ArrayRef<int64_t>{3, 2};
  });
  EXPECT_TRUE(found);
}

TEST_F(ExternalData, RefusesPathsThatLeaveTheModelFolder) {
  auto errors = importErrors(writeModel("../secrets.bin"));
  EXPECT_FALSE(module);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("'../secrets.bin' leaves the model's folder"),
            std::string::npos)
      << errors[0];
}

TEST_F(ExternalData, RefusesAbsolutePaths) {
  auto errors = importErrors(writeModel("/etc/passwd"));
  EXPECT_FALSE(module);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("is absolute"), std::string::npos) << errors[0];
}

TEST_F(ExternalData, RefusesOffsetsBeyondInt64AsTheyAreWritten) {
  writeData("weights.bin", int64Bytes({3, 2}));
  auto errors = importErrors(writeModel("weights.bin", 0, "18446744073709551615"));
  EXPECT_FALSE(module);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("offset '18446744073709551615' is not a size"), std::string::npos)
      << errors[0];
}

TEST_F(ExternalData, RefusesTheModelsFolderAsADataFile) {
  auto errors = importErrors(writeModel("."));
  EXPECT_FALSE(module);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("'.' names the model's folder, not a file"), std::string::npos)
      << errors[0];
  EXPECT_EQ(errors[0].find("symbolic link"), std::string::npos) << errors[0];
}

TEST_F(ExternalData, RefusesRangesPastTheEndOfTheFile) {
  writeData("short.bin", int64Bytes({3}));
  auto errors = importErrors(writeModel("short.bin"));
  EXPECT_FALSE(module);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("short.bin"), std::string::npos) << errors[0];
}

// Symbolic links must not lead out of the model's folder: not the data file
// itself, not a folder on its path, not a chain of links; links that stay
// inside are fine.
class ExternalDataLinks : public ExternalData {
protected:
  void SetUp() override {
    ExternalData::SetUp();
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tcc-extdata-outside", outside));
    llvm::SmallString<128> secret(outside);
    llvm::sys::path::append(secret, "secret.bin");
    std::ofstream(std::string(secret), std::ios::binary) << int64Bytes({3, 2});
  }
  void TearDown() override {
    llvm::sys::fs::remove_directories(outside);
    ExternalData::TearDown();
  }
  /// A link NAME (in the model's folder) to TARGET.
  void link(const std::string &target, const char *name) {
    llvm::SmallString<128> at(dir);
    llvm::sys::path::append(at, name);
    ASSERT_FALSE(llvm::sys::fs::create_link(target, at));
  }
  void expectRefused(const std::string &location) {
    auto errors = importErrors(writeModel(location));
    EXPECT_FALSE(module) << location;
    ASSERT_EQ(errors.size(), 1u) << location;
    EXPECT_NE(errors[0].find("leads out of the model's folder through a symbolic link"),
              std::string::npos)
        << errors[0];
  }
  std::string secretPath() const { return std::string(outside) + "/secret.bin"; }
  llvm::SmallString<128> outside;
};

TEST_F(ExternalDataLinks, RefusesALinkedFile) {
  link(secretPath(), "w.bin");
  expectRefused("w.bin");
}

TEST_F(ExternalDataLinks, RefusesALinkedFolder) {
  link(std::string(outside), "sub");
  expectRefused("sub/secret.bin");
  // A folder link to the model folder's parent, as `sub -> ..`.
  link("..", "up");
  expectRefused("up/" + llvm::sys::path::filename(outside).str() + "/secret.bin");
}

TEST_F(ExternalDataLinks, RefusesAChainOfLinks) {
  link(secretPath(), "c.bin");
  link("c.bin", "b.bin");
  link("b.bin", "a.bin");
  expectRefused("a.bin");
}

TEST_F(ExternalDataLinks, FollowsLinksThatStayInside) {
  writeData("real.bin", int64Bytes({3, 2}));
  link("real.bin", "alias.bin");
  auto errors = importErrors(writeModel("alias.bin"));
  EXPECT_TRUE(module) << (errors.empty() ? "" : errors[0]);
}

TEST_F(ExternalData, RefusesAFifo) {
  llvm::SmallString<128> fifo(dir);
  llvm::sys::path::append(fifo, "pipe.bin");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto errors = importErrors(writeModel("pipe.bin"));
  EXPECT_FALSE(module);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("is not a regular file"), std::string::npos) << errors[0];
}

TEST_F(ExternalData, ReportsAMissingFile) {
  auto errors = importErrors(writeModel("nowhere.bin"));
  EXPECT_FALSE(module);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("cannot read external data file"), std::string::npos)
      << errors[0];
}

} // namespace
