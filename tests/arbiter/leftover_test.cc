#include "policy/arbiter/leftover.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "test_apps.h"

namespace themis::arbiter {
namespace {

const Cluster kCluster = testing::make_cluster(2, 2, 2, 2);  // GPUs 0..7; machine 0 = 0..3

TEST(Leftover, NonBiddersFirstAtMostTheirDemandInOnePiece) {
  Rng rng(3);
  const auto result = distribute_leftover(kCluster, {0, 1, 2, 4, 5, 6}, {{10, 2}, {11, 3}, {12, 0}}, {{20, 5}}, rng);
  std::map<AppId, std::vector<GpuIndex>> got;
  for (const auto& g : result.grants) {
    EXPECT_EQ(g.kind, GrantKind::kLeftover);
    got[g.app] = g.gpus;
  }
  ASSERT_EQ(got.count(10), 1u);
  ASSERT_EQ(got.count(11), 1u);
  EXPECT_EQ(got.count(12), 0u);
  EXPECT_EQ(got[10].size(), 2u);
  EXPECT_EQ(got[11].size(), 3u);
  EXPECT_EQ(kCluster.locality(got[11]), Locality::kSameMachine);  // 3 of one machine's 3 free
  ASSERT_EQ(got.count(20), 1u);  // the bidder takes what no non-bidder wanted
  EXPECT_EQ(got[20].size(), 1u);
  EXPECT_TRUE(result.idle.empty());
}

TEST(Leftover, IdleWithReasonWhenNobodyWants) {
  Rng rng(3);
  const auto result = distribute_leftover(kCluster, {0, 1, 2}, {{10, 1}}, {}, rng);
  ASSERT_EQ(result.grants.size(), 1u);
  ASSERT_EQ(result.idle.size(), 2u);
  for (const auto& idle : result.idle) EXPECT_FALSE(idle.reason.empty());
  const auto none = distribute_leftover(kCluster, {0, 1}, {{10, 0}}, {}, rng);
  ASSERT_EQ(none.idle.size(), 2u);
  EXPECT_NE(none.idle[0].reason.find("no active app"), std::string::npos);
}

TEST(Leftover, RandomOrderIsSeeded) {
  std::set<AppId> first_served;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Rng a(seed), b(seed);
    const auto ra = distribute_leftover(kCluster, {0}, {{1, 1}, {2, 1}, {3, 1}}, {}, a);
    const auto rb = distribute_leftover(kCluster, {0}, {{1, 1}, {2, 1}, {3, 1}}, {}, b);
    ASSERT_EQ(ra.grants.size(), 1u);
    EXPECT_EQ(ra.grants[0].app, rb.grants[0].app);
    first_served.insert(ra.grants[0].app);
  }
  EXPECT_EQ(first_served.size(), 3u);  // every app can be the lucky one
}

// Issue 13: an app whose job is wider than the leftover took all of it and could use none. Hand-checked:
// 4 GPUs left; app 10 needs 8 per job (gets nothing), app 11 wants 4 of 2-GPU jobs (gets 4).
TEST(Leftover, AnAppWhoseJobDoesNotFitGetsNothingAndOthersGetTheGpus) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {  // whatever the random order, the wide app gets none
    Rng rng(seed);
    const auto result = distribute_leftover(kCluster, {0, 1, 2, 3}, {{10, 8, 8}, {11, 4, 2}}, {}, rng);
    ASSERT_EQ(result.grants.size(), 1u) << seed;
    EXPECT_EQ(result.grants[0].app, 11);
    EXPECT_EQ(result.grants[0].gpus, (std::vector<GpuIndex>{0, 1, 2, 3}));
    EXPECT_TRUE(result.idle.empty());
  }
}

TEST(Leftover, GpusNobodyCanUseAsAWholeJobStayIdleWithTheReason) {
  Rng rng(1);
  const auto result = distribute_leftover(kCluster, {0, 1, 2, 3}, {{10, 8, 8}}, {{20, 6, 6}}, rng);
  EXPECT_TRUE(result.grants.empty());
  ASSERT_EQ(result.idle.size(), 4u);
  EXPECT_EQ(result.idle[0].reason, "4 left, fewer than one whole job of any app that wants more (the narrowest needs 6)");
}

// Whole jobs only: 5 GPUs left, 2-GPU jobs, demand 6 -> 4 GPUs (two jobs), and the fifth goes to the
// one-GPU app; a demand of 3 with 2-GPU jobs is one job (2 GPUs).
TEST(Leftover, GrantsAreWholeJobs) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    const auto result = distribute_leftover(kCluster, {0, 1, 2, 3, 4}, {{10, 6, 2}}, {{20, 3, 1}}, rng);
    std::map<AppId, std::size_t> got;
    for (const auto& g : result.grants) got[g.app] = g.gpus.size();
    EXPECT_EQ(got[10], 4u) << seed;
    EXPECT_EQ(got[20], 1u) << seed;
    EXPECT_TRUE(result.idle.empty());
  }
  Rng rng(1);
  const auto odd = distribute_leftover(kCluster, {0, 1, 2, 3}, {{10, 3, 2}}, {}, rng);
  ASSERT_EQ(odd.grants.size(), 1u);
  EXPECT_EQ(odd.grants[0].gpus.size(), 2u);
  EXPECT_EQ(odd.idle.size(), 2u);
}

