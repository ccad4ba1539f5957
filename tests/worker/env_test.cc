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

// Three Z85 keys of 40 characters (not a real key pair: the environment only checks their form).
const std::string kServer = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
const std::string kPublic = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
const std::string kSecret = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

TEST(WorkerEnv, ReportKeysAreAllThreeOrNone) {
  EXPECT_TRUE(from({{"THEMIS_REPORT_ENDPOINT", "tcp://h:1"}}).report_keys.empty());
  const WorkerEnv e = from({{"THEMIS_REPORT_ENDPOINT", "tcp://h:1"},
                            {"THEMIS_REPORT_SERVER_KEY", kServer},
                            {"THEMIS_REPORT_PUBLIC_KEY", kPublic},
                            {"THEMIS_REPORT_SECRET_KEY", kSecret}});
  EXPECT_FALSE(e.report_keys.empty());
  EXPECT_EQ(e.report_keys.server_key, kServer);
  EXPECT_EQ(e.report_keys.public_key, kPublic);
  EXPECT_EQ(e.report_keys.secret_key, kSecret);
  EXPECT_EQ(error_of({{"THEMIS_REPORT_SERVER_KEY", kServer}, {"THEMIS_REPORT_PUBLIC_KEY", kPublic}}),
            "THEMIS_REPORT_SECRET_KEY is not set, but the other THEMIS_REPORT_*_KEY variables are: reporting with "
            "CURVE needs all three");
}

TEST(WorkerEnv, AMalformedReportKeyIsNamedButNeverQuoted) {
  const std::string bad = kSecret.substr(0, 39) + "~";  // '~' is not a Z85 character
  const std::string error = error_of(
      {{"THEMIS_REPORT_SERVER_KEY", kServer}, {"THEMIS_REPORT_PUBLIC_KEY", kPublic}, {"THEMIS_REPORT_SECRET_KEY", bad}});
  EXPECT_EQ(error, "THEMIS_REPORT_SECRET_KEY: not a CURVE key (40 characters of Z85)");
  EXPECT_EQ(error.find(bad.substr(0, 10)), std::string::npos);
  EXPECT_EQ(error_of({{"THEMIS_REPORT_SERVER_KEY", kServer.substr(1)}}),
            "THEMIS_REPORT_SERVER_KEY: not a CURVE key (40 characters of Z85)");
}

}  // namespace
}  // namespace themis::worker
