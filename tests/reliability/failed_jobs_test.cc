// Failed jobs with real coordinator, nodelet and themisctl processes: classified, retried after a
// back-off or failed for good, and shown by `themisctl show` (docs/reliability.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

std::vector<NodeSpec> two_nodes() { return {{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0, 1}}}}; }

class FailedJobs : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<TestCluster>(two_nodes());
    // Short back-offs so the test sees several retries.
    const std::string config = read_text(cluster_->dir() + "/themis.toml");
    cluster_->write_file("themis.toml", config + "\n[retry.communication]\nmax_retries = 2\nbackoff = \"1s\"\n");
    cluster_->start_coordinator();
    for (const auto& n : two_nodes()) cluster_->start_node(n.host);
    ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "2"; }, 20s))
        << read_text(cluster_->coordinator_log());
  }
  std::string submit(const std::string& name, const std::string& shell, int gpus_per_job = 1) {
    const std::string spec = "name = \"" + name + "\"\ncommand = [\"sh\", \"-c\", " + nlohmann::json(shell).dump() +
                             "]\n[resources]\ngpus_per_job = " + std::to_string(gpus_per_job) +
                             "\n[checkpoint]\ngrace_period = \"10s\"\n";
    const auto r = cluster_->ctl("alice", {"submit", "--parsable", cluster_->write_file(name + ".toml", spec)});
    EXPECT_EQ(r.code, 0) << r.out;
    return r.first_stdout_line();
  }
  bool app_ends(const std::string& app, std::chrono::seconds timeout = 60s) {
    return cluster_->wait_for([&] {
      const auto s = cluster_->sql("SELECT state FROM apps WHERE id = " + app);
      return s == "COMPLETED" || s == "FAILED" || s == "CANCELLED";
    }, timeout);
  }
  std::string diagnostics() {
    return cluster_->sql("SELECT group_concat(app_id || '_' || job || ':' || state || ':' || reason || ':' || attempt, ' ') FROM jobs") +
           "\nfailures: " +
           cluster_->sql("SELECT group_concat(app_id || '_' || job || '#' || attempt || ' ' || class || ' ' || decision || ' ' || reason, '\n') "
                         "FROM job_failures") +
           "\n" + read_text(cluster_->coordinator_log());
  }
  std::unique_ptr<TestCluster> cluster_;
};

