//===- dtype.h - element types shared by the runtime's file formats -------===//
//
// Header-only helpers over tcc_dtype (abi.h): element sizes, names, and an
// overflow-checked element count, so every reader validates sizes the same way.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_DTYPE_H
#define TCC_RUNTIME_DTYPE_H

#include "runtime/include/tcc/abi.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// Every file format the runtime reads stores little-endian data, which it
// copies without swapping.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the tcc runtime needs a little-endian host");

namespace tcc::rt {

/// True for the values of tcc_dtype this runtime knows.
inline bool isValidDtype(int32_t dtype) {
  return dtype >= TCC_DTYPE_F32 && dtype <= TCC_DTYPE_BOOL;
}

/// Bytes per element; 0 for an unknown dtype.
inline size_t dtypeSize(int32_t dtype) {
  switch (dtype) {
  case TCC_DTYPE_F64:
  case TCC_DTYPE_I64:
  case TCC_DTYPE_U64:
    return 8;
  case TCC_DTYPE_F32:
  case TCC_DTYPE_I32:
  case TCC_DTYPE_U32:
    return 4;
  case TCC_DTYPE_F16:
  case TCC_DTYPE_BF16:
  case TCC_DTYPE_I16:
  case TCC_DTYPE_U16:
    return 2;
  case TCC_DTYPE_I8:
  case TCC_DTYPE_U8:
  case TCC_DTYPE_BOOL:
    return 1;
  default:
    return 0;
  }
}

/// The short name used in messages and listings ("f32", "bf16", "bool").
inline const char *dtypeName(int32_t dtype) {
  switch (dtype) {
  case TCC_DTYPE_F32:
    return "f32";
  case TCC_DTYPE_F64:
    return "f64";
  case TCC_DTYPE_F16:
    return "f16";
  case TCC_DTYPE_BF16:
    return "bf16";
  case TCC_DTYPE_I8:
    return "i8";
  case TCC_DTYPE_I16:
    return "i16";
  case TCC_DTYPE_I32:
    return "i32";
  case TCC_DTYPE_I64:
    return "i64";
  case TCC_DTYPE_U8:
    return "u8";
  case TCC_DTYPE_U16:
    return "u16";
  case TCC_DTYPE_U32:
    return "u32";
  case TCC_DTYPE_U64:
    return "u64";
  case TCC_DTYPE_BOOL:
    return "bool";
  default:
    return "unknown";
  }
}

/// The byte size of a tensor of this dtype and shape. Returns false when a
/// dimension is negative, the dtype is unknown, or the size overflows
/// int64_t (so it also fits size_t on every 64-bit host).
inline bool tensorByteSize(int32_t dtype, const int64_t *shape, size_t rank, int64_t *outBytes) {
  size_t elementSize = dtypeSize(dtype);
  if (elementSize == 0)
    return false;
  int64_t bytes = static_cast<int64_t>(elementSize);
  bool zero = false;
  for (size_t i = 0; i < rank; ++i) {
    if (shape[i] < 0)
      return false;
    if (shape[i] == 0)
      zero = true;
    // Overflow is checked even after a zero dimension: a shape that would
    // overflow without it is nonsense either way.
    if (shape[i] > 0 && __builtin_mul_overflow(bytes, shape[i], &bytes))
      return false;
  }
  *outBytes = zero ? 0 : bytes;
  return true;
}

inline bool tensorByteSize(int32_t dtype, const std::vector<int64_t> &shape, int64_t *outBytes) {
  return tensorByteSize(dtype, shape.data(), shape.size(), outBytes);
}

/// "[2,3]" for messages; "[]" for a scalar.
inline std::string shapeString(const int64_t *shape, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i)
      s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

inline std::string shapeString(const std::vector<int64_t> &shape) {
  return shapeString(shape.data(), shape.size());
}

} // namespace tcc::rt

#endif // TCC_RUNTIME_DTYPE_H
