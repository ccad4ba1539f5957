// Disk full, for real: each test enters its own mount namespace and mounts a small tmpfs, then fills
// it with a junk file until a write fails with ENOSPC. Child processes started afterwards (themis-train,
// the coordinator) inherit the namespace, so they see the same full file system.
//  - a checkpoint write that hits ENOSPC keeps the previous checkpoint, names the file, and a later
//    run resumes from the previous checkpoint (the store, then themis-train end to end);
//  - the coordinator's database disk fills: requests that write get an error naming the full disk,
//    the coordinator keeps running, and once space is freed it goes on with nothing stored lost.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/atomic_file.h"
#include "checkpoint/checkpoint_store.h"
#include "tests/integration/process.h"
#include "tests/faults/invariants.h"
#include "tests/integration/test_cluster.h"

namespace themis::testing {
namespace {

namespace fs = std::filesystem;
const std::string kBin = THEMIS_BIN_DIR;

// A tmpfs of `size` mounted on `dir` in this process's own mount namespace; unmounted on destruction.
class SmallDisk {
 public:
  SmallDisk(const fs::path& dir, const std::string& size) : dir_(dir) {
    fs::create_directories(dir_);
    if (::unshare(CLONE_NEWNS) != 0) {
      error_ = std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
      return;
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      error_ = std::string("making mounts private: ") + std::strerror(errno);
      return;
    }
    if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0) {
      error_ = "mount tmpfs on " + dir_.string() + ": " + std::strerror(errno);
      return;
    }
    mounted_ = true;
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;

  // Empty when mounted; else why not (the test skips with it).
  const std::string& error() const { return error_; }
  const fs::path& dir() const { return dir_; }

  // Writes a junk file until the disk refuses more (ENOSPC); returns the bytes written.
  std::size_t fill() {
    const fs::path junk = dir_ / "junk";
    const int fd = ::open(junk.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("open " + junk.string() + ": " + std::strerror(errno));
    std::size_t total = 0;
    const std::vector<char> block(64 * 1024, 'j');
    for (std::size_t chunk : {block.size(), std::size_t{4096}, std::size_t{512}, std::size_t{1}}) {
      while (true) {
        const ssize_t n = ::write(fd, block.data(), chunk);
        if (n <= 0) break;
        total += static_cast<std::size_t>(n);
      }
    }
    const int error = errno;
    ::close(fd);
    if (error != ENOSPC) throw std::runtime_error("filling " + junk.string() + " ended with " + std::strerror(error));
    return total;
  }
  void free_space() { fs::remove(dir_ / "junk"); }

 private:
  fs::path dir_;
  std::string error_;
  bool mounted_ = false;
};

checkpoint::Checkpoint make_checkpoint(std::uint64_t iteration, std::size_t blob_bytes) {
  checkpoint::Checkpoint c;
  c.iteration = iteration;
  c.metadata["job"] = "7";
  c.blobs["model"] = std::string(blob_bytes, static_cast<char>('a' + iteration % 26));
  return c;
}

std::vector<std::string> temporaries_in(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (checkpoint::is_temporary_name(entry.path().filename().string())) found.push_back(entry.path().string());
  }
  return found;
}

TEST(DiskFull, CheckpointWriteKeepsThePreviousCheckpointAndNamesTheFile) {
  TempDir tmp;
  SmallDisk disk(tmp.file("disk"), "2m");
  if (!disk.error().empty()) GTEST_SKIP() << "cannot mount a small tmpfs here: " << disk.error();
  checkpoint::CheckpointStore store(disk.dir() / "ckpt");
  store.save(make_checkpoint(100, 256 * 1024));
  disk.fill();

  try {
    store.save(make_checkpoint(200, 256 * 1024));
    FAIL() << "a checkpoint was saved on a full disk";
  } catch (const checkpoint::CheckpointError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("ckpt-200.thm"), std::string::npos) << message;
    EXPECT_NE(message.find(std::strerror(ENOSPC)), std::string::npos) << message;
  }
  EXPECT_TRUE(temporaries_in(store.directory()).empty());
  EXPECT_FALSE(fs::exists(store.path_for(200)));
  const auto loaded = store.load_latest();
  ASSERT_TRUE(loaded.checkpoint.has_value());
  EXPECT_EQ(loaded.checkpoint->iteration, 100u);
  EXPECT_EQ(loaded.checkpoint->blobs.at("model"), make_checkpoint(100, 256 * 1024).blobs.at("model"));
  EXPECT_TRUE(loaded.skipped.empty());

