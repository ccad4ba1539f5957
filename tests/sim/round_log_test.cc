// themis-sim run --round-log (sim/round_log.h): one JSON line per round with what the round saw and decided.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "policy/arbiter/policies/registry.h"
#include "sim/round_log.h"
#include "sim/simulator.h"

namespace themis::sim {
namespace {

// A lone app with one 4-GPU job on an empty 4-GPU machine: the first round offers it all four GPUs, it is
// the only bidder, wins them whole and pays nothing (c = 1: there is nobody else to charge it for).
TEST(RoundLog, ALoneAppsFirstRoundShowsItsBidItsWinAndItsGrant) {
  const Cluster cluster(ClusterSpec{"m", {{"m0", "r0", {4}}}});
  const auto apps = parse_trace(
      R"({"name":"solo","arrival":0,"jobs":[{"model":"x","gpus":4,"serial_iter_time":1,"iterations":4000,"slowdown":[1,1,1,1]}]})",
      "solo");
  auto themis = arbiter::policies::make_policy("themis");
  std::vector<nlohmann::json> lines;
  const SimResult result = simulate(cluster, apps, *themis, SimSettings{}, {},
                                    [&](const planner::RoundPlan& plan, std::span<const RoundLogApp> seen) {
                                      lines.push_back(nlohmann::json::parse(round_log_line(plan, seen)));
                                    });
  ASSERT_TRUE(result.apps[0].finished);
  ASSERT_EQ(static_cast<long long>(lines.size()), result.stats.rounds);
  ASSERT_FALSE(lines.empty());

  const nlohmann::json& first = lines.front();
  EXPECT_EQ(first["round"], 1);
  EXPECT_EQ(first["now"], 0.0);
  EXPECT_EQ(first["offered"], 4);
  ASSERT_EQ(first["apps"].size(), 1u);
  EXPECT_EQ(first["apps"][0]["app"], "solo");
  EXPECT_EQ(first["apps"][0]["held"], 0);
  EXPECT_EQ(first["apps"][0]["demand"], 4);
  ASSERT_EQ(first["bidders"].size(), 1u);
  EXPECT_EQ(first["bidders"][0]["app"], "solo");
  ASSERT_EQ(first["winners"].size(), 1u);
  EXPECT_EQ(first["winners"][0]["kept"], 4);
  EXPECT_DOUBLE_EQ(first["winners"][0]["c"].get<double>(), 1.0);
  ASSERT_EQ(first["grants"].size(), 1u);
  EXPECT_EQ(first["grants"][0]["gpus"], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(first["grants"][0]["kind"], "auction");

  // 1000 s of work on 600 s leases: the lease ends once while the job runs, and the next round renews it to
  // the same app, which then holds nothing past the round (it bid without the GPUs whose lease ended).
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["round"], lines[i - 1]["round"].get<int>() + 1);
    EXPECT_GE(lines[i]["now"].get<double>(), lines[i - 1]["now"].get<double>());
  }
  ASSERT_GE(lines.size(), 2u);
  EXPECT_NEAR(lines[1]["now"].get<double>(), 600, 60);  // within the batching window before the expiry
  EXPECT_EQ(lines[1]["apps"][0]["held"], 0);
  EXPECT_EQ(lines[1]["grants"][0]["app"], "solo");
}

}  // namespace
}  // namespace themis::sim
