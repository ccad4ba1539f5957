#include "checkpoint/checkpoint_store.h"

#include <gtest/gtest.h>

#include <fstream>

#include "checkpoint/crc32c.h"
#include "temp_dir.h"

namespace themis::checkpoint {
namespace {

Checkpoint at(std::uint64_t iteration, std::size_t blob_bytes = 1000) {
  Checkpoint c;
  c.iteration = iteration;
  c.metadata["job"] = "7_1";
  c.blobs["model"] = std::string(blob_bytes, static_cast<char>('a' + iteration % 26));
  c.blobs["trainer"] = "iteration=" + std::to_string(iteration);
  return c;
}

std::string read_bytes(const std::filesystem::path& p) {
  std::string bytes(std::filesystem::file_size(p), '\0');
  std::ifstream in(p, std::ios::binary);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}
void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

TEST(CheckpointStore, EmptyDirectoryHasNoCheckpoint) {
  testing::TempDir dir;
  CheckpointStore store(dir.path() / "new" / "nested");
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "new" / "nested"));
  const LoadResult r = store.load_latest();
  EXPECT_FALSE(r.checkpoint.has_value());
  EXPECT_TRUE(r.skipped.empty());
}

TEST(CheckpointStore, RoundTripAndLatestWins) {
  testing::TempDir dir;
  CheckpointStore store(dir.path(), 5);
  for (std::uint64_t it : {10, 30, 20}) store.save(at(it));
  // 20 was saved after 30: 30 is from an abandoned history and is removed.
  LoadResult r = store.load_latest();
  ASSERT_TRUE(r.checkpoint.has_value());
  EXPECT_EQ(*r.checkpoint, at(20));
  EXPECT_EQ(r.path, dir.path() / "ckpt-20.thm");
  store.save(at(40));
  r = store.load_latest();
  EXPECT_EQ(*r.checkpoint, at(40));
  EXPECT_EQ(store.list().size(), 3U);
}

TEST(CheckpointStore, KeepsTheLastK) {
  testing::TempDir dir;
  CheckpointStore store(dir.path(), 3);
  for (std::uint64_t it = 1; it <= 7; ++it) store.save(at(it * 100));
  std::vector<std::uint64_t> kept;
  for (const auto& f : store.list()) kept.push_back(f.iteration);
  EXPECT_EQ(kept, (std::vector<std::uint64_t>{500, 600, 700}));
  CheckpointStore single(dir.path(), 1);
  single.save(at(800));
  ASSERT_EQ(single.list().size(), 1U);
  EXPECT_EQ(single.list()[0].iteration, 800U);
  EXPECT_THROW(CheckpointStore(dir.path(), 0), CheckpointError);
}

TEST(CheckpointStore, IgnoresOtherNames) {
  testing::TempDir dir;
  CheckpointStore store(dir.path());
  store.save(at(5));
  for (const char* name : {"ckpt-.thm", "ckpt-007.thm", "ckpt-9.thm.bak", "notes.txt", "ckpt-12x.thm"}) {
    write_bytes(dir.path() / name, "junk");
  }
  ASSERT_EQ(store.list().size(), 1U);
  EXPECT_EQ(parse_checkpoint_name("ckpt-0.thm"), 0U);
  EXPECT_EQ(parse_checkpoint_name("ckpt-18446744073709551615.thm"), 18446744073709551615ULL);
  EXPECT_EQ(parse_checkpoint_name("ckpt-18446744073709551616.thm"), std::nullopt);
}

