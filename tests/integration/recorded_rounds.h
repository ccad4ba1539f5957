#pragma once
// Replays every round the test cluster's coordinator recorded (round_records) through a Themis policy with
// `settings` and expects each to give the plan the coordinator applied. Returns how many were replayed.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "policy/arbiter/policies/registry.h"
#include "policy/planner/round_planner.h"
#include "policy/planner/round_record.h"
#include "tests/integration/test_cluster.h"

namespace themis::testing {

inline int expect_recorded_rounds_replay(TestCluster& cluster, const arbiter::policies::PolicySettings& settings) {
  std::istringstream ids(cluster.sql("SELECT group_concat(round_id, ' ') FROM round_records"));
  int replayed = 0;
  for (std::string id; ids >> id; ++replayed) {
    SCOPED_TRACE("round " + id);
    auto column = [&](const char* name) {
      return nlohmann::json::parse(cluster.sql(std::string("SELECT ") + name + " FROM round_records WHERE round_id = " + id));
    };
    const auto policy = arbiter::policies::make_policy("themis", settings);
    const planner::RoundPlan plan = planner::replay_round(column("opened"), column("rng_state").get<std::array<std::uint64_t, 4>>(),
                                                         column("settled"), *policy);
    EXPECT_EQ(planner::plan_to_json(plan), column("plan"));
  }
  return replayed;
}

}  // namespace themis::testing
