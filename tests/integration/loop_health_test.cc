// Loop health (docs/admin.md "Loop health"): the coordinator times each turn of its loop by phase, logs the
// slow ones, and records the worst lag since the previous round in rounds.worst_loop_lag_ms.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>

#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

std::string sleeper_spec(const std::string& name) {
  return "name = \"" + name + "\"\ncommand = [\"sleep\", \"60\"]\n"
         "[resources]\ngpus_per_job = 1\n[checkpoint]\ngrace_period = \"1s\"\n";
}

class LoopHealth : public ::testing::Test {
 protected:
  void start(const std::string& settings) {
    cluster_ = std::make_unique<TestCluster>(std::vector<NodeSpec>{{"node-a", "rack-1", {{0, 1}}}}, "60s", settings);
    cluster_->start_coordinator();
    cluster_->start_node("node-a");
    ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "1"; }, 10s))
        << read_text(cluster_->coordinator_log());
  }
  std::unique_ptr<TestCluster> cluster_;
};

TEST_F(LoopHealth, EachRoundRecordsTheWorstLoopLagAndSlowTurnsAreLoggedWithTheirPhases) {
  // Threshold 0: every turn is "slow", so the log line and its phases can be checked on any machine.
  start("slow_loop_threshold = \"0ms\"\n");
  const auto submitted = cluster_->ctl("alice", {"submit", "--parsable", cluster_->write_file("a.toml", sleeper_spec("a"))});
  ASSERT_EQ(submitted.code, 0) << submitted.out;
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM rounds WHERE granted > 0") == "1"; }, 10s))
      << read_text(cluster_->coordinator_log());
  // Written after the round committed, so wait for it rather than read it at once.
  ASSERT_TRUE(cluster_->wait_for(
      [&] { return cluster_->sql("SELECT count(*) FROM rounds WHERE worst_loop_lag_ms IS NULL") == "0"; }, 5s));
  // A lag, not a timestamp, and measured (> 0). It may be shorter than the round: the winner determination
  // runs off the loop (docs/planner.md), so a round spans several turns.
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM rounds WHERE NOT (worst_loop_lag_ms > 0 AND worst_loop_lag_ms < 60000)"), "0")
      << cluster_->sql("SELECT group_concat(worst_loop_lag_ms || ' vs ' || (finished_at - started_at) * 1000.0, '; ') FROM rounds");
  const std::string lag = cluster_->sql("SELECT worst_loop_lag_ms FROM rounds_recent WHERE granted > 0");
  ASSERT_FALSE(lag.empty());

  const auto rounds = cluster_->ctl("bob", {"rounds"});
  ASSERT_EQ(rounds.code, 0) << rounds.out;
  EXPECT_NE(rounds.stdout_text.find("WORST_LOOP_LAG_MS"), std::string::npos) << rounds.out;

  const std::string log = read_text(cluster_->coordinator_log());
  const auto line_start = log.find("slow loop turn: ");
  ASSERT_NE(line_start, std::string::npos) << log;
  const std::string line = log.substr(line_start, log.find('\n', line_start) - line_start);
  for (const char* phase : {"messages ", "heartbeat check ", "round ", "launches ", "other ", "SQLite commits "}) {
    EXPECT_NE(line.find(phase), std::string::npos) << phase << " missing in: " << line;
  }
  EXPECT_NE(line.find("(threshold 0 ms)"), std::string::npos) << line;
}

// A heartbeat is a write only when hosts.last_heartbeat is a second old: the test cluster's hosts beat every
// 100 ms, which with one commit each (one fsync under synchronous=FULL) kept the loop on the disk.
TEST_F(LoopHealth, HeartbeatsWriteTheHostsRowAtMostOnceASecond) {
  start("");
  std::set<std::string> seen;
  const auto until = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < until) {
    seen.insert(cluster_->sql("SELECT last_heartbeat FROM hosts WHERE name = 'node-a'"));
    std::this_thread::sleep_for(20ms);
  }
  // 30 heartbeats in 3 s: at most one write a second (4 values with the registration's), and the host is
  // still heard (the in-memory session is what keeps it up).
  EXPECT_GE(seen.size(), 2u);
  EXPECT_LE(seen.size(), 5u);
  EXPECT_EQ(cluster_->sql("SELECT state FROM hosts WHERE name = 'node-a'"), "up");
  EXPECT_EQ(cluster_->sql("SELECT (strftime('%s', 'now') - last_heartbeat) < 3 FROM hosts WHERE name = 'node-a'"), "1");
}

}  // namespace
}  // namespace themis::testing
