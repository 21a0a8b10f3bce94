//===- TensorProtoFuzzer.cpp - libFuzzer target for the TensorProto reader ===//
//
// Feeds arbitrary bytes to parseTensorProto and readTensorProto, the
// runtime's hand-written reader of ONNX's input_N.pb / output_N.pb files.
// Protobuf itself is the oracle: whatever the reader accepts, protobuf must
// parse as an onnx.TensorProto with the same dims, data type and name, and
// the reader's bytes must be the tensor's values (raw_data, or the typed
// field of its data type, narrowed). The reader may refuse more than protobuf
// (groups, string tensors, external data), never less.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzUtil.h"
#include "runtime/data/tensor_proto.h"
#include "runtime/dtype.h"

#include <onnx/onnx_pb.h>

#include <cstring>

using namespace tcc::rt;
using tcc::fuzz::check;

namespace {

/// The onnx.TensorProto.DataType of a dtype.
int onnxType(tcc_dtype dtype) {
  switch (dtype) {
  case TCC_DTYPE_F32:
    return onnx::TensorProto::FLOAT;
  case TCC_DTYPE_F64:
    return onnx::TensorProto::DOUBLE;
  case TCC_DTYPE_F16:
    return onnx::TensorProto::FLOAT16;
  case TCC_DTYPE_BF16:
    return onnx::TensorProto::BFLOAT16;
  case TCC_DTYPE_I8:
    return onnx::TensorProto::INT8;
  case TCC_DTYPE_I16:
    return onnx::TensorProto::INT16;
  case TCC_DTYPE_I32:
    return onnx::TensorProto::INT32;
  case TCC_DTYPE_I64:
    return onnx::TensorProto::INT64;
  case TCC_DTYPE_U8:
    return onnx::TensorProto::UINT8;
  case TCC_DTYPE_U16:
    return onnx::TensorProto::UINT16;
  case TCC_DTYPE_U32:
    return onnx::TensorProto::UINT32;
  case TCC_DTYPE_U64:
    return onnx::TensorProto::UINT64;
  case TCC_DTYPE_BOOL:
    return onnx::TensorProto::BOOL;
  }
  return -1;
}

/// The bytes protobuf's reading of P gives for a tensor of DTYPE.
std::vector<uint8_t> expectedBytes(const onnx::TensorProto &p, tcc_dtype dtype) {
  if (p.has_raw_data())
    return std::vector<uint8_t>(p.raw_data().begin(), p.raw_data().end());
  size_t element = dtypeSize(dtype);
  std::vector<uint8_t> out;
  auto append = [&](const void *v) {
    const auto *b = static_cast<const uint8_t *>(v);
    out.insert(out.end(), b, b + element);
  };
  switch (p.data_type()) {
  case onnx::TensorProto::FLOAT:
    for (float v : p.float_data())
      append(&v);
    break;
  case onnx::TensorProto::DOUBLE:
    for (double v : p.double_data())
      append(&v);
    break;
  case onnx::TensorProto::INT64:
    for (int64_t v : p.int64_data())
      append(&v);
    break;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    for (uint64_t v : p.uint64_data())
      append(&v);
    break;
  default:
    for (int32_t v : p.int32_data())
      append(&v); // little-endian: the low bytes are the narrow element
  }
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  HostTensor t;
  std::string error;
  bool ok = parseTensorProto(data, size, "fuzz.pb", t, &error);
  check(ok || !error.empty(), "parseTensorProto failed without a message");
  if (ok) {
    int64_t bytes;
    check(tensorByteSize(t.dtype, t.shape, &bytes) && uint64_t(bytes) == t.bytes.size(),
          "accepted tensor's bytes do not match its dtype and shape");
    onnx::TensorProto proto;
    check(proto.ParseFromArray(data, int(size)), "accepted bytes that protobuf refuses");
    check(std::vector<int64_t>(proto.dims().begin(), proto.dims().end()) == t.shape,
          "dims differ from protobuf's");
    check(proto.name() == t.name, "name differs from protobuf's");
    check(onnxType(t.dtype) == proto.data_type(), "data type differs from protobuf's");
    check(expectedBytes(proto, t.dtype) == t.bytes, "values differ from protobuf's");
  }

  tcc::fuzz::MemFile file(data, size);
  HostTensor read;
  check(readTensorProto(file.path(), read, &error) == ok, "readTensorProto and parse disagree");
  if (ok)
    check(read.dtype == t.dtype && read.shape == t.shape && read.name == t.name &&
              read.bytes == t.bytes,
          "readTensorProto and parse read different tensors");
  return 0;
}
