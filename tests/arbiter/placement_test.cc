#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "policy/arbiter/placement.h"
#include "policy/arbiter/whole_gpus.h"
#include "test_apps.h"

namespace themis::arbiter {
namespace {

// 4 machines × 4 slots × 2 GPUs, 2 machines per rack: machine m holds GPUs 8m .. 8m+7, slot s of a
// machine holds 2 consecutive GPUs.
const Cluster kCluster = testing::make_cluster(4, 4, 2, 2);

TEST(Placement, StaysInOneSlotThenMachineThenRack) {
  // bundle: GPU 0 (slot 0 alone), 2,3 (slot 1), 8..11 (machine 1), 16 (rack 1)
  const std::vector<GpuIndex> bundle{0, 2, 3, 8, 9, 10, 11, 16};
  EXPECT_EQ(kCluster.locality(most_local_subset(kCluster, bundle, 2, GroupPreference::kDensest)), Locality::kSameSlot);
  EXPECT_EQ(most_local_subset(kCluster, bundle, 4, GroupPreference::kDensest), (std::vector<GpuIndex>{8, 9, 10, 11}));
  const auto six = most_local_subset(kCluster, bundle, 6, GroupPreference::kDensest);
  EXPECT_EQ(kCluster.locality(six), Locality::kSameRack);
  EXPECT_EQ(six.size(), 6u);
  EXPECT_EQ(six, (std::vector<GpuIndex>{2, 3, 8, 9, 10, 11}));  // whole machine 1 part, then slot 1
  EXPECT_EQ(most_local_subset(kCluster, bundle, 8, GroupPreference::kDensest), bundle);
  EXPECT_EQ(most_local_subset(kCluster, bundle, 20, GroupPreference::kDensest), bundle);
}

TEST(Placement, BestFitLeavesLargeBlocks) {
  const std::vector<GpuIndex> pool{0, 1, 8, 9, 10, 11, 12, 13, 14, 15};  // slot 0 of m0, all of m1
  EXPECT_EQ(most_local_subset(kCluster, pool, 2, GroupPreference::kBestFit), (std::vector<GpuIndex>{0, 1}));
  EXPECT_EQ(most_local_subset(kCluster, pool, 2, GroupPreference::kDensest), (std::vector<GpuIndex>{8, 9}));
}

TEST(WholeGpus, NearestRounding) {
  EXPECT_EQ(nearest_kept_count(1.0, 4), 4);
  EXPECT_EQ(nearest_kept_count(0.5, 4), 2);
  EXPECT_EQ(nearest_kept_count(0.6, 4), 2);   // 2.4 + .5 -> 2
  EXPECT_EQ(nearest_kept_count(0.625, 4), 3); // 2.5 + .5 -> 3
  EXPECT_EQ(nearest_kept_count(0.01, 4), 1);  // at least one
  EXPECT_EQ(nearest_kept_count(0.3, 1), 1);
  EXPECT_EQ(nearest_kept_count(0.0, 4), 0);
}

// c from exp of a difference of logs lands a few ulps off a half; within 1e-9 (relative) it is the half.
TEST(WholeGpus, NearestRoundingToleratesLogSpaceError) {
  EXPECT_EQ(nearest_kept_count(std::exp(0.0 - std::log(0.4 / 0.3)), 2), 2);  // 0.7499999999999999
  EXPECT_EQ(nearest_kept_count(std::nextafter(0.625, 0.0), 4), 3);
  EXPECT_EQ(nearest_kept_count(0.75 * (1 - 1e-7), 2), 1);  // clearly below the half: rounds down
  EXPECT_EQ(nearest_kept_count(0.7499, 2), 1);
}

// A winner whose jobs are 4-GPU gangs: only 0, 4 and 8 GPUs put anything to work.
int four_gpu_gangs(int n) { return std::clamp(n, 0, 8) / 4 * 4; }

TEST(WholeGpus, NearestRoundingKeepsWholeGangs) {
  EXPECT_EQ(nearest_kept_count(0.8, 4, four_gpu_gangs), 4);   // 3.2: 3 GPUs would start nothing
  EXPECT_EQ(nearest_kept_count(0.3, 4, four_gpu_gangs), 4);   // 1.2: at least one gang, as at least one GPU
  EXPECT_EQ(nearest_kept_count(0.6, 8, four_gpu_gangs), 4);   // 4.8: 4 is nearer than 8
  EXPECT_EQ(nearest_kept_count(0.75, 8, four_gpu_gangs), 8);  // 6: a tie between 4 and 8 goes up, as ⌊x + ½⌋
  EXPECT_EQ(nearest_kept_count(0.74, 8, four_gpu_gangs), 4);  // 5.92: nearer 4
  EXPECT_EQ(nearest_kept_count(0.0, 8, four_gpu_gangs), 0);
  // Every count usable, or none at all: the plain rule.
  EXPECT_EQ(nearest_kept_count(0.6, 4, [](int n) { return n; }), 2);
  EXPECT_EQ(nearest_kept_count(0.6, 4, [](int) { return 0; }), 2);
  EXPECT_EQ(nearest_kept_count(0.6, 4, {}), 2);

  Rng rng(5);
  const std::vector<GpuIndex> bundle{0, 1, 2, 3, 8, 9, 10, 11};  // slots 0-1 of m0, slots 0-1 of m1
  EXPECT_EQ(kept_gpus(kCluster, bundle, 0.6, RoundingRule::kNearest, rng, four_gpu_gangs).size(), 4u);
  EXPECT_EQ(kept_gpus(kCluster, bundle, 0.6, RoundingRule::kNearest, rng).size(), 5u);  // gangs unknown
}

TEST(WholeGpus, LotteryKeepsAllOrNothingAtRateC) {
  Rng rng(5);
  const std::vector<GpuIndex> bundle{0, 1, 2, 3};
  int whole = 0;
  for (int k = 0; k < 10000; ++k) {
    const auto kept = kept_gpus(kCluster, bundle, 0.3, RoundingRule::kLottery, rng);
    ASSERT_TRUE(kept.empty() || kept == bundle);
    whole += kept.empty() ? 0 : 1;
  }
  EXPECT_NEAR(whole / 10000.0, 0.3, 0.02);
  EXPECT_EQ(parse_rounding_rule("lottery"), RoundingRule::kLottery);
  EXPECT_EQ(parse_rounding_rule("nearest"), RoundingRule::kNearest);
  EXPECT_FALSE(parse_rounding_rule("floor").has_value());
}

TEST(WholeGpus, TimeShareKeepsTheWholeBundleForCOfTheLease) {
  Rng rng(5);
  const std::vector<GpuIndex> bundle{0, 1, 2, 3};
  EXPECT_EQ(kept_gpus(kCluster, bundle, 0.3, RoundingRule::kTimeShare, rng), bundle);
  EXPECT_TRUE(kept_gpus(kCluster, bundle, 0.0, RoundingRule::kTimeShare, rng).empty());
  EXPECT_DOUBLE_EQ(kept_lease_fraction(0.3, RoundingRule::kTimeShare), 0.3);
  EXPECT_DOUBLE_EQ(kept_lease_fraction(1.0, RoundingRule::kTimeShare), 1.0);
  EXPECT_DOUBLE_EQ(kept_lease_fraction(0.3, RoundingRule::kNearest), 1.0);
  EXPECT_DOUBLE_EQ(kept_lease_fraction(0.3, RoundingRule::kLottery), 1.0);
  EXPECT_EQ(parse_rounding_rule("time-share"), RoundingRule::kTimeShare);
  EXPECT_EQ(to_string(RoundingRule::kTimeShare), "time-share");
}

}  // namespace
}  // namespace themis::arbiter
