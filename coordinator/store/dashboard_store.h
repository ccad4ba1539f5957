#pragma once
// The read side of the coordinator's HTTP endpoint (/metrics, the dashboard and its JSON API): queries only,
// on a read-only connection of the HTTP server's own (WAL lets it read while the loop writes).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/database.h"

namespace themis::store {

// One GPU of the cluster map.
struct GpuView {
  std::int64_t gpu = 0;
  std::string host, rack, host_state;
  std::int64_t local_index = 0;
  std::optional<std::int64_t> app, job;   // the holder of its active lease
  std::string app_name;
  std::optional<double> lease_expiry;     // unix seconds
  bool in_use = false;                    // a STARTING, RUNNING or STOPPING job is placed on it
};

struct AppView {
  std::int64_t id = 0;
  std::string name, owner, state;         // state as apps_rho shows it (QUEUED while admission waits)
  std::optional<double> rho;
  std::int64_t gpus_held = 0, jobs = 0, jobs_running = 0, jobs_pending = 0;
  double submitted_at = 0;
};

struct RhoPoint {
  std::int64_t round = 0;
  double at = 0;   // the round's start
  double rho = 0;
};

struct RoundView {
  std::int64_t id = 0;
  double started_at = 0, finished_at = 0;
  std::string trigger, policy;
  std::int64_t free_gpus = 0, apps = 0, granted = 0, idle = 0;
  std::optional<double> auction_seconds;  // auction_finished_at - auction_started_at
  std::optional<double> gap;              // the auction's proven relative gap (outcome.auction_gap)
  std::optional<double> worst_loop_lag_ms;
};

// Counts by state, for gauges. Every state is present (0 when none).
struct ClusterCounts {
  std::map<std::string, std::int64_t> gpus;   // leased (a job runs there), idle (leased, no job), free, down
  std::map<std::string, std::int64_t> hosts;  // up, down
  std::map<std::string, std::int64_t> apps;   // QUEUED, PENDING, RUNNING, COMPLETED, FAILED, CANCELLED
  std::map<std::string, std::int64_t> jobs;   // PENDING, STARTING, RUNNING, STOPPING, COMPLETED, FAILED, CANCELLED
  std::int64_t leases_active = 0;
  std::int64_t leases_granted = 0;            // every lease ever written (a counter)
};

class DashboardStore {
 public:
  explicit DashboardStore(Database& db) : db_(db) {}

  std::vector<GpuView> gpus();
  // Apps not finished, then the `finished` most recently finished.
  std::vector<AppView> apps(int finished);
  // Each app's ρ as recorded by the last `rounds` rounds it took part in (bids.rho_before), oldest first.
  std::map<std::int64_t, std::vector<RhoPoint>> rho_history(int rounds);
  std::vector<RoundView> recent_rounds(int limit);
  ClusterCounts counts();

 private:
  Database& db_;
};

}  // namespace themis::store
