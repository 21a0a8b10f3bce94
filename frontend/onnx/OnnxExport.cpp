//===- OnnxExport.cpp - an ONNX model with trained weights ----------------===//

#include "frontend/onnx/OnnxExport.h"

#include "runtime/checkpoint/safetensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>
#include <sstream>
#include <vector>

namespace {

/// The safetensors dtype of an ONNX float type, or -1.
int32_t floatDtype(int32_t onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return TCC_DTYPE_F32;
  case onnx::TensorProto::DOUBLE:
    return TCC_DTYPE_F64;
  case onnx::TensorProto::FLOAT16:
    return TCC_DTYPE_F16;
  case onnx::TensorProto::BFLOAT16:
    return TCC_DTYPE_BF16;
  default:
    return -1;
  }
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The model's version of the default ONNX domain (1 when it imports none).
int64_t defaultOpset(const onnx::ModelProto &model) {
  for (const onnx::OperatorSetIdProto &op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx")
      return op.version();
  return 1;
}

/// Rewrites MODEL's training-time nodes into their inference form, as
/// PyTorch's model.eval() runs them: BatchNormalization in training mode
/// (opset 14+: training_mode = 1; opsets 9-13: more than one output; before
/// 9: is_test = 0) normalizes with its running statistics, and Dropout passes
/// its input through (opset 12+: training_mode dropped; before 7: is_test).
/// The statistics outputs of a training batch norm must be unused: nothing
/// reads them in a PyTorch export, where the running statistics are updated
/// by the training loop, not the graph.
bool makeInference(onnx::ModelProto &model, tcc::ExportSummary &summary, std::string &error) {
  onnx::GraphProto &graph = *model.mutable_graph();
  int64_t opset = defaultOpset(model);
  std::set<std::string> read;
  for (const onnx::NodeProto &n : graph.node())
    read.insert(n.input().begin(), n.input().end());
  for (const onnx::ValueInfoProto &o : graph.output())
    read.insert(o.name());
  auto setIntAttr = [](onnx::NodeProto &n, const std::string &name, int64_t v) {
    for (onnx::AttributeProto &a : *n.mutable_attribute())
      if (a.name() == name)
        return a.set_i(v), void();
    onnx::AttributeProto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  };
  auto eraseAttr = [](onnx::NodeProto &n, const std::string &name) {
    auto *attrs = n.mutable_attribute();
    for (int i = 0; i < attrs->size(); ++i)
      if (attrs->Get(i).name() == name)
        return attrs->DeleteSubrange(i, 1), true;
    return false;
  };
  auto intAttr = [](const onnx::NodeProto &n, const std::string &name, int64_t dflt) {
    for (const onnx::AttributeProto &a : n.attribute())
      if (a.name() == name)
        return int64_t(a.i());
    return dflt;
  };
  for (onnx::NodeProto &n : *graph.mutable_node()) {
    std::string where = "node '" + (n.name().empty() ? n.op_type() : n.name()) + "'";
    if (n.op_type() == "BatchNormalization") {
      bool training = opset >= 14 ? intAttr(n, "training_mode", 0) != 0
                      : opset >= 9 ? n.output_size() > 1
                                   : intAttr(n, "is_test", 0) == 0;
      if (!training)
        continue;
      for (int i = 1; i < n.output_size(); ++i)
        if (!n.output(i).empty() && read.count(n.output(i)))
          return error = where + ": the batch statistics output '" + n.output(i) +
                         "' is read by the graph; it has no inference form",
                 false;
      while (n.output_size() > 1)
        n.mutable_output()->RemoveLast();
      if (opset >= 14)
        eraseAttr(n, "training_mode");
      else if (opset < 9)
        setIntAttr(n, "is_test", 1);
      ++summary.batchNorms;
    } else if (n.op_type() == "Dropout") {
      if (opset >= 12 && n.input_size() > 2 && !n.input(2).empty()) {
        n.mutable_input()->RemoveLast();
        ++summary.dropouts;
      } else if (opset < 7 && intAttr(n, "is_test", 0) == 0) {
        setIntAttr(n, "is_test", 1);
        ++summary.dropouts;
      }
      if (n.output_size() > 1 && !n.output(1).empty() && read.count(n.output(1)))
        return error = where + ": the dropout mask '" + n.output(1) +
                       "' is read by the graph; it has no inference form",
               false;
    }
  }
  return true;
}

} // namespace

bool tcc::exportTrainedModel(const std::string &modelPath, const std::string &weightsPath,
                             const std::string &outPath, ExportSummary &summary,
                             std::string &error) {
  try {
    std::ifstream in(modelPath, std::ios::binary);
    if (!in)
      return error = modelPath + ": cannot open", false;
    std::stringstream bytes;
    bytes << in.rdbuf();
    onnx::ModelProto model;
    if (endsWith(modelPath, ".onnxtxt") || endsWith(modelPath, ".txt")) {
      onnx::Status status = onnx::OnnxParser::Parse(model, bytes.str().c_str());
      if (!status.IsOK())
        return error = modelPath + ": is not a valid ONNX text model: " + status.ErrorMessage(),
               false;
    } else if (!model.ParseFromString(bytes.str())) {
      return error = modelPath + ": is not a valid ONNX model", false;
    }

    tcc::rt::SafetensorsReader weights;
    if (!weights.open(weightsPath, &error))
      return false;
    bool checkpoint = false;
    if (auto it = weights.metadata().find("tcc.kind"); it != weights.metadata().end())
      checkpoint = it->second == "checkpoint";

    std::map<std::string, onnx::TensorProto *> initializers;
    for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer())
      initializers[t.name()] = &t;
    std::map<std::string, bool> used;
    for (const tcc::rt::SafetensorsTensor &w : weights.tensors()) {
      auto it = initializers.find(w.name);
      if (it == initializers.end()) {
        // A checkpoint also holds optimizer state ("NAME.exp_avg", ...).
        size_t dot = w.name.rfind('.');
        if (checkpoint && dot != std::string::npos && initializers.count(w.name.substr(0, dot)))
          continue;
        return error = weightsPath + ": tensor '" + w.name + "' is not an initializer of " +
                       modelPath,
               false;
      }
      onnx::TensorProto &t = *it->second;
      std::string where = weightsPath + ": '" + w.name + "'";
      if (floatDtype(t.data_type()) != w.dtype)
        return error = where + " has dtype " + tcc::rt::safetensorsDtypeName(w.dtype) +
                       ", the model's initializer another (ONNX type " +
                       std::to_string(t.data_type()) + ")",
               false;
      std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
      if (dims != w.shape)
        return error = where + " has another shape than the model's initializer", false;
      t.clear_float_data();
      t.clear_double_data();
      t.clear_int32_data();
      t.clear_external_data();
      t.clear_data_location();
      t.set_raw_data(w.data, w.size);
      used[w.name] = true;
      ++summary.replaced;
    }
    for (const auto &[name, t] : initializers)
      if (floatDtype(t->data_type()) >= 0 && !used.count(name))
        summary.untouched += (summary.untouched.empty() ? "" : ", ") + name;
    if (summary.replaced == 0)
      return error = weightsPath + ": holds none of the initializers of " + modelPath, false;

    if (!makeInference(model, summary, error))
      return error = modelPath + ": " + error, false;

    // A name of its own: concurrent exports may write one output.
    llvm::SmallString<256> unique;
    llvm::sys::fs::createUniquePath(outPath + ".tmp-%%%%%%%%", unique, /*MakeAbsolute=*/false);
    std::string tmp(unique);
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out || !model.SerializeToOstream(&out) || !out.flush())
        return std::remove(tmp.c_str()), error = outPath + ": cannot write", false;
    }
    if (std::rename(tmp.c_str(), outPath.c_str()) != 0)
      return std::remove(tmp.c_str()), error = outPath + ": cannot write", false;
    return true;
  } catch (const std::exception &e) {
    return error = modelPath + ": cannot export: " + e.what(), false;
  }
}