// Damages the newest of three good checkpoints in a given way; the store must fall back to the previous.
void expect_skipped_and_previous_used(const std::function<void(const std::filesystem::path&)>& damage,
                                      const std::string& expected_reason) {
  testing::TempDir dir;
  CheckpointStore store(dir.path(), 5);
  for (std::uint64_t it : {100, 200, 300}) store.save(at(it, 50000));
  damage(store.path_for(300));
  const LoadResult r = store.load_latest();
  ASSERT_TRUE(r.checkpoint.has_value());
  EXPECT_EQ(*r.checkpoint, at(200, 50000));
  EXPECT_EQ(r.path, store.path_for(200));
  ASSERT_EQ(r.skipped.size(), 1U);
  EXPECT_EQ(r.skipped[0].path, store.path_for(300));
  EXPECT_NE(r.skipped[0].reason.find(expected_reason), std::string::npos) << r.skipped[0].reason;
}

TEST(CheckpointStore, FlippedByteIsSkipped) {
  expect_skipped_and_previous_used(
      [](const std::filesystem::path& p) {
        std::string b = read_bytes(p);
        b[b.size() / 3] = static_cast<char>(b[b.size() / 3] ^ 0x01);
        write_bytes(p, b);
      },
      "checksum mismatch");
}

TEST(CheckpointStore, TruncatedFileIsSkipped) {
  expect_skipped_and_previous_used(
      [](const std::filesystem::path& p) { std::filesystem::resize_file(p, std::filesystem::file_size(p) / 2); },
      "truncated");
}

TEST(CheckpointStore, EmptyFileIsSkipped) {
  expect_skipped_and_previous_used([](const std::filesystem::path& p) { std::filesystem::resize_file(p, 0); },
                                   "truncated");
}

TEST(CheckpointStore, BadMagicIsSkipped) {
  expect_skipped_and_previous_used(
      [](const std::filesystem::path& p) {
        std::string b = read_bytes(p);
        b.replace(0, 8, "PK\x03\x04zip!");
        write_bytes(p, b);
      },
      "bad magic");
}

TEST(CheckpointStore, WrongVersionIsSkipped) {
  expect_skipped_and_previous_used(
      [](const std::filesystem::path& p) {
        // Rewrite a future-version file with a valid checksum, as a newer build would.
        std::string b = read_bytes(p);
        std::string content = b.substr(0, b.size() - 8);
        content[8] = 9;
        const std::uint32_t crc = crc32c(content);
        for (int i = 0; i < 4; ++i) content.push_back(static_cast<char>((crc >> (8 * i)) & 0xFFU));
        write_bytes(p, content + std::string(kEndMagic));
      },
      "unsupported format version 9");
}

TEST(CheckpointStore, FileRenamedToAnotherIterationIsSkipped) {
  expect_skipped_and_previous_used(
      [](const std::filesystem::path& p) {
        std::filesystem::copy_file(p.parent_path() / "ckpt-100.thm", p,
                                   std::filesystem::copy_options::overwrite_existing);
      },
      "does not match its name");
}

TEST(CheckpointStore, AllCorruptMeansNoCheckpointAndEveryFileNamed) {
  testing::TempDir dir;
  CheckpointStore store(dir.path(), 5);
  for (std::uint64_t it : {1, 2}) store.save(at(it));
  for (std::uint64_t it : {1, 2}) std::filesystem::resize_file(store.path_for(it), 5);
  const LoadResult r = store.load_latest();
  EXPECT_FALSE(r.checkpoint.has_value());
  ASSERT_EQ(r.skipped.size(), 2U);
  EXPECT_EQ(r.skipped[0].path, store.path_for(2));
  EXPECT_EQ(r.skipped[1].path, store.path_for(1));
}

TEST(CheckpointStore, RemovesOnlyTemporaries) {
  testing::TempDir dir;
  CheckpointStore store(dir.path());
  store.save(at(3));
  write_bytes(dir.path() / ".ckpt-4.thm.tmp-123-0", "partial");
  write_bytes(dir.path() / "keep.txt", "x");
  EXPECT_EQ(store.remove_temporaries(), 1U);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "keep.txt"));
  EXPECT_TRUE(std::filesystem::exists(store.path_for(3)));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / ".ckpt-4.thm.tmp-123-0"));
}

}  // namespace
}  // namespace themis::checkpoint
