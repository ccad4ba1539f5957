#include <gtest/gtest.h>

#include "core/cluster_presets.h"
#include "core/topology.h"

namespace themis {
namespace {

Cluster preset(const char* name) { return Cluster(*cluster_preset(name)); }

TEST(Presets, PaperTestbedHas64GpusOn20Machines) {
  Cluster c = preset("paper-testbed-64");
  EXPECT_EQ(c.size(), 64);
  EXPECT_EQ(c.machines().size(), 20u);
  EXPECT_EQ(c.racks().size(), 4u);
  for (const Rack& r : c.racks()) {
    int gpus = 0;
    for (int m : r.machines) gpus += c.machines()[static_cast<std::size_t>(m)].gpu_count();
    EXPECT_EQ(gpus, 16) << r.name;
  }
}

TEST(Presets, FootnoteClusterIs168GpusAsWritten) {
  Cluster c = preset("paper-footnote-168");
  EXPECT_EQ(c.size(), 16 * 8 + 6 * 4 + 16 * 1);
  EXPECT_EQ(c.machines().size(), 38u);
}

TEST(Presets, Paper256KeepsTheMix) {
  Cluster c = preset("paper-256");
  EXPECT_EQ(c.size(), 256);
  int eight = 0, four = 0, one = 0;
  for (const Machine& m : c.machines()) {
    if (m.gpu_count() == 8) ++eight;
    if (m.gpu_count() == 4) ++four;
    if (m.gpu_count() == 1) ++one;
  }
  EXPECT_EQ(eight, 24);
  EXPECT_EQ(four, 9);
  EXPECT_EQ(one, 28);
  EXPECT_FALSE(cluster_preset("no-such-cluster").has_value());
}

TEST(Topology, LocalityIsTheWidestLevel) {
  Cluster c = preset("paper-footnote-168");
  // g8-01: GPUs 0..7, slots of two; g8-02 is on the next rack (round-robin).
  const std::vector<GpuIndex> same_slot{0, 1}, same_machine{0, 2}, one{5};
  EXPECT_EQ(c.locality(same_slot), Locality::kSameSlot);
  EXPECT_EQ(c.locality(same_machine), Locality::kSameMachine);
  EXPECT_EQ(c.locality(one), Locality::kSameSlot);
  const std::vector<GpuIndex> cross_rack{0, 8};
  EXPECT_EQ(c.gpu(0).rack == c.gpu(8).rack, false);
  EXPECT_EQ(c.locality(cross_rack), Locality::kCrossRack);
  // g8-01 and g8-05 share rack0.
  const std::vector<GpuIndex> same_rack{0, 32};
  EXPECT_EQ(c.gpu(32).rack, c.gpu(0).rack);
  EXPECT_EQ(c.locality(same_rack), Locality::kSameRack);
  EXPECT_EQ(c.gpu_name(10), "g8-02/gpu2");
}

TEST(Topology, RejectsEmptySlots) {
  ClusterSpec spec{"bad", {{"m1", "r", {2, 0}}}};
  EXPECT_THROW(Cluster{spec}, std::invalid_argument);
}

}  // namespace
}  // namespace themis

namespace themis {
namespace {

TEST(Topology, TightestLocalityIsTheNarrowestGroupThatHoldsTheGang) {
  // paper-testbed-64: slots of 2 GPUs, machines of 2 or 4, racks of 16, 4 racks.
  const Cluster c(*cluster_preset("paper-testbed-64"));
  EXPECT_EQ(c.tightest_locality(0), Locality::kSameSlot);
  EXPECT_EQ(c.tightest_locality(1), Locality::kSameSlot);
  EXPECT_EQ(c.tightest_locality(2), Locality::kSameSlot);
  EXPECT_EQ(c.tightest_locality(4), Locality::kSameMachine);
  EXPECT_EQ(c.tightest_locality(5), Locality::kSameRack);
  EXPECT_EQ(c.tightest_locality(16), Locality::kSameRack);
  EXPECT_EQ(c.tightest_locality(17), Locality::kCrossRack);
  EXPECT_EQ(c.tightest_locality(65), Locality::kCrossRack);
  // Sixteen one-GPU machines in one rack: a 4-GPU gang can at best span machines of the rack.
  ClusterSpec spec{"v100-16x1", {}};
  for (int m = 0; m < 16; ++m) spec.machines.push_back({"v" + std::to_string(m), "r1", {1}});
  const Cluster flat(spec);
  EXPECT_EQ(flat.tightest_locality(1), Locality::kSameSlot);
  EXPECT_EQ(flat.tightest_locality(4), Locality::kSameRack);
}

}  // namespace
}  // namespace themis
