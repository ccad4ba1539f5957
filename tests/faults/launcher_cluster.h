#pragma once
// The cluster of the bidder fault tests (silent_bidder_test, slow_bidder_test): two one-GPU nodes on two
// racks, 3 s leases, every app offered the GPUs (fairness_knob = 0, filter = "fixed"). Heartbeats keep 30 lives: 100 ms
// heartbeats with 3 lives lose hosts on a loaded 2-core box, and these tests are about launchers.
#include <memory>

#include "tests/integration/test_cluster.h"

namespace themis::testing {

// Starts the coordinator and both nodelets and waits until both GPUs are registered (gtest assertions).
void start_two_node_launcher_cluster(std::unique_ptr<TestCluster>& cluster);

}  // namespace themis::testing
