// A job stopped many ways (SIGTERM, SIGKILL of every rank, a corrupted newest checkpoint) and resumed
// by fresh processes must end bit-identical to the same job run without interruption.
#include <gtest/gtest.h>

#include <fstream>

#include "checkpoint/checkpoint_store.h"
#include "process.h"

namespace themis::worker::testing {
namespace {

using std::chrono::seconds;

constexpr std::int64_t kIterations = 500;
const std::vector<std::string> kArgs = {"--model", "mlp", "--iterations", "500", "--checkpoint-every", "40",
                                        "--keep-checkpoints", "4", "--seed", "11"};

std::string exit_digest(const Rank& rank) {
  const auto e = find_event(rank.stdout_path, "exit");
  return e ? e->fields.at("digest") : "";
}

std::int64_t resumed_from(const Rank& rank) {
  const auto e = find_event(rank.stdout_path, "start");
  return e ? std::stoll(e->fields.at("resumed_from")) : -2;
}

TEST(Preemption, InterruptedAndResumedRunEqualsUninterruptedRun) {
  TempDir dir;
  // Reference: one uninterrupted attempt.
  JobAttempt reference;
  reference.args = kArgs;
  reference.rendezvous = "file://" + (dir.path() / "rdzv-ref").string();
  reference.checkpoint_dir = (dir.path() / "ckpt-ref").string();
  const auto ref_ranks = launch(reference, dir.path(), "ref");
  const auto ref_exits = wait_all(ref_ranks, seconds(60));
  ASSERT_TRUE(ref_exits[0].exited && ref_exits[0].code == 0) << read_text(ref_ranks[0].stderr_path);
  const std::string expected = exit_digest(ref_ranks[0]);
  ASSERT_EQ(expected.size(), 16U);
  ASSERT_EQ(exit_digest(ref_ranks[1]), expected);

  const std::string ckpt = (dir.path() / "ckpt").string();
  auto attempt = [&](int n, const std::string& rendezvous, std::vector<int> order) {
    JobAttempt a;
    a.args = kArgs;
    a.rendezvous = rendezvous;
    a.checkpoint_dir = ckpt;
    a.start_order = std::move(order);
    a.env["THEMIS_ATTEMPT"] = std::to_string(n);
    return launch(a, dir.path(), "job-attempt" + std::to_string(n));
  };
  auto file_rdzv = [&](int n) { return "file://" + (dir.path() / ("rdzv-" + std::to_string(n))).string(); };
  auto tcp_rdzv = [] { return "tcp://127.0.0.1:" + std::to_string(free_tcp_port()); };

  // Attempt 0: SIGTERM to every rank after some progress; both checkpoint and exit 0 "preempted".
  auto ranks = attempt(0, file_rdzv(0), {0, 1});
  ASSERT_TRUE(wait_for_iteration(ranks[0], 60, seconds(60))) << read_text(ranks[0].stderr_path);
  for (const auto& r : ranks) kill_rank(r, SIGTERM);
  auto exits = wait_all(ranks, seconds(30));
  std::int64_t stopped_at = -1;
  for (std::size_t r = 0; r < 2; ++r) {
    ASSERT_TRUE(exits[r].exited && exits[r].code == 0) << read_text(ranks[r].stderr_path);
    const auto e = find_event(ranks[r].stdout_path, "exit");
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->fields.at("status"), "preempted");
    if (r == 0) stopped_at = e->iteration;
    EXPECT_EQ(e->iteration, stopped_at) << "ranks must stop at the same iteration";
  }
  ASSERT_GE(stopped_at, 60);
  ASSERT_LT(stopped_at, kIterations);

  // Attempt 1: fresh processes over TCP, rank 1 started first, SIGTERM to rank 1 only: still all agree.
  ranks = attempt(1, tcp_rdzv(), {1, 0});
  ASSERT_TRUE(wait_for_iteration(ranks[1], stopped_at + 70, seconds(60))) << read_text(ranks[1].stderr_path);
  EXPECT_EQ(resumed_from(ranks[0]), stopped_at);
  kill_rank(ranks[1], SIGTERM);
  exits = wait_all(ranks, seconds(30));
  ASSERT_TRUE(exits[0].exited && exits[0].code == 0 && exits[1].exited && exits[1].code == 0);
  const auto stop1 = find_event(ranks[0].stdout_path, "exit");
  ASSERT_TRUE(stop1.has_value());
  EXPECT_EQ(stop1->fields.at("status"), "preempted");
  stopped_at = stop1->iteration;

  // Attempt 2: a crash, SIGKILL to every rank after a periodic checkpoint: resume from that one.
  ranks = attempt(2, file_rdzv(2), {0, 1});
  ASSERT_TRUE(wait_for_iteration(ranks[0], stopped_at + 90, seconds(60)));
  for (const auto& r : ranks) kill_rank(r, SIGKILL);
  wait_all(ranks, seconds(10));
  checkpoint::CheckpointStore store(ckpt, 4);
  const auto files = store.list();
  ASSERT_FALSE(files.empty());
  const std::uint64_t newest = files.back().iteration;
  EXPECT_EQ(newest % 40, 0U) << "after a crash the newest checkpoint is a periodic one";

  // Corrupt the newest checkpoint: the next attempt must skip it, say so, and use the one before.
  ASSERT_GE(files.size(), 2U);
  {
    std::fstream f(files.back().path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(100);
    const char original = static_cast<char>(f.get());
    f.seekp(100);
    f.put(static_cast<char>(original ^ 0x5a));
  }
  const std::uint64_t previous = files[files.size() - 2].iteration;

  // Attempt 3: runs to the end.
  ranks = attempt(3, tcp_rdzv(), {0, 1});
  exits = wait_all(ranks, seconds(60));
  for (std::size_t r = 0; r < 2; ++r) {
    ASSERT_TRUE(exits[r].exited && exits[r].code == 0) << read_text(ranks[r].stderr_path);
    EXPECT_EQ(resumed_from(ranks[r]), static_cast<std::int64_t>(previous));
    EXPECT_EQ(exit_digest(ranks[r]), expected) << "rank " << r << " differs from the uninterrupted run";
  }
  const std::string err = read_text(ranks[0].stderr_path);
  EXPECT_NE(err.find("skipping checkpoint " + files.back().path.string() + ": checksum mismatch"), std::string::npos)
      << err;
}

}  // namespace
}  // namespace themis::worker::testing
