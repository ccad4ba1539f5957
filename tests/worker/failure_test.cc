// Failures: a dead rank must make the others fail fast; bad configuration must fail clearly.
#include <gtest/gtest.h>

#include "process.h"

namespace themis::worker::testing {
namespace {

using std::chrono::seconds;

TEST(Failure, KilledRankMakesTheOthersExitPromptlyWithCommunicationFailure) {
  TempDir dir;
  JobAttempt job;
  job.world_size = 3;
  job.args = {"--iterations", "1000000"};
  job.rendezvous = "file://" + (dir.path() / "rdzv").string();
  job.env["THEMIS_COMM_TIMEOUT_S"] = "20";
  const auto ranks = launch(job, dir.path(), "dead");
  ASSERT_TRUE(wait_for_iteration(ranks[0], 30, seconds(60))) << read_text(ranks[0].stderr_path);
  const auto killed_at = std::chrono::steady_clock::now();
  kill_rank(ranks[1], SIGKILL);
  const auto exits = wait_all(ranks, seconds(30));
  const auto took = std::chrono::steady_clock::now() - killed_at;
  EXPECT_LT(took, seconds(30));
  EXPECT_EQ(exits[1].signal, SIGKILL);
  for (const std::size_t r : {0UL, 2UL}) {
    EXPECT_TRUE(exits[r].exited) << "rank " << r << " hung or crashed (signal " << exits[r].signal << ")";
    EXPECT_EQ(exits[r].code, 75) << "rank " << r << ": " << read_text(ranks[r].stderr_path);
    const auto e = find_event(ranks[r].stdout_path, "exit");
    ASSERT_TRUE(e.has_value()) << "rank " << r;
    EXPECT_EQ(e->fields.at("status"), "communication-failure");
  }
}

TEST(Failure, BadEnvironmentIsAConfigurationError) {
  TempDir dir;
  const auto rank = spawn_train({"--iterations", "1"}, {{"THEMIS_RANK", "5"}, {"THEMIS_WORLD_SIZE", "2"}},
                                dir.path() / "badenv");
  const Exit e = wait_for(rank, seconds(30));
  EXPECT_TRUE(e.exited);
  EXPECT_EQ(e.code, 78);
  EXPECT_NE(read_text(rank.stderr_path).find("THEMIS_RANK=5: must be in [0, 1]"), std::string::npos)
      << read_text(rank.stderr_path);
}

#if defined(THEMIS_TEST_NO_NCCL)
TEST(Failure, NcclWithoutCudaTorchIsAConfigurationError) {
  TempDir dir;
  const auto rank = spawn_train({"--iterations", "1"}, {{"THEMIS_DIST_BACKEND", "nccl"}}, dir.path() / "nccl");
  const Exit e = wait_for(rank, seconds(30));
  EXPECT_TRUE(e.exited);
  EXPECT_EQ(e.code, 78);
  EXPECT_NE(read_text(rank.stderr_path).find("this build's LibTorch has no CUDA"), std::string::npos)
      << read_text(rank.stderr_path);
}
#endif

TEST(Failure, BadHyperParameterIsAUsageError) {
  TempDir dir;
  const auto rank = spawn_train({"--model", "resnet"}, {}, dir.path() / "badarg");
  const Exit e = wait_for(rank, seconds(30));
  EXPECT_TRUE(e.exited);
  EXPECT_EQ(e.code, 2);
  EXPECT_NE(read_text(rank.stderr_path).find("model must be mlp or cnn, got \"resnet\""), std::string::npos);
}

TEST(Failure, SingleRankNeedsNoRendezvousAndCompletes) {
  TempDir dir;
  const auto rank = spawn_train({"--iterations", "5"}, {{"THEMIS_HPARAMS", R"({"model":"cnn","batch_size":8})"}},
                                dir.path() / "solo");
  const Exit e = wait_for(rank, seconds(30));
  ASSERT_TRUE(e.exited && e.code == 0) << read_text(rank.stderr_path);
  const auto exit_event = find_event(rank.stdout_path, "exit");
  ASSERT_TRUE(exit_event.has_value());
  EXPECT_EQ(exit_event->fields.at("status"), "completed");
  EXPECT_EQ(exit_event->iteration, 5);
}

}  // namespace
}  // namespace themis::worker::testing