TEST_F(FailedJobs, CommandThatFailsAtOnceEndsFailedAsUserErrorWithoutRetry) {
  const std::string app = submit("typo", "echo 'Traceback (most recent call last):' >&2; "
                                         "echo \"ModuleNotFoundError: No module named 'resnet_modle'\" >&2; exit 1");
  ASSERT_TRUE(app_ends(app)) << diagnostics();
  EXPECT_EQ(cluster_->sql("SELECT state FROM apps WHERE id = " + app), "FAILED");
  EXPECT_EQ(cluster_->sql("SELECT state || ' ' || reason || ' ' || attempt FROM jobs WHERE app_id = " + app), "FAILED UserError 1");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM job_failures WHERE app_id = " + app), "1");
  EXPECT_EQ(cluster_->sql("SELECT class || ' ' || decision FROM job_failures WHERE app_id = " + app), "user_error failed");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases_active"), "0");
  const auto show = cluster_->ctl("alice", {"show", app});
  ASSERT_EQ(show.code, 0) << show.out;
  EXPECT_NE(show.out.find("UserError"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("user_error"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("no retry: user_error is not retried"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("ModuleNotFoundError: No module named 'resnet_modle'"), std::string::npos) << show.out;
  const auto explain = cluster_->ctl("alice", {"explain", app});
  EXPECT_NE(explain.out.find("attempt 1: user_error"), std::string::npos) << explain.out;
  // Another user sees the class and the decision, not the log line.
  const auto other = cluster_->ctl("bob", {"show", app});
  ASSERT_EQ(other.code, 0) << other.out;
  EXPECT_NE(other.out.find("user_error"), std::string::npos) << other.out;
  EXPECT_EQ(other.out.find("resnet_modle"), std::string::npos) << other.out;
}

TEST_F(FailedJobs, CommunicationFailureIsRetriedWithBackoffAndTheAttemptsAreShown) {
  // Fails with a Gloo-style tail on its first two attempts, then succeeds.
  const std::string app = submit(
      "flaky", "if [ \"$THEMIS_ATTEMPT\" -lt 3 ]; then echo '{\"job\":\"x\",\"rank\":0,\"iter\":5,\"sec\":0.1,\"loss\":0.7}'; "
               "echo 'themis-train: rank 0: communication-failure: [gloo/transport/tcp/pair.cc:589] Read error: "
               "Connection reset by peer' >&2; exit 75; fi; echo trained");
  ASSERT_TRUE(app_ends(app)) << diagnostics();
  EXPECT_EQ(cluster_->sql("SELECT state FROM apps WHERE id = " + app), "COMPLETED") << diagnostics();
  EXPECT_EQ(cluster_->sql("SELECT attempt FROM jobs WHERE app_id = " + app), "3");
  EXPECT_EQ(cluster_->sql("SELECT group_concat(attempt || ':' || class || ':' || decision, ' ') FROM "
                          "(SELECT * FROM job_failures WHERE app_id = " + app + " ORDER BY attempt)"),
            "1:communication:retry 2:communication:retry");
  // Each retry waited for its back-off (1 s, then 2 s) before it was placed again.
  for (int attempt = 1; attempt <= 2; ++attempt) {
    const std::string failed_at = cluster_->sql("SELECT ts FROM job_failures WHERE app_id = " + app + " AND attempt = " +
                                                std::to_string(attempt));
    const std::string placed_at = cluster_->sql("SELECT min(ts) FROM events WHERE app_id = " + app +
                                                " AND kind = 'LeaseGranted' AND ts > " + failed_at);
    ASSERT_FALSE(placed_at.empty()) << diagnostics();
    // The store prints times with 15 significant digits: allow for that rounding.
    EXPECT_GE(std::stod(placed_at) - std::stod(failed_at), (attempt == 1 ? 1.0 : 2.0) - 0.01) << attempt;
  }
  const auto show = cluster_->ctl("alice", {"show", app});
  ASSERT_EQ(show.code, 0) << show.out;
  EXPECT_NE(show.out.find("Failed attempts:"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("retry 1 of 2 after 1 s back-off"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("retry 2 of 2 after 2 s back-off"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("Connection reset by peer"), std::string::npos) << show.out;
  const auto json_show = cluster_->ctl("alice", {"--json", "show", app});
  const auto doc = nlohmann::json::parse(json_show.out);
  ASSERT_EQ(doc["failures"].size(), 2u);
  EXPECT_EQ(doc["failures"][0]["class"], "communication");
  EXPECT_EQ(doc["failures"][0]["exit_code"], 75);
}

TEST_F(FailedJobs, CommunicationFailuresBeyondTheLimitFailTheJob) {
  const std::string app = submit("broken-net", "echo 'NCCL error: remote process exited or there was a network error' >&2; exit 1");
  ASSERT_TRUE(app_ends(app)) << diagnostics();
  EXPECT_EQ(cluster_->sql("SELECT state || ' ' || reason || ' ' || attempt FROM jobs WHERE app_id = " + app), "FAILED CommFailure 3");
  EXPECT_EQ(cluster_->sql("SELECT group_concat(decision, ' ') FROM (SELECT decision FROM job_failures WHERE app_id = " + app +
                          " ORDER BY attempt)"),
            "retry retry failed");
  EXPECT_EQ(cluster_->sql("SELECT summary FROM job_failures WHERE app_id = " + app + " AND attempt = 3"),
            "no retry: communication failed 3 times, limit 2 retries");
}

TEST_F(FailedJobs, OutOfMemoryRankIsTheRootCauseOfItsGangsFailure) {
  // Two ranks: rank 1 ignores the coordinator's stop, then runs out of memory; rank 0 reports the lost
  // peer first, once rank 1 is ready (a stop reaching rank 1 before its trap would kill it).
  const std::string ready = cluster_->dir() + "/rank-1-ready";
  const std::string app = submit("gang", "if [ \"$THEMIS_RANK\" = 0 ]; then while [ ! -e " + ready + " ]; do sleep 0.05; done; "
                                         "echo 'Connection closed by peer' >&2; exit 75; fi; "
                                         "trap '' TERM; touch " + ready + "; sleep 1; echo 'torch.OutOfMemoryError: CUDA out of "
                                         "memory. Tried to allocate 2.00 GiB' >&2; exit 1",
                                 2);
  ASSERT_TRUE(app_ends(app)) << diagnostics();
  EXPECT_EQ(cluster_->sql("SELECT state || ' ' || reason || ' ' || attempt FROM jobs WHERE app_id = " + app), "FAILED OutOfMemory 1")
      << diagnostics();
  EXPECT_EQ(cluster_->sql("SELECT class || ' ' || decision FROM job_failures WHERE app_id = " + app), "out_of_memory failed");
}

TEST_F(FailedJobs, NodeLossRequeuesTheJobElsewhere) {
  const std::string app = submit("long", "exec sleep 120", 2);
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT state FROM jobs WHERE app_id = " + app) == "RUNNING"; }, 20s))
      << diagnostics();
  const std::string victim = cluster_->sql("SELECT host FROM leases_active LIMIT 1");
  cluster_->kill_node(victim, SIGKILL);
  ASSERT_TRUE(cluster_->wait_for([&] {
    return cluster_->sql("SELECT state || ':' || attempt FROM jobs WHERE app_id = " + app) == "RUNNING:2";
  }, 30s)) << diagnostics();
  EXPECT_EQ(cluster_->sql("SELECT class || ' ' || decision FROM job_failures WHERE app_id = " + app), "node_failure retry");
  EXPECT_NE(cluster_->sql("SELECT reason FROM job_failures WHERE app_id = " + app).find("host " + victim + " missed"),
            std::string::npos);
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases_active WHERE host = '" + victim + "'"), "0");
}

}  // namespace
}  // namespace themis::testing
