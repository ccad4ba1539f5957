// Golden scenarios: every tests/scenarios/NNNN_name.scenario runs under its policies and every JCT in
// the matching .expected file (computed by hand in the scenario's comments) must come out.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "policy/arbiter/policies/registry.h"
#include "sim/scenario.h"
#include "sim/simulator.h"

namespace themis::sim {
namespace {

std::vector<std::filesystem::path> scenario_files() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(THEMIS_SCENARIO_DIR))
    if (e.path().extension() == ".scenario") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Scenarios, ThereAreAtLeastTwo) { EXPECT_GE(scenario_files().size(), 2u); }

TEST(Scenarios, EachMatchesItsExpectedJcts) {
  for (const auto& path : scenario_files()) {
    SCOPED_TRACE(path.filename().string());
    const Scenario scenario = load_scenario(path);
    auto expected_path = path;
    expected_path.replace_extension(".expected");
    const auto expected = load_expected(expected_path);
    ASSERT_FALSE(expected.empty());
    const Cluster cluster(scenario.cluster);
    std::map<std::pair<std::string, std::string>, Seconds> jct;
    for (const std::string& name : scenario.policies) {
      arbiter::policies::PolicySettings ps;
      ps.lease = scenario.lease;
      auto policy = arbiter::policies::make_policy(name, ps);
      SimSettings settings;
      settings.lease = scenario.lease;
      const SimResult result = simulate(cluster, scenario.apps, *policy, settings);
      for (const AppResult& a : result.apps) {
        EXPECT_TRUE(a.finished) << name << " " << a.name;
        jct[{name, a.name}] = a.jct;
      }
    }
    for (const ExpectedJct& e : expected) {
      auto it = jct.find({e.policy, e.app});
      ASSERT_NE(it, jct.end()) << e.policy << " " << e.app << " was not run";
      EXPECT_NEAR(it->second, e.jct, 1e-6 * std::max(1.0, e.jct)) << e.policy << " " << e.app;
    }
  }
}

TEST(Scenarios, BadDirectiveNamesFileAndLine) {
  try {
    parse_scenario("# x\ncluster: m0=four\n", "s.scenario");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(), "s.scenario:2: cluster: expected name=GPUs, got 'm0=four'");
  }
}

}  // namespace
}  // namespace themis::sim
