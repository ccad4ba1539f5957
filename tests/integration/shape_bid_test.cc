// A bid row's scope (core/bid.h ShapeScope) on the wire, through a real coordinator and nodelet: two launchers
// name the same two GPUs of a 4-GPU machine, both saying any two GPUs of that machine will do (scope machine).
// Read as shapes, both rows fit at once and both apps win two GPUs of the machine; read literally, the rows
// would collide and only one app could win.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "core/bid.h"
#include "policy/arbiter/policies/registry.h"
#include "protocol_launcher.h"
#include "recorded_rounds.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

std::string sleeper(const std::string& name, int gpus_per_job) {
  return "name = \"" + name + "\"\ncommand = [\"sleep\", \"120\"]\n[hyperparameters]\nx = [0]\n"
         "[resources]\ngpus_per_job = " + std::to_string(gpus_per_job) + "\n[checkpoint]\ngrace_period = \"1s\"\n";
}

// Answers every offer with one row: the first two offered GPUs at ρ 1.0 (2.0 without), scope `scope`.
class ScopedBidder {
 public:
  ScopedBidder(zmq::context_t& context, TestCluster& cluster, std::int64_t app, std::uint8_t scope)
      : launcher_(context, cluster, "alice", app), scope_(scope) {}
  bool pump() {
    return launcher_.pump([&](const net::InMessage& in) {
      const auto offered = in.envelope().getBody().getOffer().getGpus();
      if (offered.size() < 2) return;
      launcher_.bid_one_row(in, 2.0, 1.0, {offered[0], offered[1]}, scope_);
    });
  }

 private:
  ProtocolLauncher launcher_;
  std::uint8_t scope_;
};

TEST(ShapeBids, TwoAppsNamingTheSameGpusOfAMachineBothWinWhenTheirRowsSayAnyGpusOfTheMachine) {
  // f = 0 and the fixed filter: both apps are offered the GPUs and bid against each other.
  TestCluster cluster({{"node-a", "rack-1", {{0, 1, 2, 3}}}}, "60s", "fairness_knob = 0\nfilter = \"fixed\"\n");
  ASSERT_TRUE(cluster.start()) << read_text(cluster.coordinator_log());
  auto submit = [&](const std::string& name, int gpus) {
    const auto r = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file(name + ".toml", sleeper(name, gpus))});
    EXPECT_EQ(r.code, 0) << r.out;
    return r.first_stdout_line();
  };
  // Every GPU busy first, so that the two launchers are attached before the round that offers the machine.
  const std::string hog = submit("hog", 4);
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM jobs WHERE state = 'RUNNING'") == "1"; }, 30s))
      << read_text(cluster.coordinator_log());
  const std::string a = submit("first", 2);
  const std::string b = submit("second", 2);
  zmq::context_t context(1);
  const std::uint8_t machine = static_cast<std::uint8_t>(ShapeScope::kMachine);
  ScopedBidder first(context, cluster, std::stoll(a), machine);
  ScopedBidder second(context, cluster, std::stoll(b), machine);
  ASSERT_TRUE(cluster.wait_for([&] { return first.pump() & second.pump(); }, 10s));
  ASSERT_EQ(cluster.ctl("alice", {"cancel", hog}).code, 0);

  auto held = [&](const std::string& app) {
    return cluster.sql("SELECT group_concat(gpu) FROM (SELECT gpu FROM leases_active WHERE app = " + app + " ORDER BY gpu)");
  };
  const bool both = cluster.wait_for([&] {
    first.pump();
    second.pump();
    return cluster.sql("SELECT count(DISTINCT app) FROM leases_active WHERE app IN (" + a + ", " + b + ")") == "2";
  }, 30s);
  ASSERT_TRUE(both) << "leases: " << cluster.sql("SELECT group_concat(app || ':' || gpu, ' ') FROM leases_active") << "\n"
                    << cluster.sql("SELECT group_concat(outcome, '\n') FROM rounds") << "\n"
                    << read_text(cluster.coordinator_log());
  const std::string round = cluster.sql("SELECT max(round_id) FROM bids WHERE app_id = " + a);
  const std::string winners =
      cluster.sql("SELECT json_array_length(json_extract(outcome, '$.auction_winners')) FROM rounds WHERE id = " + round);
  EXPECT_EQ(winners, "2") << cluster.sql("SELECT outcome FROM rounds WHERE id = " + round);
  // The bids table shows the scope the launcher sent (2: machine).
  EXPECT_EQ(cluster.sql("SELECT json_extract(bid_rows, '$[0].scope') FROM bids WHERE app_id = " + a + " AND round_id = " + round), "2");
  // Two GPUs each, disjoint, all four of the machine.
  std::set<std::string> gpus;
  for (const std::string& app : {a, b}) {
    const std::string list = held(app);
    EXPECT_EQ(std::count(list.begin(), list.end(), ',') + 1, 2) << "app " << app << " holds " << list;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      gpus.insert(list.substr(start, comma - start));
      start = comma + 1;
    }
  }
  EXPECT_EQ(gpus, (std::set<std::string>{"0", "1", "2", "3"}));

  // The round records keep the rows' scopes: every round replays to the plan the coordinator applied.
  arbiter::policies::PolicySettings settings;  // the coordinator's, as its configuration above builds it
  settings.filter_f = 0;
  settings.filter = "fixed";
  settings.lease = 60;
  const int replayed = expect_recorded_rounds_replay(cluster, settings);
  EXPECT_GE(replayed, 2);
}

}  // namespace
}  // namespace themis::testing
