#pragma once
// A coordinator and nodelets as real processes on 127.0.0.1 with a random free port, CURVE keys
// enrolled through the real binaries, short heartbeats, in a temporary directory.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "process.h"
#include "tests/store/temp_dir.h"

namespace themis::testing {

// An app of one job on one GPU that sleeps `seconds`, stopped with a 1 s grace period.
std::string one_gpu_sleeper(const std::string& name, int seconds);

struct NodeSpec {
  std::string host;
  std::string rack;
  std::vector<std::vector<int>> slots;
};

class TestCluster {
 public:
  // Users "alice" and "bob" (role user), "root" (admin); one node key per node.
  // `coordinator_settings`: extra lines for the [coordinator] table (e.g. "fairness_knob = 0\n"); a
  // `probe_duration` or `heartbeat_lives` there replaces the default below.
  explicit TestCluster(std::vector<NodeSpec> nodes, const std::string& lease_duration = "60s",
                       const std::string& coordinator_settings = "");
  ~TestCluster();

  void start_coordinator(const std::map<std::string, std::string>& env = {});
  // The coordinator, then every node of the cluster; true once the coordinator has registered all their GPUs
  // (within 20 s).
  bool start();
  void kill_coordinator(int sig);
  void signal_coordinator(int sig);
  void start_node(const std::string& host, const std::map<std::string, std::string>& env = {});
  void kill_node(const std::string& host, int sig);
  pid_t node_pid(const std::string& host);
  // Rewrites the host's nodelet config with `settings` (lines for its [nodelet] table) added; takes effect
  // at its next start_node. Without an allow_root_jobs line the nodelet allows root jobs (the principals'
  // default account here, see the [users] table the constructor writes).
  void set_node_settings(const std::string& host, const std::string& settings);

  // themisctl as `user` (a principal with a key here).
  Output ctl(const std::string& user, const std::vector<std::string>& args);
  std::string write_file(const std::string& name, const std::string& text);
  // `spec` written as NAME.toml and submitted by `user` (`themisctl submit --parsable`): the app's id. Throws
  // std::runtime_error with themisctl's output when the submission is refused.
  std::string submit(const std::string& user, const std::string& name, const std::string& spec);

  // One value from a read-only connection to the coordinator's database ("" for NULL / no row).
  std::string sql(const std::string& query);
  // Polls `condition` every 50 ms until it holds or `timeout` passes.
  bool wait_for(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

  const std::string& endpoint() const { return endpoint_; }
  const std::string& dir() const { return dir_.path(); }
  std::string key(const std::string& name, bool secret) const;
  std::string db_path() const { return dir_.file("themis.db"); }
  std::string coordinator_log() const { return dir_.file("coordinator.log"); }
  static constexpr int kHeartbeatMs = 100;
  // A host is declared down after kHeartbeatLives silent intervals (5 s). Tests run in parallel on a 2-core
  // box where the daemons were seen stalled for longer than 3 heartbeats, and once for longer than 20, while
  // LibTorch ranks started (docs/reliability.md), which would declare hosts down for reasons that are not
  // under test. The tests about detecting a lost host set `heartbeat_lives` in `coordinator_settings`.
  static constexpr int kHeartbeatLives = 50;

 private:
  TempDir dir_;
  std::vector<NodeSpec> nodes_;
  std::string endpoint_;
  Process coordinator_;
  std::map<std::string, Process> nodelets_;
};

std::string read_text(const std::string& path);

}  // namespace themis::testing
