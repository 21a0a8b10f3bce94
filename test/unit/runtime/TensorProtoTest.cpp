//===- TensorProtoTest.cpp - ONNX TensorProto reading ---------------------===//
//
// Real files from the ONNX backend test data (the oracle: output_0 of
// test_add is input_0 + input_1, element by element), and hand-encoded
// messages for each storage field and each refusal.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/tensor_proto.h"

#include "TestUtil.h"

#include <cstring>
#include <gtest/gtest.h>
#include <sys/stat.h>

using namespace tcc::rt;

namespace {

const std::string kAddDir = std::string(TCC_ONNX_TESTDATA) + "/node/test_add/test_data_set_0/";

std::string varint(uint64_t v) {
  std::string out;
  do {
    uint8_t b = v & 0x7F;
    v >>= 7;
    out += char(v ? b | 0x80 : b);
  } while (v);
  return out;
}

std::string tag(int field, int wire) { return varint(uint64_t(field) << 3 | uint64_t(wire)); }
std::string intField(int field, int64_t v) { return tag(field, 0) + varint(uint64_t(v)); }
std::string bytesField(int field, const std::string &bytes) {
  return tag(field, 2) + varint(bytes.size()) + bytes;
}
template <typename T> std::string raw(std::initializer_list<T> values) {
  std::string out;
  for (T v : values)
    out.append(reinterpret_cast<const char *>(&v), sizeof(T));
  return out;
}

bool parse(const std::string &bytes, HostTensor &out, std::string *error) {
  return parseTensorProto(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), "t.pb",
                          out, error);
}

template <typename T> std::vector<T> values(const HostTensor &t) {
  std::vector<T> out(t.bytes.size() / sizeof(T));
  std::memcpy(out.data(), t.bytes.data(), t.bytes.size());
  return out;
}

bool haveTestData() {
  struct stat st;
  return ::stat((kAddDir + "input_0.pb").c_str(), &st) == 0;
}

// Tests a real file: dtype, shape, name and the first and last values
// (np.random.seed(0); np.random.randn(3, 4, 5)).
TEST(TensorProtoTest, ReadsOnnxTestData) {
  if (!haveTestData())
    GTEST_SKIP() << "no ONNX backend test data at " << kAddDir;
  HostTensor x;
  std::string error;
  ASSERT_TRUE(readTensorProto(kAddDir + "input_0.pb", x, &error)) << error;
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.dtype, TCC_DTYPE_F32);
  EXPECT_EQ(x.shape, (std::vector<int64_t>{3, 4, 5}));
  std::vector<float> v = values<float>(x);
  ASSERT_EQ(v.size(), 60u);
  EXPECT_FLOAT_EQ(v[0], 1.764052391052246f);
  EXPECT_FLOAT_EQ(v[59], -0.3627411723136902f);
}

// Tests decoding against the test's own oracle: output = x + y exactly.
TEST(TensorProtoTest, AddOracleAgrees) {
  if (!haveTestData())
    GTEST_SKIP() << "no ONNX backend test data at " << kAddDir;
  HostTensor x, y, z;
  std::string error;
  ASSERT_TRUE(readTensorFile(kAddDir + "input_0.pb", x, &error)) << error;
  ASSERT_TRUE(readTensorFile(kAddDir + "input_1.pb", y, &error)) << error;
  ASSERT_TRUE(readTensorFile(kAddDir + "output_0.pb", z, &error)) << error;
  std::vector<float> a = values<float>(x), b = values<float>(y), c = values<float>(z);
  ASSERT_EQ(a.size(), c.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i] + b[i], c[i]) << i;
}

