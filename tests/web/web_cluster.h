#pragma once
// A TestCluster (tests/integration) whose coordinator and nodelet serve HTTP on free loopback ports.
#include <memory>
#include <string>
#include <vector>

#include "http_get.h"
#include "tests/integration/test_cluster.h"

namespace themis::testing {

struct WebCluster {
  // One host, node-a, with 4 GPUs in two slots.
  WebCluster();
  std::unique_ptr<TestCluster> cluster;
  int coordinator_port = 0;
  int nodelet_port = 0;
  static constexpr int kGpus = 4;
  // Submits as alice; returns the app id.
  std::string submit(const std::string& name, int gpus_per_job);
};

// The full path of `program` on PATH, or "" when it is not installed.
std::string find_program(const std::string& program);

}  // namespace themis::testing
