#include "web_cluster.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace themis::testing {

using namespace std::chrono_literals;

WebCluster::WebCluster() {
  coordinator_port = free_tcp_port();
  nodelet_port = free_tcp_port();
  cluster = std::make_unique<TestCluster>(std::vector<NodeSpec>{{"node-a", "rack-1", {{0, 1}, {2, 3}}}}, "60s",
                                          "http_listen = \"127.0.0.1:" + std::to_string(coordinator_port) + "\"\n");
  // The [nodelet] table ends the node's file: a line appended joins it.
  cluster->write_file("node-a.toml", read_text(cluster->dir() + "/node-a.toml") + "http_listen = \"127.0.0.1:" +
                                         std::to_string(nodelet_port) + "\"\n");
  cluster->start_coordinator();
  cluster->start_node("node-a");
  if (!cluster->wait_for([&] { return cluster->sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "1"; }, 10s)) {
    throw std::runtime_error("node-a did not register: " + read_text(cluster->coordinator_log()));
  }
}

std::string WebCluster::submit(const std::string& name, int gpus_per_job) {
  const std::string spec = "name = \"" + name + "\"\ncommand = [\"sleep\", \"60\"]\n[resources]\ngpus_per_job = " +
                           std::to_string(gpus_per_job) + "\n[checkpoint]\ngrace_period = \"1s\"\n";
  const auto submitted = cluster->ctl("alice", {"submit", "--parsable", cluster->write_file(name + ".toml", spec)});
  if (submitted.code != 0) throw std::runtime_error("submit failed: " + submitted.out);
  return submitted.first_stdout_line();
}

std::string find_program(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace themis::testing
