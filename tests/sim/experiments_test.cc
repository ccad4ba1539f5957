// The microbenchmark set-ups: shrunk clusters (Fig 14), the network-intensive fraction (Figs 15-16),
// estimate errors (Fig 17) and the lying app (Fig 18).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "core/cluster_presets.h"
#include "sim/experiments.h"
#include "sim/model_catalog.h"
#include "sim/sim_app.h"
#include "sim/workload.h"

namespace themis::sim {
namespace {

TEST(ShrinkCluster, KeepsEveryKthMachineOfEachKind) {
  const ClusterSpec full = *cluster_preset("paper-256");
  EXPECT_EQ(Cluster(shrink_cluster(full, 1)).size(), 256);
  EXPECT_EQ(Cluster(shrink_cluster(full, 2)).size(), 12 * 8 + 5 * 4 + 14);  // 130
  EXPECT_EQ(Cluster(shrink_cluster(full, 4)).size(), 6 * 8 + 3 * 4 + 7);    // 67
  EXPECT_THROW(shrink_cluster(full, 0), std::invalid_argument);
}

TEST(TruthTelling, ClusterAndApps) {
  const Cluster cluster(truth_telling_cluster());
  EXPECT_EQ(cluster.size(), 64);
  EXPECT_EQ(cluster.locality(std::vector<GpuIndex>{0, 7}), Locality::kSameMachine);
  EXPECT_EQ(cluster.locality(std::vector<GpuIndex>{7, 8}), Locality::kSameRack);
  const auto apps = truth_telling_workload();
  ASSERT_EQ(apps.size(), 8u);
  for (const AppSpec& a : apps) {
    ASSERT_EQ(a.jobs.size(), 2u);
    for (const JobSpec& j : a.jobs) {
      EXPECT_EQ(j.gpus, 8);
      EXPECT_EQ(j.model, "VGG16");
      EXPECT_EQ(j.iterations, apps[0].jobs[0].iterations);
    }
  }
}

double first_row_rho(const AppSettings& settings, std::vector<GpuIndex> offer) {
  const Cluster cluster(truth_telling_cluster());
  SimApp app(0, truth_telling_workload()[0], cluster, settings, 1);
  const Bid bid = app.bid(Offer{1, offer});
  for (const BidRow& row : bid.rows)
    if (row.gpus.size() == offer.size()) return row.rho;
  ADD_FAILURE() << "no row with all offered GPUs";
  return 0;
}

TEST(Lie, LiarInflatesOnlySpreadRows) {
  AppSettings truthful;
  AppSettings lying;
  lying.liar = 0;
  lying.lie = 0.5;
  const std::vector<GpuIndex> dense = {0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<GpuIndex> spread = {8, 9, 10, 11, 12, 13, 14, 15};
  EXPECT_NEAR(first_row_rho(lying, dense), first_row_rho(truthful, dense), 1e-9);
  EXPECT_NEAR(first_row_rho(lying, spread), first_row_rho(truthful, spread) * 1.5, 1e-9);
}

TEST(Lie, TheLiarIsChosenByNameIndexOrAtRandomAmongGangApps) {
  std::vector<AppSpec> apps = truth_telling_workload();
  apps[0].jobs = {apps[0].jobs[0]};
  apps[0].jobs[0].gpus = 1;  // a one-GPU app: a lie about spread placements changes nothing for it
  apps[5].name = "vgg-five";
  EXPECT_EQ(choose_liar(apps, "vgg-five", 1), 5);
  EXPECT_EQ(choose_liar(apps, "3", 1), 3);
  std::set<AppId> drawn;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) drawn.insert(choose_liar(apps, "random", seed));
  EXPECT_EQ(drawn.count(0), 0u);
  EXPECT_GE(drawn.size(), 5u);  // not always the same app
  EXPECT_EQ(choose_liar(apps, "random", 7), choose_liar(apps, "random", 7));
  EXPECT_THROW(choose_liar(apps, "8", 1), std::invalid_argument);
  EXPECT_THROW(choose_liar(apps, "nobody", 1), std::invalid_argument);
}

TEST(Lie, EffectRanksTheLiarsChangeAmongTheTruthfulApps) {
  // Truthful run: every app 100 s. Lying run: the liar 90 s (-10%); truthful apps -20%, -5%, +0%, +30%.
  const std::map<AppId, Seconds> first = {{0, 100}, {1, 100}, {2, 100}, {3, 100}, {4, 100}};
  std::vector<AppResult> apps(5);
  const Seconds jct[] = {90, 80, 95, 100, 130};
  for (int i = 0; i < 5; ++i) {
    apps[static_cast<std::size_t>(i)].id = i;
    apps[static_cast<std::size_t>(i)].jct = jct[i];
  }
  const LieEffect e = lie_effect(apps, 0, first);
  EXPECT_DOUBLE_EQ(e.others_gained_more, 0.25);       // only app 1 fell by more than 10%
  EXPECT_NEAR(e.others_median_abs_change, 0.2, 1e-12);  // |changes| 0.2, 0.05, 0, 0.3: the upper median

  EXPECT_EQ(lie_effect(apps, 7, first).others_gained_more, -1);  // no liar among the apps
  EXPECT_EQ(lie_effect(apps, 0, {}).others_gained_more, -1);     // nothing to compare with
}

TEST(EstimateError, StaysWithinTheBoundAndVariesByApp) {
  const Cluster cluster(truth_telling_cluster());
  const AppSpec spec = truth_telling_workload()[0];
  AppSettings exact;
  AppSettings noisy;
  noisy.estimate_error = 0.2;
  const Seconds truth = SimApp(0, spec, cluster, exact, 1).remaining_service();
  bool differs = false;
  for (AppId id = 0; id < 8; ++id) {
    const Seconds estimate = SimApp(id, spec, cluster, noisy, 1).remaining_service();
    EXPECT_LE(std::abs(estimate / truth - 1), 0.2 + 1e-12);
    differs = differs || std::abs(estimate - truth) > 1e-6 * truth;
  }
  EXPECT_TRUE(differs);
}

TEST(NetworkFraction, PicksTheModelClass) {
  if (!std::filesystem::exists(THEMIS_PHILLY_CSV_PATH)) GTEST_SKIP() << "no Philly table";
  const auto philly = load_philly_csv(THEMIS_PHILLY_CSV_PATH);
  WorkloadOptions o;
  o.apps = 20;
  for (double f : {0.0, 1.0}) {
    o.network_fraction = f;
    for (const AppSpec& a : workload2(philly, o)) {
      const double s = a.jobs[0].slowdown[static_cast<std::size_t>(Locality::kSameRack)];
      if (f == 0.0) EXPECT_EQ(s, 1.0) << a.jobs[0].model;
      else EXPECT_GE(s, 1.15) << a.jobs[0].model;
    }
  }
}

TEST(Workload2, TakesWorkload1sArrivalTimesWhenAsked) {
  // The paper: W2's "app arrival times from Workload 1" (§6.1). By default W2 compresses the same
  // submissions to its own (smaller) work, so its arrivals come closer together than W1's.
  if (!std::filesystem::exists(THEMIS_PHILLY_CSV_PATH)) GTEST_SKIP() << "no Philly table";
  const auto philly = load_philly_csv(THEMIS_PHILLY_CSV_PATH);
  WorkloadOptions o;
  o.apps = 30;
  o.seed = 3;
  const auto w1 = workload1(philly, o);
  const auto own = workload2(philly, o);
  o.w2_arrivals_from_w1 = true;
  const auto from_w1 = workload2(philly, o);
  ASSERT_EQ(w1.size(), from_w1.size());
  ASSERT_EQ(own.size(), from_w1.size());
  bool any_differs = false;
  for (std::size_t k = 0; k < w1.size(); ++k) {
    EXPECT_EQ(from_w1[k].arrival, w1[k].arrival) << k;
    EXPECT_EQ(from_w1[k].jobs.size(), own[k].jobs.size()) << k;  // only the arrivals change
    any_differs = any_differs || own[k].arrival != w1[k].arrival;
  }
  EXPECT_TRUE(any_differs);
}

}  // namespace
}  // namespace themis::sim
