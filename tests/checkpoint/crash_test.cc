// A writer killed with SIGKILL in the middle of a checkpoint must leave the previous checkpoint usable
// and nothing half-written under a final name.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "checkpoint/atomic_file.h"
#include "checkpoint/checkpoint_store.h"
#include "temp_dir.h"

namespace themis::checkpoint {
namespace {

constexpr std::size_t kBlobBytes = std::size_t{48} << 20;

Checkpoint big(std::uint64_t iteration) {
  Checkpoint c;
  c.iteration = iteration;
  c.blobs["model"] = std::string(kBlobBytes, static_cast<char>(iteration));
  return c;
}

// Size of the temporary being written, or 0 when there is none.
std::uintmax_t temporary_bytes(const std::filesystem::path& dir) {
  std::uintmax_t size = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (is_temporary_name(e.path().filename().string())) size = std::max(size, e.file_size(ec));
  }
  return size;
}

TEST(CheckpointCrash, SigkillMidWriteLeavesPreviousUsable) {
  testing::TempDir dir;
  {
    CheckpointStore store(dir.path(), 3);
    store.save(big(1));
  }
  for (int round = 0; round < 3; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // Rewrite checkpoint 2 forever, slowly (1 MiB chunks, 2 ms apart: ~100 ms per file).
      CheckpointStore store(dir.path(), 3);
      WriteOptions slow;
      slow.chunk_bytes = std::size_t{1} << 20;
      slow.on_progress = [](std::uint64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
      for (;;) store.save(big(2), slow);
    }
    // Kill at a different depth into the write each round.
    const std::uintmax_t kill_after = (std::uintmax_t{8} << 20) * static_cast<std::uintmax_t>(round + 1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (temporary_bytes(dir.path()) < kill_after && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    ASSERT_GT(temporary_bytes(dir.path()), 0U) << "the kill must land mid-write, leaving a temporary";

    CheckpointStore store(dir.path(), 3);
    const LoadResult r = store.load_latest();
    EXPECT_TRUE(r.skipped.empty()) << "a half-written file is visible: " << r.skipped.front().reason;
    ASSERT_TRUE(r.checkpoint.has_value());
    // Either the previous checkpoint or a complete rewrite from an earlier loop of the child.
    EXPECT_TRUE(r.checkpoint->iteration == 1 || r.checkpoint->iteration == 2);
    EXPECT_EQ(r.checkpoint->blobs.at("model"), big(r.checkpoint->iteration).blobs.at("model"));
    for (const auto& f : store.list()) EXPECT_NO_THROW(read_file(f.path)) << f.path;
    EXPECT_GE(store.remove_temporaries(), 1U);
    EXPECT_EQ(temporary_bytes(dir.path()), 0U);
  }
}

}  // namespace
}  // namespace themis::checkpoint
