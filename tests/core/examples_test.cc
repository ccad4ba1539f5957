#include <gtest/gtest.h>

#include "core/cluster_file.h"

namespace themis {
namespace {

TEST(Examples, ShippedClusterFileLoads) {
  Cluster c(load_cluster_file(THEMIS_SOURCE_DIR "/examples/cluster-lab.toml"));
  EXPECT_EQ(c.size(), 8 + 4 * 2);
  EXPECT_EQ(c.racks().size(), 2u);
  EXPECT_THROW(load_cluster_file(THEMIS_SOURCE_DIR "/examples/no-such-file.toml"), ClusterFileError);
}

}  // namespace
}  // namespace themis