// An app whose jobs run 8x slower across machines (placement score 1/8 on a set spanning two).
testing::ScriptedApp spread_averse(AppId id, int demand, int width, const Cluster& cluster) {
  testing::ScriptedApp app(id, 2.0, demand);
  app.set_gpus_per_job(width);
  app.set_placement_score([&cluster](std::span<const GpuIndex> gpus) {
    std::set<int> machines;
    for (GpuIndex g : gpus) machines.insert(cluster.gpu(g).machine);
    return machines.size() > 1 ? 0.125 : 1.0;
  });
  return app;
}

// Issue 13 ("leftover is never spread over apps that cannot use it"): a 4-GPU gang 8x slower across machines is
// not given two GPUs of each machine while a machine could hold it; a placement-insensitive app takes them.
TEST(Leftover, AGangIsNotGivenASetItWouldRunAtUnderHalfSpeed) {
  const testing::ScriptedApp gang = spread_averse(10, 4, 4, kCluster);
  Rng rng(1);
  const auto alone = distribute_leftover(kCluster, {2, 3, 4, 5}, {{10, 4, 4, &gang}}, {}, rng);
  EXPECT_TRUE(alone.grants.empty());
  ASSERT_EQ(alone.idle.size(), 4u);
  EXPECT_EQ(alone.idle[0].reason, "4 left, placed so that the 1 app(s) that want them would run at under 50% of their speed");
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Rng order(seed);
    const auto shared = distribute_leftover(kCluster, {2, 3, 4, 5}, {{10, 4, 4, &gang}, {11, 4, 2}}, {}, order);
    ASSERT_EQ(shared.grants.size(), 1u) << seed;
    EXPECT_EQ(shared.grants[0].app, 11);
    EXPECT_EQ(shared.grants[0].gpus, (std::vector<GpuIndex>{2, 3, 4, 5}));
  }
}

// Fewer whole jobs, better placed: two 8-GPU machines with four free GPUs each; an app of two 4-GPU jobs,
// 8x slower across machines (scored here on the whole set), gets one machine's four, not all eight.
TEST(Leftover, ASpreadAverseAppGetsFewerJobsOnOneMachine) {
  const Cluster two_eights = testing::make_cluster(2, 4, 2, 2);  // machine 0 = GPUs 0..7
  const testing::ScriptedApp gang = spread_averse(10, 8, 4, two_eights);
  Rng rng(1);
  const auto result = distribute_leftover(two_eights, {0, 1, 2, 3, 8, 9, 10, 11}, {{10, 8, 4, &gang}}, {}, rng);
  ASSERT_EQ(result.grants.size(), 1u);
  EXPECT_EQ(result.grants[0].gpus.size(), 4u);
  EXPECT_EQ(two_eights.locality(result.grants[0].gpus), Locality::kSameMachine);
  EXPECT_EQ(result.idle.size(), 4u);
}

// Where no machine could hold the gang (one GPU per server), a spread set is as good as any: it is given.
TEST(Leftover, ASpreadSetIsGivenWhereNoBetterSetExists) {
  const Cluster servers = testing::make_cluster(4, 1, 1, 4);
  const testing::ScriptedApp gang = spread_averse(10, 4, 4, servers);
  Rng rng(1);
  const auto result = distribute_leftover(servers, {0, 1, 2, 3}, {{10, 4, 4, &gang}}, {}, rng);
  ASSERT_EQ(result.grants.size(), 1u);
  EXPECT_EQ(result.grants[0].gpus, (std::vector<GpuIndex>{0, 1, 2, 3}));
}

// An app of a 2-GPU and a 3-GPU gang (it can use 2, 3 or 5 more GPUs; gpus_per_job 1, as themis-sim's apps
// report) is given 3 of 4 leftover GPUs, not all 4 with one it cannot use. Having won 2 in the auction (its
// 2-GPU gang), it is given the 3 its other gang needs where 3 are left, and nothing where 2 are.
TEST(Leftover, AnAppIsGivenOnlyACountItsGangsCanUse) {
  testing::ScriptedApp app(10, 2.0, 5);
  app.set_usable_extra([](int gpus) {
    int best = 0;
    for (int sum : {2, 3, 5})
      if (sum <= gpus) best = sum;
    return best;
  });
  Rng rng(1);
  const auto fresh = distribute_leftover(kCluster, {0, 1, 2, 3}, {{10, 5, 1, &app}}, {}, rng);
  ASSERT_EQ(fresh.grants.size(), 1u);
  EXPECT_EQ(fresh.grants[0].gpus.size(), 3u);
  ASSERT_EQ(fresh.idle.size(), 1u);
  EXPECT_EQ(fresh.idle[0].reason, "every app that wants GPUs got all it can use");

  const auto three_left = distribute_leftover(kCluster, {4, 5, 6}, {}, {{10, 3, 1, &app, 2}}, rng);
  ASSERT_EQ(three_left.grants.size(), 1u);
  EXPECT_EQ(three_left.grants[0].gpus, (std::vector<GpuIndex>{4, 5, 6}));
  const auto two_left = distribute_leftover(kCluster, {4, 5}, {}, {{10, 3, 1, &app, 2}}, rng);
  EXPECT_TRUE(two_left.grants.empty());
  ASSERT_EQ(two_left.idle.size(), 2u);
  EXPECT_EQ(two_left.idle[0].reason, "2 left, fewer than one whole job of any app that wants more (the narrowest needs 3)");
}

}  // namespace
}  // namespace themis::arbiter
