// themisctl drain/resume against a real coordinator and nodelets: a drained host gets no new leases, also
// after a coordinator restart; its running jobs keep their GPUs until their leases end and are not renewed
// there; resume makes its GPUs leasable again; only admins drain.
#include <gtest/gtest.h>

#include <signal.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::vector<NodeSpec> two_nodes() { return {{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0, 1}}}}; }

const std::string kOnA = "SELECT count(*) FROM leases l JOIN gpus g ON g.gpu = l.gpu JOIN hosts h ON h.id = g.host_id "
                         "WHERE h.name = 'node-a' AND l.state = 'active'";

class Drain : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<TestCluster>(two_nodes(), "3s");
    start();
  }
  void start() {
    cluster_->start_coordinator();
    for (const auto& n : two_nodes()) cluster_->start_node(n.host);
    ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "2"; }, 20s))
        << read_text(cluster_->coordinator_log());
  }
  json host(const std::string& name) {
    const auto r = cluster_->ctl("alice", {"hosts", "-o", "json"});
    EXPECT_EQ(r.code, 0) << r.out;
    const json doc = json::parse(r.stdout_text);
    for (const auto& h : doc["items"]) {
      if (h["host"] == name) return h;
    }
    return json();
  }
  // `condition` holds at every check for `period`.
  bool holds_for(const std::function<bool()>& condition, std::chrono::milliseconds period) {
    const auto end = std::chrono::steady_clock::now() + period;
    while (std::chrono::steady_clock::now() < end) {
      if (!condition()) return false;
      std::this_thread::sleep_for(100ms);
    }
    return true;
  }
  std::unique_ptr<TestCluster> cluster_;
};

TEST_F(Drain, ADrainedHostGetsNoLeasesUntilResumedAndStaysDrainedAcrossARestart) {
  const auto user = cluster_->ctl("alice", {"drain", "node-a", "--reason", "mine now"});
  EXPECT_EQ(user.code, 77) << user.out;
  EXPECT_EQ(cluster_->ctl("root", {"drain", "node-z", "--reason", "x"}).code, 102);
  EXPECT_EQ(cluster_->ctl("root", {"drain", "node-a"}).code, 2);  // --reason is required
  const auto drained = cluster_->ctl("root", {"drain", "node-a", "--reason", "disk swap"});
  ASSERT_EQ(drained.code, 0) << drained.out;
  EXPECT_EQ(host("node-a")["drain"], "drained") << cluster_->ctl("alice", {"hosts", "-o", "json"}).out;
  EXPECT_EQ(host("node-a")["drain_reason"], "disk swap");
  EXPECT_TRUE(host("node-b")["drain"].is_null());
  const auto table = cluster_->ctl("alice", {"hosts"});
  EXPECT_NE(table.stdout_text.find("disk swap"), std::string::npos) << table.out;

  const std::string spec = cluster_->write_file("four.toml",
                                                "name = \"four\"\ncommand = [\"sleep\", \"120\"]\n[hyperparameters]\nx = [0, 1, 2, 3]\n"
                                                "[resources]\ngpus_per_job = 1\n[checkpoint]\ngrace_period = \"1s\"\n");
  ASSERT_EQ(cluster_->ctl("alice", {"submit", spec}).code, 0);
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM jobs WHERE state = 'RUNNING'") == "2"; }, 20s))
      << read_text(cluster_->coordinator_log());
  // Leases of 3 s: several rounds go by, none leases node-a.
  EXPECT_TRUE(holds_for([&] { return cluster_->sql(kOnA) == "0"; }, 5s));

  cluster_->kill_coordinator(SIGTERM);
  cluster_->start_coordinator();
  EXPECT_EQ(host("node-a")["drain_reason"], "disk swap");
  EXPECT_TRUE(holds_for([&] { return cluster_->sql(kOnA) == "0"; }, 4s));

  ASSERT_EQ(cluster_->ctl("root", {"resume", "node-a"}).code, 0);
  EXPECT_TRUE(host("node-a")["drain"].is_null());
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql(kOnA) == "2"; }, 20s)) << read_text(cluster_->coordinator_log());
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM events WHERE kind IN ('HostDrained', 'HostResumed') AND host = 'node-a'"), "2");
}

TEST_F(Drain, JobsOnADrainedHostRunUntilTheirLeasesEnd) {
  const std::string spec = cluster_->write_file("four.toml",
                                                "name = \"four\"\ncommand = [\"sleep\", \"120\"]\n[hyperparameters]\nx = [0, 1, 2, 3]\n"
                                                "[resources]\ngpus_per_job = 1\n[checkpoint]\ngrace_period = \"1s\"\n");
  ASSERT_EQ(cluster_->ctl("alice", {"submit", spec}).code, 0);
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql(kOnA) == "2"; }, 20s)) << read_text(cluster_->coordinator_log());
  const double expiry = std::stod(cluster_->sql(
      "SELECT max(l.expiry) FROM leases l JOIN gpus g ON g.gpu = l.gpu JOIN hosts h ON h.id = g.host_id "
      "WHERE h.name = 'node-a' AND l.state = 'active'"));
  ASSERT_EQ(cluster_->ctl("root", {"drain", "node-a", "--reason", "kernel update"}).code, 0);
  const double drained_at = std::stod(cluster_->sql("SELECT drained_at FROM hosts WHERE name = 'node-a'"));
  EXPECT_EQ(host("node-a")["drain"], "draining");
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql(kOnA) == "0"; }, 20s)) << read_text(cluster_->coordinator_log());
  EXPECT_EQ(host("node-a")["drain"], "drained");
  // The leases held at the drain ran to their expiry; none started on node-a after it.
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases l JOIN gpus g ON g.gpu = l.gpu JOIN hosts h ON h.id = g.host_id "
                          "WHERE h.name = 'node-a' AND l.start >= " + std::to_string(drained_at)),
            "0");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases l JOIN gpus g ON g.gpu = l.gpu JOIN hosts h ON h.id = g.host_id "
                          "WHERE h.name = 'node-a' AND l.state = 'released' AND l.released_at < l.expiry - 0.5"),
            "0");
  EXPECT_GE(std::stod(cluster_->sql("SELECT max(ts) FROM events WHERE kind = 'LeaseExpired'")), expiry - 0.5);
}

}  // namespace
}  // namespace themis::testing