  // Space back: the next save works and becomes the latest.
  disk.free_space();
  store.save(make_checkpoint(200, 256 * 1024));
  EXPECT_EQ(store.load_latest().checkpoint->iteration, 200u);
}

// themis-train alone (one rank), its checkpoint directory on the small disk.
Output train(const fs::path& checkpoint_dir, int iterations, const std::string& log) {
  Process p({kBin + "/themis-train", "--model", "mlp", "--hidden", "64", "--batch-size", "8", "--iterations",
             std::to_string(iterations), "--checkpoint-every", "20", "--threads", "1"},
            log, {{"THEMIS_CHECKPOINT_DIR", checkpoint_dir.string()}, {"THEMIS_JOB_ID", "1"}});
  Output out;
  out.code = p.wait();
  out.out = read_text(log);
  return out;
}

TEST(DiskFull, TrainerWhoseCheckpointHitsEnospcResumesFromThePreviousCheckpoint) {
  TempDir tmp;
  SmallDisk disk(tmp.file("disk"), "2m");
  if (!disk.error().empty()) GTEST_SKIP() << "cannot mount a small tmpfs here: " << disk.error();
  const fs::path ckpt = disk.dir() / "ckpt";

  const Output first = train(ckpt, 40, tmp.file("first.log"));
  ASSERT_EQ(first.code, 0) << first.out;
  checkpoint::CheckpointStore store(ckpt);
  ASSERT_EQ(store.load_latest().checkpoint->iteration, 40u);

  disk.fill();
  const Output full = train(ckpt, 80, tmp.file("full.log"));
  EXPECT_NE(full.code, 0) << "the final checkpoint could not be written, so the run must not count as done\n" << full.out;
  EXPECT_TRUE(std::regex_search(full.out, std::regex("checkpoint at iteration 60 not saved: .*ckpt-60\\.thm.*" +
                                                          std::string(std::strerror(ENOSPC)))))
      << full.out;
  EXPECT_NE(full.out.find("final checkpoint not saved"), std::string::npos) << full.out;
  EXPECT_TRUE(temporaries_in(ckpt).empty());
  const auto kept = store.load_latest();
  ASSERT_TRUE(kept.checkpoint.has_value());
  EXPECT_EQ(kept.checkpoint->iteration, 40u);
  EXPECT_TRUE(kept.skipped.empty());

  // Space back: the rerun resumes from iteration 40 (the good file) and finishes.
  disk.free_space();
  const Output again = train(ckpt, 80, tmp.file("again.log"));
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(store.load_latest().checkpoint->iteration, 80u);
  EXPECT_EQ(again.out.find("skipping checkpoint"), std::string::npos) << again.out;
}

std::string sleeper_spec(const std::string& name, int gpus) {
  return "name = \"" + name + "\"\ncommand = [\"sh\", \"-c\", \"exec sleep 300\"]\n"
         "[resources]\ngpus_per_job = " + std::to_string(gpus) + "\n[checkpoint]\ngrace_period = \"1s\"\n";
}

TEST(DiskFull, CoordinatorDatabaseDiskFullRefusesWritesAndRecovers) {
  TestCluster cluster({{"node-a", "r1", {{0, 1}}}});
  SmallDisk disk(fs::path(cluster.dir()) / "dbfs", "2m");
  if (!disk.error().empty()) GTEST_SKIP() << "cannot mount a small tmpfs here: " << disk.error();
  // Only the database (and its -wal and -shm, which SQLite keeps beside the link's target) is on the small disk.
  fs::create_symlink(disk.dir() / "themis.db", cluster.db_path());
  ASSERT_TRUE(cluster.start()) << read_text(cluster.coordinator_log());

  std::vector<std::int64_t> submitted;
  // Apps submitted while the disk is full want both GPUs, so they wait and the one submitted after gets the free GPU.
  auto submit = [&](const std::string& name, int gpus = 1) {
    const Output r =
        cluster.ctl("alice", {"submit", "--parsable", cluster.write_file(name + ".toml", sleeper_spec(name, gpus))});
    if (r.code == 0) submitted.push_back(std::stoll(r.first_stdout_line()));
    return r;
  };
  ASSERT_EQ(submit("before").code, 0);
  const std::string before = std::to_string(submitted.back());
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM jobs WHERE app_id = " + before) == "RUNNING"; },
                               std::chrono::seconds(30)))
      << read_text(cluster.coordinator_log());
  const std::string rounds_before = cluster.sql("SELECT count(*) FROM rounds");

  disk.fill();
  // The write-ahead log may still have room in pages it already holds: submit until a write needs a new one.
  Output refused;
  for (int i = 0; i < 400 && refused.code == 0; ++i) refused = submit("during-" + std::to_string(i), 2);
  ASSERT_NE(refused.code, 0) << "every submit succeeded on a full disk";
  const std::size_t accepted_while_full = submitted.size() - 1;
  EXPECT_NE(refused.out.find("disk is full"), std::string::npos) << refused.out;

  // The coordinator keeps serving: reads answer, and it does not exit.
  for (int i = 0; i < 5; ++i) {
    const Output apps = cluster.ctl("root", {"apps"});
    EXPECT_EQ(apps.code, 0) << apps.out;
  }
  // Heartbeats keep arriving and are answered while the disk stays full; whether their small writes fit in
  // the WAL's existing pages depends on when the WAL last restarted, so what is checked is that the host is
  // never declared down and the coordinator keeps answering, for 3 s (30 heartbeats).
  const auto full_since = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - full_since < std::chrono::seconds(3)) {
    EXPECT_EQ(cluster.ctl("root", {"apps"}).code, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  const std::chrono::duration<double> full_for = std::chrono::steady_clock::now() - full_since;
  EXPECT_EQ(read_text(cluster.coordinator_log()).find("missed"), std::string::npos) << read_text(cluster.coordinator_log());

  disk.free_space();
  const auto freed = std::chrono::steady_clock::now();
  Output after;
  ASSERT_TRUE(cluster.wait_for([&] { return (after = submit("after")).code == 0; }, std::chrono::seconds(30))) << after.out;
  const std::chrono::duration<double> recovery = std::chrono::steady_clock::now() - freed;
  const std::string after_id = std::to_string(submitted.back());
  // Rounds resume: the app submitted after recovery gets the free GPU and runs.
  EXPECT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM jobs WHERE app_id = " + after_id) == "RUNNING"; },
                               std::chrono::seconds(30)))
      << "rounds before the disk filled: " << rounds_before << ", now " << cluster.sql("SELECT count(*) FROM rounds") << "\n"
      << read_text(cluster.coordinator_log());
  EXPECT_EQ(cluster.sql("SELECT state FROM jobs WHERE app_id = " + before), "RUNNING") << read_text(cluster.coordinator_log());
  std::printf("database disk full: %zu submits accepted after the disk filled, then refused: %s"
              "the disk stayed full for %.3f s with the host up; first submit accepted %.3f s after space was freed\n",
              accepted_while_full, refused.out.c_str(), full_for.count(), recovery.count());
  EXPECT_EQ(cluster.sql("PRAGMA integrity_check"), "ok");
  const auto violations = faults::check_invariants({cluster.db_path(), submitted, true, cluster.dir()});
  EXPECT_TRUE(violations.empty()) << ::testing::PrintToString(violations);
}

}  // namespace
}  // namespace themis::testing
