//===- OnnxExport.h - an ONNX model with trained weights ------------------===//
//
// `tcc export MODEL.onnx --weights W.safetensors -o trained.onnx`: the
// original model, its float initializers replaced by the trained values.
// Done by the compiler (which has protobuf), so the runtime needs none.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_ONNX_ONNXEXPORT_H
#define TCC_FRONTEND_ONNX_ONNXEXPORT_H

#include <string>

namespace tcc {

struct ExportSummary {
  int replaced = 0;     ///< initializers that received trained values
  std::string untouched; ///< float initializers the weights did not hold
  int batchNorms = 0;    ///< training-mode batch norms made inference ones
  int dropouts = 0;      ///< dropouts switched off
};

/// Writes OUT (binary ModelProto, atomically) from MODEL (binary, or ONNX
/// text for .onnxtxt / .txt) with every initializer named in WEIGHTS (a
/// safetensors file from tcc-run --save or a checkpoint: its optimizer
/// state is ignored) replaced, and in inference form: training-mode
/// BatchNormalization normalizes with its (trained) running statistics and
/// Dropout is off, as PyTorch's model.eval(). Fails, with ERROR naming the file and
/// tensor, on a dtype or shape mismatch, a weights tensor the model does not
/// have, or a file that cannot be read or written.
bool exportTrainedModel(const std::string &model, const std::string &weights,
                        const std::string &out, ExportSummary &summary, std::string &error);

} // namespace tcc

#endif // TCC_FRONTEND_ONNX_ONNXEXPORT_H
