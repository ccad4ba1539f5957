#include "launcher/gpu_assignment.h"

#include <gtest/gtest.h>

#include "tests/launcher/test_cluster.h"

namespace themis::launcher {
namespace {

TEST(GpuAssignment, GangsTakeTheNarrowestBestFittingGroup) {
  const auto cluster = testing::two_rack_cluster();
  // Free: node1 slot0 {0,1}, node1 slot1 {3}, node2 all {4,5,6,7}, node3 {8}.
  const std::vector<GpuIndex> free = {0, 1, 3, 4, 5, 6, 7, 8};
  // 2 GPUs: a whole slot; node1's slot 0 (2 free) and node2's slots (2 free each) tie on fit; the first wins.
  EXPECT_EQ(best_placed_subset(cluster, free, 2), (std::vector<GpuIndex>{0, 1}));
  // 3 GPUs: node1 has exactly 3 free (best fit), node2 has 4.
  EXPECT_EQ(best_placed_subset(cluster, free, 3), (std::vector<GpuIndex>{0, 1, 3}));
  // 4: only node2 holds 4 on one machine.
  EXPECT_EQ(best_placed_subset(cluster, free, 4), (std::vector<GpuIndex>{4, 5, 6, 7}));
  // 8: spans racks; every free GPU.
  EXPECT_EQ(best_placed_subset(cluster, free, 8), free);
  EXPECT_TRUE(best_placed_subset(cluster, free, 9).empty());
}

TEST(GpuAssignment, JobsInOrderEachGetAWholeGangOrNothing) {
  const auto cluster = testing::two_rack_cluster();
  const std::vector<GpuIndex> free = {1, 2, 4, 5, 8, 9};
  const std::vector<int> jobs = {7, 3, 5, 6};
  const auto gangs = assign_gangs(cluster, free, jobs, 2);
  ASSERT_EQ(gangs.size(), 3U);
  EXPECT_EQ(gangs[0].job, 7);
  EXPECT_EQ(gangs[0].gpus, (std::vector<GpuIndex>{4, 5}));  // a whole slot of node2
  EXPECT_EQ(gangs[1].gpus, (std::vector<GpuIndex>{8, 9}));  // node3's slot
  EXPECT_EQ(gangs[2].gpus, (std::vector<GpuIndex>{1, 2}));  // node1, across its two slots
  EXPECT_EQ(cluster.locality(gangs[2].gpus), Locality::kSameMachine);
}

TEST(GpuAssignment, WideGangsSpanAsFewMachinesAsPossible) {
  const auto cluster = testing::two_rack_cluster();
  // 5 GPUs inside rack-a out of node1 {0,1,2} and node2 {4,5,6,7}: all of node2 plus one of node1.
  const std::vector<GpuIndex> free = {0, 1, 2, 4, 5, 6, 7, 8, 9};
  const auto gang = best_placed_subset(cluster, free, 5);
  EXPECT_EQ(cluster.locality(gang), Locality::kSameRack);
  int on_node2 = 0;
  for (GpuIndex g : gang) on_node2 += cluster.gpu(g).machine == 1 ? 1 : 0;
  EXPECT_EQ(on_node2, 4);
}

TEST(GpuAssignment, BadInputIsRejected) {
  const auto cluster = testing::two_rack_cluster();
  const std::vector<GpuIndex> bad = {0, 10};
  EXPECT_THROW(best_placed_subset(cluster, bad, 1), std::invalid_argument);
  const std::vector<GpuIndex> free = {0};
  const std::vector<int> jobs = {0};
  EXPECT_THROW(assign_gangs(cluster, free, jobs, 0), std::invalid_argument);
}

}  // namespace
}  // namespace themis::launcher
