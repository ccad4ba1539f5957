// Ties between equally good allocations under the shape solver: which concrete GPUs the winners get
// when their shapes leave a choice. Placement quality first (the app that needs the larger block gets
// it whole, so both end on whole machines), then the GPUs an app names (a renewal names the GPUs its
// job runs on, so it keeps them), never the app ids: each case runs with the ids both ways.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/rng.h"
#include "policy/arbiter/themis_policy.h"
#include "test_apps.h"

namespace themis::arbiter {
namespace {

// One 4-GPU machine (two slots of 2) and two 2-GPU machines, one rack.
Cluster tie_cluster() {
  ClusterSpec spec{"ties", {}};
  spec.machines.push_back({"m0", "r0", {2, 2}});
  spec.machines.push_back({"m1", "r0", {2}});
  spec.machines.push_back({"m2", "r0", {2}});
  return Cluster(spec);
}

// A placement-insensitive app: `named` GPUs at ρ 1, any GPUs of that count do as well.
testing::ScriptedApp insensitive_app(AppId id, std::vector<GpuIndex> named) {
  const int demand = static_cast<int>(named.size());
  return testing::ScriptedApp(id, 10.0, demand, [id, named](const Offer&) {
    return Bid{id, 10.0, {BidRow{named, 1.0, ShapeScope::kAnywhere}}};
  });
}

std::map<AppId, std::vector<GpuIndex>> run(const Cluster& cluster, std::vector<GpuIndex> offer,
                                           std::vector<AppModel*> apps) {
  ThemisSettings settings;
  settings.f = FilterFraction{0, 1};
  settings.solver = SolverKind::kShape;
  ThemisPolicy policy(settings);
  RoundInput input{&cluster, 1, 0, std::move(offer), {}, std::move(apps)};
  Rng rng(3);
  std::map<AppId, std::vector<GpuIndex>> kept;
  for (const auto& winner : policy.run_round(input, rng).auction.winners) kept[winner.app] = winner.kept;
  return kept;
}

TEST(ShapeTieBreak, TheLargerDemandGetsTheWholeMachineWhateverTheIds) {
  const Cluster cluster = tie_cluster();
  for (const bool big_first : {true, false}) {
    SCOPED_TRACE(big_first ? "4-GPU app has id 1" : "4-GPU app has id 2");
    const AppId big_id = big_first ? 1 : 2, small_id = big_first ? 2 : 1;
    // Both name GPUs of m0: as far as ρ goes they are indifferent.
    auto big = insensitive_app(big_id, {0, 1, 2, 3});
    auto small = insensitive_app(small_id, {0, 1});
    std::vector<AppModel*> apps = big_first ? std::vector<AppModel*>{&big, &small} : std::vector<AppModel*>{&small, &big};
    const auto kept = run(cluster, {0, 1, 2, 3, 4, 5, 6, 7}, apps);
    ASSERT_EQ(kept.size(), 2u);
    EXPECT_EQ(kept.at(big_id), (std::vector<GpuIndex>{0, 1, 2, 3}));
    EXPECT_EQ(cluster.locality(kept.at(small_id)), Locality::kSameSlot);
  }
}

TEST(ShapeTieBreak, AnAppKeepsTheGpusItNamesWhateverTheIds) {
  const Cluster cluster = tie_cluster();
  for (const bool on_m2_first : {true, false}) {
    SCOPED_TRACE(on_m2_first ? "the app on m2 has id 1" : "the app on m2 has id 2");
    const AppId on_m2 = on_m2_first ? 1 : 2, on_m1 = on_m2_first ? 2 : 1;
    auto a = insensitive_app(on_m2, {6, 7});  // its job runs on m2 (the lease expires this round)
    auto b = insensitive_app(on_m1, {4, 5});
    std::vector<AppModel*> apps = on_m2_first ? std::vector<AppModel*>{&a, &b} : std::vector<AppModel*>{&b, &a};
    const auto kept = run(cluster, {4, 5, 6, 7}, apps);
    ASSERT_EQ(kept.size(), 2u);
    EXPECT_EQ(kept.at(on_m2), (std::vector<GpuIndex>{6, 7}));
    EXPECT_EQ(kept.at(on_m1), (std::vector<GpuIndex>{4, 5}));
  }
}

TEST(ShapeTieBreak, AShapeWhoseNamedGpusAreTakenFillsTheSmallestBlockThatHoldsIt) {
  // GPUs 0-3 on m0, 4-5 on m1, 6 on m2 (7 busy). Two 1-GPU apps both name GPU 6, which the bidder library
  // names because it is the fullest machine's; one gets it, the other lands on m1, so that m0 stays whole.
  const Cluster cluster = tie_cluster();
  for (const bool first_is_1 : {true, false}) {
    SCOPED_TRACE(first_is_1 ? "app 1 bids first" : "app 2 bids first");
    auto a = insensitive_app(1, {6});
    auto b = insensitive_app(2, {6});
    std::vector<AppModel*> apps = first_is_1 ? std::vector<AppModel*>{&a, &b} : std::vector<AppModel*>{&b, &a};
    const auto kept = run(cluster, {0, 1, 2, 3, 4, 5, 6}, apps);
    ASSERT_EQ(kept.size(), 2u);
    std::vector<GpuIndex> both = {kept.at(1).at(0), kept.at(2).at(0)};
    std::sort(both.begin(), both.end());
    EXPECT_EQ(both.back(), 6);
    EXPECT_EQ(cluster.gpu(both.front()).machine, 1) << "GPU " << both.front() << " breaks up m0";
  }
}

}  // namespace
}  // namespace themis::arbiter
