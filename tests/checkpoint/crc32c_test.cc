#include "checkpoint/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace themis::checkpoint {
namespace {

TEST(Crc32c, MatchesPublishedCheckValue) { EXPECT_EQ(crc32c("123456789"), 0xE3069283U); }

TEST(Crc32c, MatchesRfc3720Vectors) {
  // RFC 3720, appendix B.4: 32 bytes of zeros, of 0xFF, and an ascending sequence.
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAU);
  EXPECT_EQ(crc32c(std::string(32, '\xFF')), 0x62A8AB43U);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(crc32c(ascending), 0x46DD794EU);
  EXPECT_EQ(crc32c(""), 0U);
}

TEST(Crc32c, ExtendingInPiecesEqualsOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  const std::uint32_t whole = crc32c(data);
  for (std::size_t split : {0UL, 1UL, 7UL, 8UL, 9UL, 500UL, 999UL, 1000UL}) {
    std::uint32_t crc = crc32c_extend(0, data.data(), split);
    crc = crc32c_extend(crc, data.data() + split, data.size() - split);
    EXPECT_EQ(crc, whole) << "split at " << split;
  }
}

TEST(Crc32c, TheCpuInstructionAndTheSoftwarePathAgree) {
  std::string data;
  for (int i = 0; i < 4099; ++i) data.push_back(static_cast<char>(i * 131 + 17));
  for (std::size_t size : {0UL, 1UL, 7UL, 8UL, 9UL, 63UL, 64UL, 4099UL}) {
    for (std::size_t offset : {0UL, 1UL, 3UL}) {
      if (offset + size > data.size()) continue;
      EXPECT_EQ(crc32c_extend(0x1234U, data.data() + offset, size), crc32c_extend_portable(0x1234U, data.data() + offset, size))
          << "size " << size << " offset " << offset;
    }
  }
  EXPECT_EQ(crc32c_extend_portable(0, "123456789", 9), 0xE3069283U);
}

TEST(Crc32c, DetectsEverySingleBitFlip) {
  std::string data(64, 'a');
  const std::uint32_t original = crc32c(data);
  for (std::size_t byte = 0; byte < data.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = data;
      flipped[byte] = static_cast<char>(flipped[byte] ^ (1 << bit));
      EXPECT_NE(crc32c(flipped), original);
    }
  }
}

}  // namespace
}  // namespace themis::checkpoint
