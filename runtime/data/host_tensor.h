//===- host_tensor.h - a tensor read from a file into host memory ---------===//
//
// What the data readers (.npy, ONNX TensorProto .pb) return and the writers
// take: a dtype, a static shape and the bytes in C order, little-endian.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_DATA_HOST_TENSOR_H
#define TCC_RUNTIME_DATA_HOST_TENSOR_H

#include "runtime/include/tcc/abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::rt {

struct HostTensor {
  tcc_dtype dtype = TCC_DTYPE_F32;
  std::vector<int64_t> shape;
  /// Row-major (C order), little-endian; size == product(shape) * element size.
  std::vector<uint8_t> bytes;
  /// The name stored in the file (TensorProto.name); empty for .npy.
  std::string name;
};

/// Reads a .npy or an ONNX TensorProto .pb file, chosen by the extension.
/// On failure returns false and sets *error to a message naming the file.
bool readTensorFile(const std::string &path, HostTensor &out, std::string *error);

} // namespace tcc::rt

#endif // TCC_RUNTIME_DATA_HOST_TENSOR_H