// Tests every typed storage field, packed and unpacked, with negative and
// narrow values.
TEST(TensorProtoTest, TypedFields) {
  HostTensor t;
  std::string error;
  // float_data, unpacked (wire type 5), dims unpacked.
  std::string floats = intField(1, 2) + intField(2, 1) + tag(4, 5) + raw<float>({1.5f}) +
                       tag(4, 5) + raw<float>({-2.0f}) + bytesField(8, "f");
  ASSERT_TRUE(parse(floats, t, &error)) << error;
  EXPECT_EQ(t.name, "f");
  EXPECT_EQ(values<float>(t), (std::vector<float>{1.5f, -2.0f}));
  // float_data packed, dims packed.
  ASSERT_TRUE(parse(bytesField(1, varint(1) + varint(2)) + intField(2, 1) +
                        bytesField(4, raw<float>({3.0f, 4.0f})),
                    t, &error))
      << error;
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(values<float>(t), (std::vector<float>{3.0f, 4.0f}));
  // int32_data holding int8 (negative: a sign-extended 10-byte varint).
  ASSERT_TRUE(parse(intField(1, 3) + intField(2, 3) +
                        bytesField(5, varint(uint64_t(-128)) + varint(0) + varint(127)),
                    t, &error))
      << error;
  EXPECT_EQ(t.dtype, TCC_DTYPE_I8);
  EXPECT_EQ(values<int8_t>(t), (std::vector<int8_t>{-128, 0, 127}));
  // int32_data holding float16 bits and bools.
  ASSERT_TRUE(parse(intField(1, 1) + intField(2, 10) + intField(5, 0x3C00), t, &error)) << error;
  EXPECT_EQ(values<uint16_t>(t), (std::vector<uint16_t>{0x3C00}));
  ASSERT_TRUE(parse(intField(1, 2) + intField(2, 9) + intField(5, 1) + intField(5, 0), t, &error))
      << error;
  EXPECT_EQ(t.dtype, TCC_DTYPE_BOOL);
  EXPECT_EQ(t.bytes, (std::vector<uint8_t>{1, 0}));
  // int64_data.
  ASSERT_TRUE(parse(intField(1, 2) + intField(2, 7) +
                        bytesField(7, varint(uint64_t(-5)) + varint(1ull << 40)),
                    t, &error))
      << error;
  EXPECT_EQ(values<int64_t>(t), (std::vector<int64_t>{-5, int64_t(1) << 40}));
  // double_data, unpacked (wire type 1).
  ASSERT_TRUE(parse(intField(2, 11) + tag(10, 1) + raw<double>({0.25}), t, &error)) << error;
  EXPECT_TRUE(t.shape.empty());
  EXPECT_EQ(values<double>(t), (std::vector<double>{0.25}));
  // uint64_data holding uint32 and uint64.
  ASSERT_TRUE(parse(intField(1, 1) + intField(2, 12) + intField(11, 4000000000u), t, &error))
      << error;
  EXPECT_EQ(values<uint32_t>(t), (std::vector<uint32_t>{4000000000u}));
  ASSERT_TRUE(parse(intField(1, 1) + intField(2, 13) + intField(11, -1), t, &error)) << error;
  EXPECT_EQ(values<uint64_t>(t), (std::vector<uint64_t>{UINT64_MAX}));
  // raw_data, with an unknown field (doc_string) skipped.
  ASSERT_TRUE(parse(intField(1, 2) + intField(2, 6) + bytesField(12, "doc") +
                        bytesField(9, raw<int32_t>({-1, 7})),
                    t, &error))
      << error;
  EXPECT_EQ(values<int32_t>(t), (std::vector<int32_t>{-1, 7}));
  // An empty tensor needs no data.
  ASSERT_TRUE(parse(intField(1, 0) + intField(2, 1), t, &error)) << error;
  EXPECT_TRUE(t.bytes.empty());
}

