// Every policy on a tiny mixed scenario finishes every app, keeps every GPU either granted or idle,
// and never double-books a GPU (the simulator throws if it does).
#include <gtest/gtest.h>

#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/themis_policy.h"
#include "core/cluster_presets.h"
#include "sim/simulator.h"

namespace themis::sim {
namespace {

std::vector<AppSpec> tiny_workload() {
  return parse_trace(
      R"({"name":"a","arrival":0,"jobs":[{"model":"VGG16","gpus":4,"serial_iter_time":1,"iterations":3000}]}
{"name":"b","arrival":10,"jobs":[{"model":"LangModel","gpus":2,"serial_iter_time":0.5,"iterations":4000},{"model":"LangModel","gpus":1,"serial_iter_time":0.5,"iterations":2000}]}
{"name":"c","arrival":50,"scheme":"successive_halving","max_job_gpus":4,"jobs":[{"model":"Transformer","gpus":1,"serial_iter_time":1,"iterations":300},{"model":"Transformer","gpus":1,"serial_iter_time":1.2,"iterations":300},{"model":"Transformer","gpus":1,"serial_iter_time":0.8,"iterations":300},{"model":"Transformer","gpus":1,"serial_iter_time":1,"iterations":300,"loss":{"a":2,"b":0.5,"c":0}}]}
{"name":"d","arrival":700,"jobs":[{"model":"Inception-v3","gpus":8,"serial_iter_time":2,"iterations":2000}]}
)",
      "tiny");
}

class EveryPolicy : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryPolicy, FinishesAllApps) {
  const Cluster cluster(*cluster_preset("paper-testbed-64"));
  auto policy = arbiter::policies::make_policy(GetParam());
  SimSettings settings;
  const SimResult result = simulate(cluster, tiny_workload(), *policy, settings);
  ASSERT_EQ(result.apps.size(), 4u);
  for (const AppResult& a : result.apps) {
    EXPECT_TRUE(a.finished) << a.name;
    EXPECT_GT(a.jct, 0) << a.name;
    EXPECT_GT(a.gpu_time, 0) << a.name;
    EXPECT_GT(a.rho, 0) << a.name;
    EXPECT_LE(a.placement_score, 1.0) << a.name;
  }
  EXPECT_GT(result.stats.rounds, 0);
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryPolicy, ::testing::ValuesIn(arbiter::policies::policy_names()),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(Registry, UnknownPolicyListsKnownOnes) {
  try {
    arbiter::policies::make_policy("drf");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown policy 'drf' (known: themis, gandiva"), std::string::npos) << e.what();
  }
}

// PolicySettings::solver reaches the Themis policy (themis-sim --solver, the coordinator's `solver`), and each
// solver finishes the tiny workload.
TEST(Registry, ThemisTakesTheNamedSolver) {
  const Cluster cluster(*cluster_preset("paper-testbed-64"));
  const std::pair<std::string, arbiter::SolverKind> solvers[] = {
      {"cbc", arbiter::SolverKind::kCbc}, {"shape", arbiter::SolverKind::kShape}, {"bnb", arbiter::SolverKind::kBranchAndBound}};
  for (const auto& [name, kind] : solvers) {
    arbiter::policies::PolicySettings settings;
    settings.solver = name;
    auto policy = arbiter::policies::make_policy("themis", settings);
    const auto* themis = dynamic_cast<const arbiter::ThemisPolicy*>(policy.get());
    ASSERT_NE(themis, nullptr);
    EXPECT_EQ(themis->settings().solver, kind) << name;
    // Unset, the small searches' cap follows the solver: short before shape, long before the LP solvers.
    EXPECT_EQ(themis->settings().small_search_cap(), kind == arbiter::SolverKind::kShape ? 2000 : 20000) << name;
    const SimResult result = simulate(cluster, tiny_workload(), *policy, SimSettings{});
    for (const AppResult& a : result.apps) EXPECT_TRUE(a.finished) << name << " " << a.name;
  }
  arbiter::policies::PolicySettings capped;
  capped.solver = "shape";
  capped.small_search_nodes = 0;  // named, it holds whatever the solver
  auto off = arbiter::policies::make_policy("themis", capped);
  EXPECT_EQ(dynamic_cast<const arbiter::ThemisPolicy&>(*off).settings().small_search_cap(), 0);
  arbiter::policies::PolicySettings bad;
  bad.solver = "gurobi";
  try {
    arbiter::policies::make_policy("themis", bad);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown solver 'gurobi' (cbc, shape, bnb)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace themis::sim
