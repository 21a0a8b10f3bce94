//===- NpyTest.cpp - NumPy .npy reading and writing -------------------------===//

#include "runtime/data/npy.h"

#include "TestUtil.h"
#include "runtime/dtype.h"

#include <cstring>
#include <gtest/gtest.h>

using namespace tcc::rt;
using tcc::test::TempDir;

namespace {

/// A .npy image with the given version, header text and data, as NumPy lays
/// it out (the header is used verbatim).
std::string npyImage(int major, const std::string &header, const std::string &data) {
  std::string out = std::string("\x93NUMPY", 6) + char(major) + '\0';
  size_t n = header.size();
  int lengthBytes = major == 1 ? 2 : 4;
  for (int i = 0; i < lengthBytes; ++i)
    out += char((n >> (8 * i)) & 0xFF);
  return out + header + data;
}

bool parse(const std::string &bytes, HostTensor &out, std::string *error) {
  return parseNpy(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), "t.npy", out,
                  error);
}

std::string parseError(const std::string &bytes) {
  HostTensor t;
  std::string error;
  return parse(bytes, t, &error) ? "" : error;
}

// Tests that every supported dtype survives writeNpy and readNpy, for a
// matrix, a vector, a scalar and an empty tensor, with NumPy's header layout.
TEST(NpyTest, RoundTripEveryDtype) {
  TempDir dir;
  const tcc_dtype dtypes[] = {TCC_DTYPE_F32, TCC_DTYPE_F64, TCC_DTYPE_F16, TCC_DTYPE_I8,
                              TCC_DTYPE_I16, TCC_DTYPE_I32, TCC_DTYPE_I64, TCC_DTYPE_U8,
                              TCC_DTYPE_U16, TCC_DTYPE_U32, TCC_DTYPE_U64, TCC_DTYPE_BOOL};
  const std::vector<std::vector<int64_t>> shapes = {{2, 3}, {5}, {}, {0, 4}};
  for (tcc_dtype dtype : dtypes) {
    for (const std::vector<int64_t> &shape : shapes) {
      int64_t bytes;
      ASSERT_TRUE(tensorByteSize(dtype, shape, &bytes));
      std::vector<uint8_t> data(static_cast<size_t>(bytes), 0);
      for (size_t i = 0; i < data.size(); ++i)
        data[i] = dtype == TCC_DTYPE_BOOL ? uint8_t(i % 2) : uint8_t(i * 37 + 11);
      std::string path = dir.file(std::string(dtypeName(dtype)) + ".npy");
      std::string error;
      ASSERT_TRUE(writeNpy(path, dtype, shape, data.data(), data.size(), &error)) << error;
      std::vector<uint8_t> file = tcc::test::readBytes(path);
      // NumPy's layout: the preamble is padded to 64 bytes and ends in '\n'.
      size_t headerLength = file[8] | (file[9] << 8);
      EXPECT_EQ((10 + headerLength) % 64, 0u);
      EXPECT_EQ(file[10 + headerLength - 1], '\n');
      HostTensor t;
      ASSERT_TRUE(readNpy(path, t, &error)) << error;
      EXPECT_EQ(t.dtype, dtype);
      EXPECT_EQ(t.shape, shape);
      EXPECT_EQ(t.bytes, data);
    }
  }
}

// Tests the exact header text, which NumPy must be able to read back.
TEST(NpyTest, HeaderText) {
  std::vector<uint8_t> out;
  float v[3] = {1, 2, 3};
  std::string error;
  ASSERT_TRUE(encodeNpy(TCC_DTYPE_F32, {3}, v, sizeof v, out, &error)) << error;
  std::string text(out.begin() + 10, out.end() - 12);
  EXPECT_EQ(text.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 0), 0u) << text;
  ASSERT_TRUE(encodeNpy(TCC_DTYPE_BOOL, {}, v, 1, out, &error)) << error;
  text.assign(out.begin() + 10, out.end() - 1);
  EXPECT_EQ(text.rfind("{'descr': '|b1', 'fortran_order': False, 'shape': (), }", 0), 0u) << text;
}

// Tests that bfloat16, which NumPy lacks, is written as its uint16 bits.
TEST(NpyTest, Bfloat16AsUint16Bits) {
  TempDir dir;
  uint16_t bits[2] = {0x3F80, 0xC000};
  std::string error;
  ASSERT_TRUE(writeNpy(dir.file("b.npy"), TCC_DTYPE_BF16, {2}, bits, 4, &error)) << error;
  HostTensor t;
  ASSERT_TRUE(readNpy(dir.file("b.npy"), t, &error)) << error;
  EXPECT_EQ(t.dtype, TCC_DTYPE_U16);
  EXPECT_EQ(std::memcmp(t.bytes.data(), bits, 4), 0);
}

