//===- tensor_proto.h - read ONNX TensorProto files ------------------------===//
//
// Reads a serialized onnx.TensorProto (the input_N.pb / output_N.pb files of
// the ONNX backend test data) with a hand-written wire-format reader, so the
// runtime needs no protobuf library. Understood fields: dims (1, packed or
// not), data_type (2), float_data (4), int32_data (5), int64_data (7), name
// (8), raw_data (9), double_data (10), uint64_data (11). Strings, external
// data, segments and the types tcc has no dtype for are refused by name.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_DATA_TENSOR_PROTO_H
#define TCC_RUNTIME_DATA_TENSOR_PROTO_H

#include "runtime/data/host_tensor.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tcc::rt {

/// Reads PATH. On failure returns false with *error naming the file (and the
/// tensor, once its name is known).
bool readTensorProto(const std::string &path, HostTensor &out, std::string *error);

/// Parses an in-memory serialized TensorProto; WHAT names it in messages.
bool parseTensorProto(const uint8_t *data, size_t size, const std::string &what, HostTensor &out,
                      std::string *error);

} // namespace tcc::rt

#endif // TCC_RUNTIME_DATA_TENSOR_PROTO_H
