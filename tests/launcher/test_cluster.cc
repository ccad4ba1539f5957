#include "tests/launcher/test_cluster.h"

namespace themis::launcher::testing {

Cluster two_rack_cluster() {
  ClusterSpec spec;
  spec.name = "local";
  spec.machines = {{"node1", "rack-a", {2, 2}}, {"node2", "rack-a", {2, 2}}, {"node3", "rack-b", {2}}};
  return Cluster(spec);
}

}  // namespace themis::launcher::testing