// Tests every refusal, each naming the file (and the tensor once named).
TEST(TensorProtoTest, RejectsUnsupportedAndCorrupt) {
  struct Case {
    const char *what;
    std::string bytes;
    const char *expected;
  } cases[] = {
      {"string", intField(1, 1) + intField(2, 8) + bytesField(6, "abc"), "string tensors"},
      {"string type only", intField(2, 8) + bytesField(8, "s"), "tensor 's': string tensors"},
      {"external data", intField(2, 1) + bytesField(13, "x"), "external data"},
      {"data_location external", intField(2, 1) + intField(14, 1), "external data"},
      {"segment", intField(2, 1) + bytesField(3, ""), "segmented"},
      {"no data type", intField(1, 1) + bytesField(9, "abcd"),
       "unsupported data_type 0 (UNDEFINED)"},
      {"float8", intField(1, 1) + intField(2, 17) + bytesField(9, "a"), "FLOAT8E4M3FN"},
      {"complex", intField(1, 1) + intField(2, 14) + bytesField(9, "abcdefgh"), "COMPLEX64"},
      {"raw size", intField(1, 2) + intField(2, 1) + bytesField(9, "abcd"), "raw_data has 4 bytes"},
      {"value count", intField(1, 2) + intField(2, 1) + tag(4, 5) + raw<float>({1}),
       "holds 1 values"},
      {"no data", intField(1, 2) + intField(2, 1), "holds 0 values"},
      {"wrong field", intField(1, 1) + intField(2, 1) + intField(7, 1),
       "does not match data_type FLOAT"},
      {"raw and typed",
       intField(1, 1) + intField(2, 1) + bytesField(9, "abcd") + tag(4, 5) + raw<float>({1}),
       "both"},
      {"u8 out of range", intField(1, 1) + intField(2, 2) + intField(5, 300), "does not fit u8"},
      {"i8 out of range", intField(1, 1) + intField(2, 3) + intField(5, -129), "does not fit i8"},
      {"u32 out of range", intField(1, 1) + intField(2, 12) + intField(11, 1ll << 33),
       "does not fit u32"},
      {"bad bool", intField(1, 1) + intField(2, 9) + bytesField(9, "\x05"), "bool element"},
      {"negative dim", intField(1, -3) + intField(2, 1), "negative dimension"},
      {"huge shape", intField(1, 1ll << 62) + intField(1, 8) + intField(2, 1), "too large"},
      {"truncated varint", intField(2, 1) + "\x80", "malformed"},
      {"truncated bytes", intField(2, 1) + tag(9, 2) + varint(100) + "abc", "malformed"},
      {"group wire type", intField(2, 1) + tag(20, 3), "malformed"},
      {"field zero", std::string("\x00\x01", 2), "field number 0"},
      // A tag beyond 32 bits (field number over 2^29 - 1), which protobuf
      // refuses: found by the fuzzer (fuzz/regressions/tensor-proto).
      {"64-bit tag", intField(1, 1) + intField(2, 1) + varint(uint64_t(1) << 32 | 2) + varint(0),
       "malformed field tag"},
      {"garbage", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "not a TensorProto"},
  };
  for (const Case &c : cases) {
    HostTensor t;
    std::string error;
    EXPECT_FALSE(parse(c.bytes, t, &error)) << c.what;
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.what << ": " << error;
    EXPECT_EQ(error.rfind("t.pb: ", 0), 0u) << c.what << ": " << error;
  }
}

// Tests that a file that is not a TensorProto at all (a model) is refused
// rather than misread, and that a missing file is an I/O message.
TEST(TensorProtoTest, RejectsOtherFiles) {
  tcc::test::TempDir dir;
  HostTensor t;
  std::string error;
  EXPECT_FALSE(readTensorProto(dir.file("missing.pb"), t, &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
  // Random bytes.
  std::vector<uint8_t> junk(4096);
  uint32_t state = 12345;
  for (uint8_t &b : junk)
    b = uint8_t((state = state * 1103515245u + 12345u) >> 24);
  tcc::test::writeBytes(dir.file("junk.pb"), junk);
  EXPECT_FALSE(readTensorProto(dir.file("junk.pb"), t, &error));
  EXPECT_NE(error.find("junk.pb"), std::string::npos) << error;
}

} // namespace
