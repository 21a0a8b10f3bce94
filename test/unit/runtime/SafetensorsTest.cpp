//===- SafetensorsTest.cpp - safetensors writing, reading and validation ---===//

#include "runtime/checkpoint/safetensors.h"

#include "TestUtil.h"

#include <cstring>
#include <unistd.h>
#include <gtest/gtest.h>

using namespace tcc::rt;
using tcc::test::TempDir;

namespace {

/// A safetensors image with HEADER as its JSON and DATA after it.
std::string image(const std::string &header, const std::string &data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out[i] = char((n >> (8 * i)) & 0xFF);
  return out + header + data;
}

/// Parses IMAGE and returns the error ("" on success).
std::string parseError(const std::string &bytes) {
  SafetensorsReader reader;
  std::string error;
  if (reader.parse(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), "t.safetensors",
                   &error))
    return "";
  return error;
}

// Tests that tensors of several dtypes (a scalar and an empty one among
// them) and the metadata survive a write and a read, in order, byte for byte.
TEST(SafetensorsTest, RoundTrip) {
  TempDir dir;
  std::vector<float> w = {1.5f, -2.0f, 3.25f, 4.0f, 5.0f, 6.0f};
  std::vector<int64_t> step = {42};
  std::vector<uint16_t> half = {0x3C00, 0xC000};
  std::vector<uint8_t> flags = {1, 0, 1};
  std::vector<SafetensorsTensor> tensors = {
      {"layer.0/w", TCC_DTYPE_F32, {2, 3}, w.data(), w.size() * 4},
      {"step", TCC_DTYPE_I64, {}, step.data(), 8},
      {"h", TCC_DTYPE_BF16, {2}, half.data(), 4},
      {"empty", TCC_DTYPE_F64, {0, 5}, nullptr, 0},
      {"flags", TCC_DTYPE_BOOL, {3}, flags.data(), 3},
      {"\xc3\xa9t\"", TCC_DTYPE_U8, {1}, flags.data(), 1},
  };
  SafetensorsMetadata metadata = {{"format", "pt"}, {"tcc.step", "42"}};
  std::string path = dir.file("m.safetensors");
  std::string error;
  ASSERT_TRUE(writeSafetensors(path, tensors, metadata, &error)) << error;

  SafetensorsReader reader;
  ASSERT_TRUE(reader.open(path, &error)) << error;
  EXPECT_EQ(reader.metadata(), metadata);
  ASSERT_EQ(reader.tensors().size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafetensorsTensor &t = reader.tensors()[i];
    EXPECT_EQ(t.name, tensors[i].name);
    EXPECT_EQ(t.dtype, tensors[i].dtype);
    EXPECT_EQ(t.shape, tensors[i].shape);
    ASSERT_EQ(t.size, tensors[i].size);
    if (t.size)
      EXPECT_EQ(std::memcmp(t.data, tensors[i].data, t.size), 0) << t.name;
  }
  const SafetensorsTensor *found = reader.find("step");
  ASSERT_TRUE(found);
  int64_t value;
  std::memcpy(&value, found->data, 8);
  EXPECT_EQ(value, 42);
  EXPECT_EQ(reader.find("nope"), nullptr);

  // The data starts 64-byte aligned in the file.
  std::vector<uint8_t> bytes = tcc::test::readBytes(path);
  uint64_t headerSize = 0;
  std::memcpy(&headerSize, bytes.data(), 8);
  EXPECT_EQ((8 + headerSize) % 64, 0u);
  // No temporary file is left behind.
  EXPECT_EQ(dir.list(), std::vector<std::string>{"m.safetensors"});
}

// Tests that an existing file is replaced as a whole, and that a failing
// write leaves it untouched and leaves no temporary behind.
TEST(SafetensorsTest, AtomicReplace) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  float a = 1.0f, b = 2.0f;
  std::string error;
  ASSERT_TRUE(writeSafetensors(path, {{"a", TCC_DTYPE_F32, {}, &a, 4}}, {}, &error)) << error;
  ASSERT_TRUE(writeSafetensors(path, {{"b", TCC_DTYPE_F32, {1}, &b, 4}}, {}, &error)) << error;
  SafetensorsReader reader;
  ASSERT_TRUE(reader.open(path, &error)) << error;
  ASSERT_EQ(reader.tensors().size(), 1u);
  EXPECT_EQ(reader.tensors()[0].name, "b");

  std::vector<uint8_t> before = tcc::test::readBytes(path);
  // Size does not match the shape: refused before anything is written.
  EXPECT_FALSE(writeSafetensors(path, {{"c", TCC_DTYPE_F32, {2}, &b, 4}}, {}, &error));
  EXPECT_NE(error.find("tensor \"c\""), std::string::npos) << error;
  EXPECT_EQ(tcc::test::readBytes(path), before);
  // A folder that does not exist.
  EXPECT_FALSE(writeSafetensors(dir.file("no/such/x.safetensors"), {}, {}, &error));
  EXPECT_NE(error.find("no/such/x.safetensors"), std::string::npos) << error;
  EXPECT_EQ(dir.list(), std::vector<std::string>{"ckpt.safetensors"});
}

