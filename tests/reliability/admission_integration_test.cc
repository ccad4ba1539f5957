// Admission control with real processes: apps over the demand cap wait as QUEUED with their reason,
// and are admitted first come, first served as capacity frees (docs/reliability.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

TEST(Admission, AppsOverTheDemandCapQueueWithAReasonAndAreAdmittedInOrder) {
  const std::vector<NodeSpec> nodes = {{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0, 1}}}};
  TestCluster cluster(nodes);
  cluster.write_file("themis.toml", read_text(cluster.dir() + "/themis.toml") + "\n[admission]\nmax_demand_ratio = 1.0\n");
  cluster.start_coordinator();
  for (const auto& n : nodes) cluster.start_node(n.host);
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "2"; }, 20s));
  auto submit = [&](const std::string& name, int gpus, const std::string& seconds) {
    const std::string spec = "name = \"" + name + "\"\ncommand = [\"sh\", \"-c\", \"exec sleep " + seconds +
                             "\"]\n[resources]\ngpus_per_job = " + std::to_string(gpus) + "\n";
    const auto r = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file(name + ".toml", spec)});
    EXPECT_EQ(r.code, 0) << r.out;
    return r.out.substr(0, r.out.find('\n'));
  };
  // Four GPUs, cap 4: the first app (3 GPUs) is admitted; the second (2) would make 5; the third (1)
  // fits on its own but waits behind the second.
  const std::string first = submit("first", 3, "4");
  const std::string second = submit("second", 2, "60");
  const std::string third = submit("third", 1, "60");
  EXPECT_EQ(cluster.sql("SELECT admission FROM apps WHERE id = " + first), "");
  EXPECT_EQ(cluster.sql("SELECT admission FROM apps WHERE id = " + second), "queued: admission (demand 5 GPUs would exceed cap 4)");
  EXPECT_EQ(cluster.sql("SELECT admission FROM apps WHERE id = " + third), "queued: admission (demand 6 GPUs would exceed cap 4)");
  const auto apps = cluster.ctl("bob", {"apps"});
  ASSERT_EQ(apps.code, 0) << apps.out;
  EXPECT_NE(apps.out.find("QUEUED"), std::string::npos) << apps.out;
  EXPECT_NE(apps.out.find("queued: admission (demand 5 GPUs would exceed cap 4)"), std::string::npos) << apps.out;
  const auto show = cluster.ctl("alice", {"--json", "show", second});
  const auto doc = nlohmann::json::parse(show.out);
  EXPECT_EQ(doc["app"]["state"], "QUEUED");
  EXPECT_EQ(doc["app"]["reason"], "queued: admission (demand 5 GPUs would exceed cap 4)");
  // The first app runs; the queued ones hold nothing while a GPU stays free.
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM jobs WHERE app_id = " + first) == "RUNNING"; }, 20s))
      << read_text(cluster.coordinator_log());
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM leases_active WHERE app <> " + first), "0");
  // When it finishes, both are admitted in order and run.
  ASSERT_TRUE(cluster.wait_for([&] {
    return cluster.sql("SELECT count(*) FROM jobs WHERE app_id IN (" + second + "," + third + ") AND state = 'RUNNING'") == "2";
  }, 40s)) << read_text(cluster.coordinator_log());
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM apps WHERE admission IS NOT NULL"), "0");
  EXPECT_EQ(cluster.sql("SELECT group_concat(app_id) FROM (SELECT app_id FROM events WHERE kind = 'Admitted' ORDER BY id)"),
            second + "," + third);
}

}  // namespace
}  // namespace themis::testing
