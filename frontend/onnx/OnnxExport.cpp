//===- OnnxExport.cpp - an ONNX model with trained weights ----------------===//

#include "frontend/onnx/OnnxExport.h"

#include "runtime/checkpoint/safetensors.h"

#include <cstdio>
#include <fstream>
#include <map>
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

    std::string tmp = outPath + ".tmp";
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