// Tests the writer's refusals: duplicate and reserved names, invalid UTF-8,
// unknown dtypes, and missing data.
TEST(SafetensorsTest, WriterRejectsBadTensors) {
  TempDir dir;
  std::string path = dir.file("x.safetensors");
  float v[2] = {1, 2};
  std::string error;
  EXPECT_FALSE(writeSafetensors(
      path, {{"a", TCC_DTYPE_F32, {1}, v, 4}, {"a", TCC_DTYPE_F32, {1}, v, 4}}, {}, &error));
  EXPECT_NE(error.find("twice"), std::string::npos) << error;
  EXPECT_FALSE(writeSafetensors(path, {{"__metadata__", TCC_DTYPE_F32, {1}, v, 4}}, {}, &error));
  EXPECT_NE(error.find("reserved"), std::string::npos) << error;
  EXPECT_FALSE(writeSafetensors(path, {{"\xff", TCC_DTYPE_F32, {1}, v, 4}}, {}, &error));
  EXPECT_NE(error.find("UTF-8"), std::string::npos) << error;
  EXPECT_FALSE(writeSafetensors(path, {{"a", tcc_dtype(14), {1}, v, 4}}, {}, &error));
  EXPECT_NE(error.find("dtype"), std::string::npos) << error;
  EXPECT_FALSE(writeSafetensors(path, {{"a", TCC_DTYPE_F32, {1}, nullptr, 4}}, {}, &error));
  EXPECT_FALSE(writeSafetensors(path, {{"a", TCC_DTYPE_F32, {-1}, v, 4}}, {}, &error));
  EXPECT_TRUE(dir.list().empty());
}

// Tests the dtype names of the format.
TEST(SafetensorsTest, DtypeNames) {
  tcc_dtype d;
  for (int i = TCC_DTYPE_F32; i <= TCC_DTYPE_BOOL; ++i) {
    const char *name = safetensorsDtypeName(i);
    ASSERT_TRUE(name) << i;
    ASSERT_TRUE(parseSafetensorsDtype(name, &d));
    EXPECT_EQ(d, i);
  }
  EXPECT_FALSE(parseSafetensorsDtype("F8_E4M3", &d));
  EXPECT_EQ(safetensorsDtypeName(0), nullptr);
}

// Tests that a well-formed hand-made image parses (the baseline for the
// corruptions below), including trailing spaces in the header.
TEST(SafetensorsTest, ParsesHandMadeImage) {
  std::string data(8, '\x01');
  EXPECT_EQ(parseError(image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}   )", data)),
            "");
  EXPECT_EQ(parseError(image(R"({})", "")), "");
}

struct Corruption {
  const char *what;
  std::string bytes;
  const char *expected; // a substring of the message
};

// Tests every kind of corruption the reader must catch, each with a message
// naming the file and, where one is at fault, the tensor.
TEST(SafetensorsTest, RejectsCorruptFiles) {
  std::string eight(8, '\0');
  std::string huge(8, '\0');
  huge[7] = 1; // 2^56
  std::vector<Corruption> cases = {
      {"empty file", "", "truncated"},
      {"short length", "\x05\x00\x00", "truncated"},
      {"length beyond the file", image("{}", "").substr(0, 9), "truncated"},
      {"length over the limit", huge + "{}", "limit"},
      {"not an object", image("[1]", ""), "not a JSON object"},
      {"bad JSON", image(R"({"a":{"dtype":"F32",}})", ""), "invalid JSON header"},
      {"duplicate tensor",
       image(
           R"({"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})",
           "abcd"),
       "duplicate key"},
      {"unknown dtype", image(R"({"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", "x"),
       "tensor \"a\": unsupported dtype \"F8_E4M3\""},
      {"dtype not a string", image(R"({"a":{"dtype":1,"shape":[1],"data_offsets":[0,1]}})", "x"),
       "unsupported dtype"},
      {"missing field", image(R"({"a":{"dtype":"F32","shape":[1]}})", "xxxx"),
       "needs dtype, shape and data_offsets"},
      {"unknown field",
       image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", "xxxx"),
       "unknown field"},
      {"negative dimension",
       image(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "xxxx"),
       "non-negative integer"},
      {"fractional dimension",
       image(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", "xxxx"),
       "non-negative integer"},
      {"overflowing shape",
       image(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,4]}})",
             "xxxx"),
       "too large"},
      {"offsets not a pair",
       image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", "xxxx"), "pair"},
      {"offsets reversed",
       image(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})", "xxxx"),
       "end before they begin"},
      {"offsets out of range",
       image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", "xxxx"),
       "tensor \"a\": data_offsets [0, 8] exceed the 4 data bytes"},
      {"size does not match the shape",
       image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "xxxx"),
       "F32[2] needs 8 bytes, but data_offsets give 4"},
      {"dtype mismatch with size",
       image(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,4]}})", "xxxx"), "needs 8 bytes"},
      {"overlap",
       image(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           "xxxxxxxx"),
       "overlaps"},
      {"hole", image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", "xxxxxxxx"),
       "belong to no tensor"},
      {"trailing data",
       image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", "xxxxyy"),
       "2 bytes at the end"},
      {"metadata not an object", image(R"({"__metadata__":[]})", ""),
       "__metadata__ is not an object"},
      {"metadata value not a string", image(R"({"__metadata__":{"k":1}})", ""), "not a string"},
      {"tensor not an object", image(R"({"a":[]})", ""), "not an object"},
  };
  for (const Corruption &c : cases) {
    std::string error = parseError(c.bytes);
    EXPECT_NE(error, "") << c.what;
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.what << ": " << error;
    EXPECT_EQ(error.rfind("t.safetensors: ", 0), 0u) << c.what << ": " << error;
  }
}

