// The ranking key's N_avg over an app's whole life (docs/bidder.md, "N_avg ahead"), through the simulator: before
// each round it tells every app how many apps it will share the cluster with over the rest of its life, counted
// from the apps present now, each until its own expected finish; the round log shows the keys the filter ranked by.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>

#include "policy/arbiter/policies/registry.h"
#include "sim/round_log.h"
#include "sim/simulator.h"

namespace themis::sim {
namespace {

// The first round's ranking key (current ρ) of each app, by name.
std::map<std::string, double> first_round_keys(bool contention_ahead) {
  const Cluster cluster(ClusterSpec{"m", {{"m0", "r0", {4}}}});
  std::string trace;
  for (const auto& [name, iterations] : {std::pair{"short", 500}, std::pair{"long", 2000}}) {
    std::string jobs;
    for (int j = 0; j < 4; ++j)
      jobs += std::string(j ? "," : "") + R"({"model":"x","gpus":1,"serial_iter_time":1,"iterations":)" +
              std::to_string(iterations) + R"(,"slowdown":[1,1,1,1]})";
    trace += std::string(R"({"name":")") + name + R"(","arrival":0,"jobs":[)" + jobs + "]}\n";
  }
  auto themis = arbiter::policies::make_policy("themis");
  SimSettings settings;
  settings.contention_ahead = contention_ahead;
  std::map<std::string, double> keys;
  simulate(cluster, parse_trace(trace, "two apps"), *themis, settings, {},
           [&](const planner::RoundPlan& plan, std::span<const RoundLogApp> seen) {
             if (!keys.empty()) return;
             const auto line = nlohmann::json::parse(round_log_line(plan, seen));
             for (const auto& app : line["apps"]) keys[app["app"].get<std::string>()] = app["rho"].get<double>();
           });
  return keys;
}

// Two apps of four one-GPU jobs on a 4-GPU machine, both at t = 0: "short" has 500 s per job, "long" 2,000 s. Among
// two apps the fair share is 2 GPUs: "short" needs 1,000 s on it, "long" 4,000 s. Each is ranked by ρ after one
// lease (600 s) on all four GPUs. By the count so far (N_avg 2) T_id is 2,000 / 2 = 1,000 s for "short" and 8,000 / 2
// = 4,000 s for "long". Ahead, "long" shares the cluster with "short" for 1,000 of its 4,000 s: N_avg 1 + 1,000 /
// 4,000 = 1.25 over its life, a share of 3.2 GPUs and T_id 8,000 / 3.2 = 2,500 s; "short" shares all of its 1,000 s
// (N_avg 2, T_id unchanged).
TEST(ContentionAhead, TheRankingKeyCountsTheContentionOverTheRestOfEachAppsLife) {
  const auto past = first_round_keys(false);
  ASSERT_EQ(past.size(), 2u);
  EXPECT_NEAR(past.at("short"), (600.0 + 500.0) / 1000.0, 1e-9);
  EXPECT_NEAR(past.at("long"), (600.0 + 2000.0) / 4000.0, 1e-9);
  const auto ahead = first_round_keys(true);
  ASSERT_EQ(ahead.size(), 2u);
  EXPECT_NEAR(ahead.at("short"), (600.0 + 500.0) / 1000.0, 1e-9);
  EXPECT_NEAR(ahead.at("long"), (600.0 + 2000.0) / 2500.0, 1e-9) << "further behind than the count so far says";
}

}  // namespace
}  // namespace themis::sim
