// Same seed, same workload, same output, byte for byte; a different seed gives a different workload.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "policy/arbiter/policies/registry.h"
#include "core/cluster_presets.h"
#include "sim/metrics.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace themis::sim {
namespace {

std::string run_w2(const std::vector<PhillyJob>& philly, std::uint64_t seed, const std::string& policy_name) {
  const Cluster cluster(*cluster_preset("paper-testbed-64"));
  WorkloadOptions o;
  o.apps = 12;
  o.seed = seed;
  o.cluster_gpus = cluster.size();
  const auto apps = workload2(philly, o);
  auto policy = arbiter::policies::make_policy(policy_name);
  SimSettings s;
  s.seed = seed;
  const auto result = simulate(cluster, apps, *policy, s);
  return trace_to_jsonl(apps) + run_json(result, summarize(result, cluster.size()));
}

TEST(Determinism, SameSeedGivesIdenticalJson) {
  if (!std::filesystem::exists(THEMIS_PHILLY_CSV_PATH)) GTEST_SKIP() << "no Philly table at " << THEMIS_PHILLY_CSV_PATH;
  const auto philly = load_philly_csv(THEMIS_PHILLY_CSV_PATH);
  for (const std::string policy : {"themis", "gandiva", "slaq"}) {
    const std::string first = run_w2(philly, 3, policy);
    EXPECT_EQ(first, run_w2(philly, 3, policy)) << policy;
    EXPECT_NE(first, run_w2(philly, 4, policy)) << policy;
  }
}

// W1 seed 5 under Tiresias once held the clock at t = 21840.74 s for ever: an out-of-date expiry entry of
// a GPU leased again within the batch window was kept (its new job completes within the new lease) and
// stayed the next event. The simulator now drops entries that are not the GPU's current lease, and
// throws rather than loops if an event at the current instant is left unhandled.
TEST(Determinism, OutOfDateExpiryEntriesDoNotHoldTheClock) {
  if (!std::filesystem::exists(THEMIS_PHILLY_CSV_PATH)) GTEST_SKIP() << "no Philly table at " << THEMIS_PHILLY_CSV_PATH;
  const auto philly = load_philly_csv(THEMIS_PHILLY_CSV_PATH);
  const Cluster cluster(*cluster_preset("paper-256"));
  WorkloadOptions o;
  o.seed = 5;
  o.cluster_gpus = cluster.size();
  const auto apps = workload1(philly, o);
  auto policy = arbiter::policies::make_policy("tiresias");
  SimSettings s;
  s.seed = 5;
  const SimResult result = simulate(cluster, apps, *policy, s);
  EXPECT_TRUE(std::all_of(result.apps.begin(), result.apps.end(), [](const AppResult& a) { return a.finished; }));
}

// A node cap on the solver (themis-sim --solver-max-nodes) keeps a run reproducible and shows what it cost: the
// auctions it stopped before proving their optimum are counted, with the largest gap. Without the cap (and
// with the exact searches first, the default) every auction of the same workload is proven.
TEST(Determinism, AuctionsStoppedAtTheNodeCapAreCounted) {
  if (!std::filesystem::exists(THEMIS_PHILLY_CSV_PATH)) GTEST_SKIP() << "no Philly table at " << THEMIS_PHILLY_CSV_PATH;
  const auto philly = load_philly_csv(THEMIS_PHILLY_CSV_PATH);
  const Cluster cluster(*cluster_preset("paper-testbed-64"));
  WorkloadOptions o;
  o.apps = 30;
  o.seed = 2;
  o.cluster_gpus = cluster.size();
  const auto apps = workload2(philly, o);
  auto run = [&](long long small_search_nodes, long long solver_max_nodes) {
    arbiter::policies::PolicySettings ps;
    ps.small_search_nodes = small_search_nodes;
    ps.solver_max_nodes = solver_max_nodes;
    auto policy = arbiter::policies::make_policy("themis", ps);
    SimSettings s;
    s.seed = 2;
    return simulate(cluster, apps, *policy, s).stats;
  };
  const SimStats capped = run(0, 1);
  EXPECT_GT(capped.auctions_unproven, 0);
  EXPECT_GT(capped.max_auction_gap, 0);
  const SimStats exact = run(20000, 200000);
  EXPECT_GT(exact.auctions, 0);
  EXPECT_EQ(exact.auctions_unproven, 0);
  EXPECT_EQ(exact.max_auction_gap, 0);
}

TEST(Workloads, Workload1HasThePaperShape) {
  if (!std::filesystem::exists(THEMIS_PHILLY_CSV_PATH)) GTEST_SKIP() << "no Philly table";
  const auto philly = load_philly_csv(THEMIS_PHILLY_CSV_PATH);
  WorkloadOptions o;
  o.apps = 200;
  const auto apps = workload1(philly, o);
  ASSERT_EQ(apps.size(), 200u);
  int single = 0;
  for (const AppSpec& a : apps) {
    if (a.jobs.size() == 1) ++single;
    for (const JobSpec& j : a.jobs) EXPECT_LE(j.gpus, 2);
  }
  EXPECT_GT(single, 5);   // ~10% of 200
  EXPECT_LT(single, 40);
}

TEST(Workloads, PhillyRowErrorsNameLineAndField) {
  const auto path = std::filesystem::temp_directory_path() / "themis_sim_bad_philly.csv";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,0,66.0,x\n", f);
    std::fclose(f);
  }
  try {
    load_philly_csv(path);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ":2: num_gpus: must be a positive integer");
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace themis::sim