// Tests that a truncated real file (cut inside its data) is refused.
TEST(SafetensorsTest, RejectsTruncatedFile) {
  TempDir dir;
  std::string path = dir.file("t.safetensors");
  std::vector<float> w(100, 1.0f);
  std::string error;
  ASSERT_TRUE(writeSafetensors(path, {{"w", TCC_DTYPE_F32, {100}, w.data(), 400}}, {}, &error));
  std::vector<uint8_t> bytes = tcc::test::readBytes(path);
  bytes.resize(bytes.size() - 10);
  tcc::test::writeBytes(path, bytes);
  SafetensorsReader reader;
  EXPECT_FALSE(reader.open(path, &error));
  EXPECT_NE(error.find("exceed"), std::string::npos) << error;
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_FALSE(reader.open(dir.file("missing.safetensors"), &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

// Tests reading at offsets (openFile, readHeader, readTensor: how sessions
// load parameters and checkpoints): the same header as open(), each tensor's
// bytes when asked, and a file truncated after its header was read is an
// error naming the file and the tensor, not a SIGBUS as from a mapping.
TEST(SafetensorsTest, ReadsAtOffsets) {
  TempDir dir;
  std::string path = dir.file("p.safetensors");
  std::vector<float> w(100), b(7);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = 0.25f * float(i) - 3.0f;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = -1.5f * float(i);
  std::string error;
  ASSERT_TRUE(writeSafetensors(path, {{"w", TCC_DTYPE_F32, {10, 10}, w.data(), 400},
                                      {"b", TCC_DTYPE_F32, {7}, b.data(), 28}},
                               {{"tcc.kind", "parameters"}}, &error))
      << error;
  SafetensorsReader reader;
  ASSERT_TRUE(reader.openFile(path, &error)) << error;
  ASSERT_TRUE(reader.readHeader(&error)) << error;
  EXPECT_EQ(reader.metadata().at("tcc.kind"), "parameters");
  const SafetensorsTensor *tw = reader.find("w");
  const SafetensorsTensor *tb = reader.find("b");
  ASSERT_TRUE(tw && tb);
  EXPECT_EQ(tw->data, nullptr); // still in the file
  std::vector<float> got(100);
  ASSERT_TRUE(reader.readTensor(*tw, got.data(), &error)) << error;
  EXPECT_EQ(got, w);
  std::vector<float> gotB(7);
  ASSERT_TRUE(reader.readTensor(*tb, gotB.data(), &error)) << error;
  EXPECT_EQ(gotB, b);

  // Cut inside the data after the header was read.
  std::vector<uint8_t> bytes = tcc::test::readBytes(path);
  ASSERT_EQ(::truncate(path.c_str(), off_t(bytes.size() - 8)), 0);
  const SafetensorsTensor *last = tw->offset > tb->offset ? tw : tb;
  const SafetensorsTensor *first = last == tw ? tb : tw;
  std::vector<uint8_t> out(last->size);
  EXPECT_FALSE(reader.readTensor(*last, out.data(), &error));
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("shrank"), std::string::npos) << error;
  EXPECT_NE(error.find("tensor \"" + last->name + "\""), std::string::npos) << error;
  out.resize(first->size);
  EXPECT_TRUE(reader.readTensor(*first, out.data(), &error)) << error;

  // A header cut short: refused by readHeader with open()'s message.
  ASSERT_EQ(::truncate(path.c_str(), 20), 0);
  ASSERT_TRUE(reader.openFile(path, &error)) << error;
  EXPECT_FALSE(reader.readHeader(&error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_FALSE(reader.openFile(dir.file("missing.safetensors"), &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

} // namespace
