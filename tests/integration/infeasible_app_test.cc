// Issue 14: an app whose job is wider than the whole cluster. A real coordinator and nodelets with four
// virtual GPUs (two hosts x two). With reject_infeasible on (the default) the 8-GPU app is refused at
// submit and nothing is stored; with it off the app waits "Infeasible", takes no GPU (not even a probe),
// and another app still runs and completes; an app that fits once a host registers is admitted then.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::vector<NodeSpec> two_nodes() { return {{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0, 1}}}}; }

std::string app(const std::string& name, int gpus_per_job, const std::string& seconds) {
  return "name = \"" + name + "\"\ncommand = [\"sleep\", \"" + seconds + "\"]\n[resources]\ngpus_per_job = " +
         std::to_string(gpus_per_job) + "\n[checkpoint]\ngrace_period = \"1s\"\n";
}

void start(TestCluster& cluster, const std::vector<std::string>& hosts) {
  cluster.start_coordinator();
  for (const auto& h : hosts) cluster.start_node(h);
  ASSERT_TRUE(cluster.wait_for(
      [&] { return cluster.sql("SELECT count(*) FROM hosts WHERE state = 'up'") == std::to_string(hosts.size()); }, 20s))
      << read_text(cluster.coordinator_log());
}

TEST(InfeasibleApp, AJobWiderThanTheClusterIsRefusedAtSubmitAndNothingIsStored) {
  TestCluster cluster(two_nodes());
  start(cluster, {"node-a", "node-b"});
  const auto r = cluster.ctl("alice", {"submit", cluster.write_file("wide.toml", app("wide", 8, "60"))});
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("wide.toml: resources.gpus_per_job: job needs 8 GPUs; the largest the registered cluster can give "
                       "one job is 4 (2 hosts x 2 GPUs)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM apps"), "0");

  // A bad [scheduler] table is refused at submit too, where it is written (it once failed 31 s later).
  const auto bad = cluster.ctl("alice", {"submit", cluster.write_file("sweep.toml", app("sweep", 1, "1") +
                                                                          "[scheduler]\nkind = \"hyperband\"\n")});
  EXPECT_NE(bad.code, 0) << bad.out;
  EXPECT_NE(bad.out.find("sweep.toml:8:8: scheduler.kind: must be \"all-jobs\" or \"successive-halving\", got \"hyperband\""),
            std::string::npos)
      << bad.out;
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM apps"), "0");

  // Four GPUs fit: accepted.
  EXPECT_EQ(cluster.ctl("alice", {"submit", cluster.write_file("four.toml", app("four", 4, "1"))}).code, 0);
}

TEST(InfeasibleApp, WithRejectInfeasibleOffItWaitsTakesNoGpuAndOthersRun) {
  TestCluster cluster(two_nodes(), "60s", "reject_infeasible = false\nprobe_duration = \"2s\"\n");
  start(cluster, {"node-a"});  // node-b registers later: 2 GPUs now, 4 then
  const auto wide = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file("wide.toml", app("wide", 8, "60"))});
  ASSERT_EQ(wide.code, 0) << wide.out;
  const auto four = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file("four.toml", app("four", 4, "60"))});
  ASSERT_EQ(four.code, 0) << four.out;
  const auto small = cluster.ctl("bob", {"submit", "--parsable", cluster.write_file("small.toml", app("small", 1, "1"))});
  ASSERT_EQ(small.code, 0) << small.out;
  const std::string w = wide.first_stdout_line(), f = four.first_stdout_line(), s = small.first_stdout_line();

  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM apps WHERE id = " + s) == "COMPLETED"; }, 30s))
      << read_text(cluster.coordinator_log());
  EXPECT_EQ(cluster.sql("SELECT admission FROM apps WHERE id = " + w),
            "Infeasible: job needs 8 GPUs; the largest the registered cluster can give one job is 2 (1 host x 2 GPUs)");
  const auto explained = cluster.ctl("alice", {"--json", "explain", w});
  ASSERT_EQ(explained.code, 0) << explained.out;
  const json verdict = json::parse(explained.out)["verdict"];
  EXPECT_EQ(verdict["reason"], "Infeasible") << explained.out;
  EXPECT_EQ(verdict["state"], "QUEUED");
  const auto listed = cluster.ctl("alice", {"apps"});
  EXPECT_NE(listed.out.find("Infeasible"), std::string::npos) << listed.out;  // its REASON
  const auto wide_list = cluster.ctl("alice", {"apps", "-o", "wide"});
  EXPECT_NE(wide_list.out.find("Infeasible: job needs 8 GPUs"), std::string::npos) << wide_list.out;  // ADMISSION
  // No GPU ever, not even a probe's, and no round granted it one.
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM leases WHERE app_id IN (" + w + ", " + f + ")"), "0");

  // node-b registers: 4 GPUs. The 4-GPU app becomes feasible and gets GPUs (its probe first); the 8-GPU
  // app now reads 4 and still waits.
  cluster.start_node("node-b");
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM leases WHERE app_id = " + f) != "0"; }, 30s))
      << read_text(cluster.coordinator_log());
  EXPECT_EQ(cluster.sql("SELECT admission IS NULL FROM apps WHERE id = " + f), "1");
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM events WHERE app_id = " + f + " AND kind = 'Feasible'"), "1");
  EXPECT_EQ(cluster.sql("SELECT admission FROM apps WHERE id = " + w),
            "Infeasible: job needs 8 GPUs; the largest the registered cluster can give one job is 4 (2 hosts x 2 GPUs)");
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM leases WHERE app_id = " + w), "0");
}

}  // namespace
}  // namespace themis::testing