// Tests the header variants NumPy and older tools write: versions 2.0 and
// 3.0, double quotes, '|' and '=' byte orders, Python 2 long suffixes, and
// Fortran order for tensors where it does not change the layout.
TEST(NpyTest, ParsesHeaderVariants) {
  HostTensor t;
  std::string error;
  std::string four(4, '\x01');
  ASSERT_TRUE(parse(
      npyImage(2, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }\n", four), t, &error))
      << error;
  EXPECT_EQ(t.dtype, TCC_DTYPE_I32);
  ASSERT_TRUE(
      parse(npyImage(3, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (1,)}", four), t,
            &error))
      << error;
  EXPECT_EQ(t.dtype, TCC_DTYPE_F32);
  ASSERT_TRUE(
      parse(npyImage(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2L, 2L), }", four), t,
            &error))
      << error;
  EXPECT_EQ(t.dtype, TCC_DTYPE_I8);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  ASSERT_TRUE(
      parse(npyImage(1, "{'shape': (4,), 'fortran_order': True, 'descr': '=u1'}", four), t, &error))
      << error;
  EXPECT_EQ(t.dtype, TCC_DTYPE_U8);
  ASSERT_TRUE(
      parse(npyImage(1, "{'descr': '<f2', 'fortran_order': True, 'shape': (1, 2, 1), }", four), t,
            &error))
      << error;
  EXPECT_EQ(t.dtype, TCC_DTYPE_F16);
}

// Tests every refusal, each with a message that says what is wrong.
TEST(NpyTest, RejectsUnsupportedAndCorruptFiles) {
  std::string f4x2(8, '\0');
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  struct Case {
    const char *what;
    std::string bytes;
    const char *expected;
  } cases[] = {
      {"no magic", "not a npy file at all", "not a .npy file"},
      {"empty", "", "not a .npy file"},
      {"version 4", npyImage(4, h, f4x2), "format version 4.0"},
      {"truncated header", npyImage(1, h, "").substr(0, 20), "truncated header"},
      {"truncated data", npyImage(1, h, f4x2.substr(0, 5)), "truncated data"},
      {"trailing data", npyImage(1, h, f4x2 + "xx"), "2 unexpected bytes"},
      {"fortran order",
       npyImage(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", f4x2 + f4x2),
       "Fortran-order"},
      {"big-endian", npyImage(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", f4x2),
       "big-endian"},
      {"object", npyImage(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", f4x2),
       "object arrays"},
      {"strings",
       npyImage(1, "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", "abcdefghijkl"),
       "string arrays"},
      {"complex", npyImage(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", f4x2),
       "complex arrays"},
      {"long double",
       npyImage(1, "{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }", f4x2 + f4x2),
       "unsupported dtype '<f16'"},
      {"structured",
       npyImage(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "abcd"),
       "structured dtypes"},
      {"missing key", npyImage(1, "{'descr': '<f4', 'shape': (2,), }", f4x2), "needs 'descr'"},
      {"extra key",
       npyImage(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", f4x2),
       "unknown key 'x'"},
      {"duplicate key",
       npyImage(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", f4x2),
       "appears twice"},
      {"shape not a tuple",
       npyImage(1, "{'descr': '<f4', 'fortran_order': False, 'shape': 2, }", f4x2), "'shape'"},
      {"negative dimension",
       npyImage(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", f4x2), "shape"},
      {"not a dict", npyImage(1, "['descr']", f4x2), "not a dict"},
      {"huge shape",
       npyImage(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }",
                ""),
       "too large"},
      {"bad bool",
       npyImage(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", "\x01\x02"),
       "bool element"},
  };
  for (const Case &c : cases) {
    std::string error = parseError(c.bytes);
    EXPECT_NE(error, "") << c.what;
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.what << ": " << error;
    EXPECT_EQ(error.rfind("t.npy: ", 0), 0u) << c.what << ": " << error;
  }
}

// Tests the writer's refusals and the reader's message for a missing file.
TEST(NpyTest, WriterAndReaderErrors) {
  TempDir dir;
  float v[2] = {1, 2};
  std::string error;
  EXPECT_FALSE(writeNpy(dir.file("x.npy"), TCC_DTYPE_F32, {3}, v, sizeof v, &error));
  EXPECT_NE(error.find("needs 12"), std::string::npos) << error;
  HostTensor t;
  EXPECT_FALSE(readNpy(dir.file("missing.npy"), t, &error));
  EXPECT_NE(error.find("missing.npy: cannot open"), std::string::npos) << error;
  EXPECT_FALSE(readTensorFile(dir.file("x.txt"), t, &error));
  EXPECT_NE(error.find("expected .npy or .pb"), std::string::npos) << error;
}

} // namespace
