#include "checkpoint/checkpoint_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "checkpoint/crc32c.h"
#include "temp_dir.h"

namespace themis::checkpoint {
namespace {

Checkpoint sample() {
  Checkpoint c;
  c.iteration = 1234567890123ULL;
  c.metadata = {{"job", "42_3"}, {"world_size", "4"}, {"empty", ""}};
  std::string binary;
  for (int i = 0; i < 70000; ++i) binary.push_back(static_cast<char>(i % 251));
  c.blobs = {{"model", binary}, {"optimizer", std::string(10, '\0')}, {"empty", ""}};
  return c;
}

std::string message_of(std::string_view bytes) {
  try {
    decode(bytes);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "decoded without error";
}

TEST(CheckpointFile, RoundTripsInMemory) {
  const Checkpoint c = sample();
  EXPECT_EQ(decode(encode(c)), c);
  EXPECT_EQ(decode(encode(Checkpoint{})), Checkpoint{});
}

TEST(CheckpointFile, StreamedFileEqualsInMemoryEncoding) {
  testing::TempDir dir;
  const auto path = dir.path() / "c.thm";
  const Checkpoint c = sample();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  std::uint64_t last_progress = 0;
  WriteOptions options;
  options.chunk_bytes = 4096;  // several chunks per blob
  options.on_progress = [&](std::uint64_t n) {
    EXPECT_GT(n, last_progress);
    last_progress = n;
  };
  write_encoded(fd, c, options);
  ::close(fd);
  EXPECT_EQ(read_file(path), c);
  EXPECT_EQ(std::filesystem::file_size(path), encode(c).size());
  EXPECT_EQ(last_progress + 8, encode(c).size());  // the crc and end marker are written last
}

TEST(CheckpointFile, EveryFlippedByteIsDetected) {
  const std::string good = encode(sample());
  // Every byte of the header and trailer, and a stride through the blobs.
  for (std::size_t i = 0; i < good.size(); i += (i < 64 || i + 64 > good.size()) ? 1 : 997) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    EXPECT_THROW(decode(bad), CheckpointError) << "flip at byte " << i;
  }
}

TEST(CheckpointFile, ReportsWhatIsWrong) {
  const std::string good = encode(sample());
  std::string flipped = good;
  flipped[good.size() / 2] = static_cast<char>(flipped[good.size() / 2] ^ 1);
  EXPECT_NE(message_of(flipped).find("checksum mismatch"), std::string::npos) << message_of(flipped);

  EXPECT_NE(message_of(good.substr(0, good.size() - 100)).find("truncated"), std::string::npos);
  EXPECT_NE(message_of(good.substr(0, 10)).find("truncated"), std::string::npos);
  EXPECT_NE(message_of("").find("truncated"), std::string::npos);

  std::string bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_NE(message_of(bad_magic).find("bad magic"), std::string::npos);

  // A well-formed file of a future version: valid checksum, so only the version is wrong.
  std::string future = good.substr(0, good.size() - 8);
  future[8] = 2;
  const std::uint32_t crc = crc32c(future);
  for (int i = 0; i < 4; ++i) future.push_back(static_cast<char>((crc >> (8 * i)) & 0xFFU));
  future.append(kEndMagic);
  EXPECT_EQ(message_of(future), "unsupported format version 2 (this build reads 1)");
}

TEST(CheckpointFile, ReadFileNamesThePath) {
  testing::TempDir dir;
  const auto path = dir.path() / "ckpt-5.thm";
  {
    std::ofstream out(path, std::ios::binary);
    out << "THMSCKPT but nothing else of a checkpoint in here at all";
  }
  try {
    read_file(path);
    FAIL() << "expected an error";
  } catch (const CheckpointError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ": truncated: no end marker", 0), 0U) << e.what();
  }
  EXPECT_THROW(read_file(dir.path() / "missing.thm"), CheckpointError);
}

}  // namespace
}  // namespace themis::checkpoint
