//===- TensorBoardTest.cpp - the CRC of TensorBoard's TFRecord frames -----===//
//
// The event files' frames carry masked CRC-32Cs; a wrong CRC makes
// TensorBoard drop the record. The oracles: the standard check value of
// CRC-32C (RFC 3720's iSCSI CRC) and TensorFlow's masking formula applied by
// hand. The event files themselves are read back by TensorBoard's own reader
// in test/e2e/train-monitoring.test.
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/tensorboard.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

TEST(TensorBoardTest, Crc32cCheckValue) {
  // The "check" value of the CRC-32C catalogue entry.
  const char *digits = "123456789";
  EXPECT_EQ(tcc::train::crc32c(digits, std::strlen(digits)), 0xE3069283u);
}

TEST(TensorBoardTest, Crc32cKnownVectors) {
  // RFC 3720 B.4: 32 bytes of zeros, of ones (0xff), ascending, descending.
  std::vector<unsigned char> zeros(32, 0), ones(32, 0xff), up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[size_t(i)] = static_cast<unsigned char>(i);
    down[size_t(i)] = static_cast<unsigned char>(31 - i);
  }
  EXPECT_EQ(tcc::train::crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(tcc::train::crc32c(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(tcc::train::crc32c(up.data(), 32), 0x46DD794Eu);
  EXPECT_EQ(tcc::train::crc32c(down.data(), 32), 0x113FDB5Cu);
}

TEST(TensorBoardTest, MaskedCrc) {
  const char *digits = "123456789";
  uint32_t crc = 0xE3069283u;
  uint32_t expected = ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
  EXPECT_EQ(tcc::train::maskedCrc32c(digits, std::strlen(digits)), expected);
}

} // namespace
