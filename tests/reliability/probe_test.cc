// The first-iteration probe with real coordinator, nodelet and themisctl processes (docs/reliability.md
// "Probe"): a new app's first job runs alone on one GPU before the app competes for its gangs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

class Probe : public ::testing::Test {
 protected:
  void start(const std::string& probe_duration) {
    cluster_ = std::make_unique<TestCluster>(std::vector<NodeSpec>{{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0, 1}}}},
                                             "60s", "probe_duration = \"" + probe_duration + "\"\n");
    cluster_->start_coordinator();
    cluster_->start_node("node-a");
    cluster_->start_node("node-b");
    ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "2"; }, 20s))
        << read_text(cluster_->coordinator_log());
  }
  std::string submit(const std::string& name, const std::string& shell, int gpus_per_job, int jobs = 1) {
    std::string grid = "[hyperparameters]\nseed = [";
    for (int i = 0; i < jobs; ++i) grid += (i ? ", " : "") + std::to_string(i);
    const std::string spec = "name = \"" + name + "\"\ncommand = [\"sh\", \"-c\", " + nlohmann::json(shell).dump() +
                             "]\n" + (jobs > 1 ? grid + "]\n" : "") + "[resources]\ngpus_per_job = " + std::to_string(gpus_per_job) +
                             "\n[checkpoint]\ngrace_period = \"10s\"\n";
    const auto r = cluster_->ctl("alice", {"submit", "--parsable", cluster_->write_file(name + ".toml", spec)});
    EXPECT_EQ(r.code, 0) << r.out;
    return r.first_stdout_line();
  }
  bool app_ends(const std::string& app) {
    return cluster_->wait_for([&] {
      const auto s = cluster_->sql("SELECT state FROM apps WHERE id = " + app);
      return s == "COMPLETED" || s == "FAILED" || s == "CANCELLED";
    }, 90s);
  }
  std::string diagnostics() {
    return cluster_->sql("SELECT group_concat(kind || ' ' || coalesce(message, ''), '\n') FROM events") + "\n" +
           read_text(cluster_->coordinator_log());
  }
  std::unique_ptr<TestCluster> cluster_;
};

TEST_F(Probe, AJobThatFailsAtOnceFailsTheAppOnOneGpuWithoutEnteringAnAuction) {
  start("30s");
  const std::string app = submit("typo", "echo \"rank of $WORLD_SIZE\" >&2; echo 'Traceback (most recent call last):' >&2; "
                                         "echo \"ModuleNotFoundError: No module named 'resnet_modle'\" >&2; exit 1",
                                 2, 3);
  ASSERT_TRUE(app_ends(app)) << diagnostics();
  EXPECT_EQ(cluster_->sql("SELECT state || ' ' || probe FROM apps WHERE id = " + app), "FAILED failed");
  // Its other jobs never ran.
  EXPECT_EQ(cluster_->sql("SELECT group_concat(job || ' ' || state || ' ' || reason, ', ') FROM jobs WHERE app_id = " + app),
            "0 FAILED UserError, 1 CANCELLED ProbeFailed, 2 CANCELLED ProbeFailed");
  // One attempt, on one GPU, in a probe grant; the app never bid or won anything in an auction.
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases WHERE app_id = " + app), "1");
  EXPECT_EQ(cluster_->sql("SELECT group_concat(grant_kind) FROM bids WHERE app_id = " + app), "probe");
  EXPECT_EQ(cluster_->sql("SELECT log_tail LIKE '%rank of 1%' FROM jobs WHERE app_id = " + app + " AND job = 0"), "1");
  EXPECT_EQ(cluster_->sql("SELECT class FROM job_failures WHERE app_id = " + app), "user_error");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases_active"), "0");
  const auto explain = cluster_->ctl("alice", {"explain", app});
  EXPECT_NE(explain.out.find("failed while it ran alone on one GPU (its probe)"), std::string::npos) << explain.out << diagnostics();
}

TEST_F(Probe, AProbedJobRunsAloneOnOneGpuThenOnItsWholeGang) {
  start("2s");
  // Attempt 1 (the probe) runs until stopped; later attempts finish at once. Each rank notes its world size.
  const std::string marks = cluster_->dir() + "/marks";
  const std::string app = submit("gang", "echo \"$THEMIS_ATTEMPT $WORLD_SIZE\" >> " + marks +
                                             "; if [ \"$THEMIS_ATTEMPT\" = 1 ]; then sleep 60 & pid=$!; "
                                             "trap 'kill $pid; exit 0' TERM; wait $pid; fi; exit 0",
                                 2);
  ASSERT_TRUE(app_ends(app)) << diagnostics();
  EXPECT_EQ(cluster_->sql("SELECT state || ' ' || probe FROM apps WHERE id = " + app), "COMPLETED passed");
  EXPECT_EQ(read_text(marks), "1 1\n2 2\n2 2\n");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM events WHERE app_id = " + app + " AND kind IN ('ProbeStarted','ProbePassed')"), "2");
  EXPECT_EQ(cluster_->sql("SELECT group_concat(grant_kind, ' ') FROM (SELECT grant_kind FROM bids WHERE app_id = " + app +
                          " AND grant_kind IS NOT NULL ORDER BY round_id)"),
            "probe leftover");  // an app without a launcher takes leftovers
}

TEST_F(Probe, OneGpuOneJobAppsAreNotProbed) {
  start("30s");
  const std::string app = submit("single", "exit 0", 1);
  ASSERT_TRUE(app_ends(app)) << diagnostics();
  EXPECT_EQ(cluster_->sql("SELECT state || ' ' || coalesce(probe, 'none') FROM apps WHERE id = " + app), "COMPLETED none");
}

}  // namespace
}  // namespace themis::testing
