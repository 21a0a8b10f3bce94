//===- npy.h - read and write NumPy .npy files -----------------------------===//
//
// The format tcc-run takes inputs in and writes outputs to. Supported: format
// versions 1.0, 2.0 and 3.0; C order; little-endian (or byte-order-free)
// dtypes <f2 <f4 <f8, <i1..<i8, |u1..<u8, |b1. Fortran order, big-endian,
// object, string and complex arrays are refused with a message saying so.
//
// NumPy has no bfloat16: a BF16 tensor is written as '<u2' holding the bit
// patterns (readNpy then returns U16; callers that expect BF16 accept that).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_DATA_NPY_H
#define TCC_RUNTIME_DATA_NPY_H

#include "runtime/data/host_tensor.h"
#include "runtime/support/file_io.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tcc::rt {

/// Reads PATH. On failure returns false with *error naming the file.
bool readNpy(const std::string &path, HostTensor &out, std::string *error);

/// Parses an in-memory .npy image; WHAT names it in messages.
bool parseNpy(const uint8_t *data, size_t size, const std::string &what, HostTensor &out,
              std::string *error);

/// A .npy file mapped read-only: the header parsed and checked like
/// parseNpy's, the data left in the mapping (pages are read when touched), so
/// a data set larger than memory can be sampled. Move-only; the pointers stay
/// valid while *this lives.
class MappedNpy {
public:
  /// Maps PATH. On failure returns false with *error naming the file.
  bool open(const std::string &path, std::string *error);

  tcc_dtype dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  /// The array's BYTES() bytes, C order, little-endian.
  const uint8_t *data() const { return data_; }
  size_t bytes() const { return bytes_; }

private:
  MappedFile file_;
  tcc_dtype dtype_ = TCC_DTYPE_F32;
  std::vector<int64_t> shape_;
  const uint8_t *data_ = nullptr;
  size_t bytes_ = 0;
};

/// Writes a tensor as a version 1.0 .npy (2.0 if the header needs it),
/// atomically (temporary file + rename). SIZE must match dtype and shape.
bool writeNpy(const std::string &path, tcc_dtype dtype, const std::vector<int64_t> &shape,
              const void *data, size_t size, std::string *error);

/// The .npy image of a tensor (what writeNpy writes).
bool encodeNpy(tcc_dtype dtype, const std::vector<int64_t> &shape, const void *data, size_t size,
               std::vector<uint8_t> &out, std::string *error);

} // namespace tcc::rt

#endif // TCC_RUNTIME_DATA_NPY_H
