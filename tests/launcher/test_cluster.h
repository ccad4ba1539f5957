#pragma once
// The local cluster's shape: rack-a holds node1 (slots of 2+2) and node2 (2+2), rack-b holds node3 (2).
#include "core/topology.h"

namespace themis::launcher::testing {

// GPUs 0-3 node1, 4-7 node2, 8-9 node3.
Cluster two_rack_cluster();

}  // namespace themis::launcher::testing
