#include "worker/env.h"

#include <gtest/gtest.h>

#include <map>

namespace themis::worker {
namespace {

WorkerEnv from(const std::map<std::string, std::string>& vars) {
  return worker_env_from([&](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

std::string error_of(const std::map<std::string, std::string>& vars) {
  try {
    from(vars);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(WorkerEnv, ThemisVariables) {
  const WorkerEnv e = from({{"THEMIS_RANK", "3"},
                            {"THEMIS_WORLD_SIZE", "4"},
                            {"THEMIS_RENDEZVOUS", "tcp://10.0.0.5:29500"},
                            {"THEMIS_JOB_ID", "42_3"},
                            {"THEMIS_ATTEMPT", "2"},
                            {"THEMIS_CHECKPOINT_DIR", "/ckpt"},
                            {"THEMIS_REPORT_ENDPOINT", "tcp://launcher:5601"},
                            {"THEMIS_COMM_TIMEOUT_S", "15"}});
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.world_size, 4);
  EXPECT_EQ(e.rendezvous.kind, Rendezvous::Kind::kTcp);
  EXPECT_EQ(e.rendezvous.host, "10.0.0.5");
  EXPECT_EQ(e.rendezvous.port, 29500);
  EXPECT_EQ(e.job_id, "42_3");
  EXPECT_EQ(e.attempt, 2);
  EXPECT_EQ(e.checkpoint_dir, "/ckpt");
  EXPECT_EQ(e.report_endpoint, "tcp://launcher:5601");
  EXPECT_EQ(e.comm_timeout, std::chrono::seconds(15));
}

TEST(WorkerEnv, TorchrunVariablesAreAccepted) {
  const WorkerEnv e = from({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "head"}, {"MASTER_PORT", "29400"}});
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.world_size, 2);
  EXPECT_EQ(e.rendezvous.kind, Rendezvous::Kind::kTcp);
  EXPECT_EQ(e.rendezvous.host, "head");
  EXPECT_EQ(e.rendezvous.port, 29400);
  // themis variables win over torchrun's.
  EXPECT_EQ(from({{"RANK", "1"}, {"THEMIS_RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}})
                .rank,
            0);
}

TEST(WorkerEnv, SingleRankDefaultsToAPrivateFileStore) {
  const WorkerEnv e = from({});
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.world_size, 1);
  EXPECT_EQ(e.rendezvous.kind, Rendezvous::Kind::kFile);
  EXPECT_FALSE(e.rendezvous.path.empty());
  EXPECT_EQ(e.job_id, "local");
}

TEST(WorkerEnv, FileRendezvous) {
  const WorkerEnv e = from({{"THEMIS_WORLD_SIZE", "2"}, {"THEMIS_RENDEZVOUS", "file:///shared/rdzv/j1"}});
  EXPECT_EQ(e.rendezvous.kind, Rendezvous::Kind::kFile);
  EXPECT_EQ(e.rendezvous.path, "/shared/rdzv/j1");
}

TEST(WorkerEnv, ErrorsNameTheVariable) {
  EXPECT_EQ(error_of({{"THEMIS_RANK", "2"}, {"THEMIS_WORLD_SIZE", "2"}}), "THEMIS_RANK=2: must be in [0, 1]");
  EXPECT_EQ(error_of({{"WORLD_SIZE", "two"}}), "WORLD_SIZE=\"two\": not an integer");
  EXPECT_NE(error_of({{"THEMIS_WORLD_SIZE", "2"}}).find("needs THEMIS_RENDEZVOUS"), std::string::npos);
  EXPECT_NE(error_of({{"THEMIS_RENDEZVOUS", "http://x:1"}}).find("THEMIS_RENDEZVOUS: rendezvous \"http://x:1\""),
            std::string::npos);
  EXPECT_NE(error_of({{"THEMIS_RENDEZVOUS", "tcp://host:99999"}}).find("rendezvous port=99999"), std::string::npos);
  EXPECT_NE(error_of({{"THEMIS_RENDEZVOUS", "file://relative/path"}}).find("absolute path"), std::string::npos);
  EXPECT_EQ(error_of({{"THEMIS_DIST_BACKEND", "mpi"}}), "THEMIS_DIST_BACKEND=mpi: expected gloo or nccl");
  EXPECT_EQ(error_of({{"MASTER_ADDR", "h"}}), "MASTER_ADDR is set but MASTER_PORT is not");
  EXPECT_EQ(error_of({{"THEMIS_COMM_TIMEOUT_S", "0"}}), "THEMIS_COMM_TIMEOUT_S=0: must be in [1, 86400]");
}

}  // namespace
}  // namespace themis::worker
