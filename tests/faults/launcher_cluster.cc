#include "tests/faults/launcher_cluster.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace themis::testing {

void start_two_node_launcher_cluster(std::unique_ptr<TestCluster>& cluster) {
  cluster = std::make_unique<TestCluster>(std::vector<NodeSpec>{{"node-a", "r1", {{0}}}, {"node-b", "r2", {{0}}}}, "3s",
                                          "fairness_knob = 0\nfilter = \"fixed\"\nheartbeat_lives = 30\n");
  ASSERT_TRUE(cluster->start());
}

}  // namespace themis::testing
