#pragma once
// The hosts and gpus rows of the coordinator (docs/protocols/heartbeat.md): registration, heartbeats, hosts
// going down, and which jobs and leases sit on which hosts through their GPUs.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/store/database.h"

namespace themis::store {

class HostStore {
 public:
  explicit HostStore(Database& db) : db_(db) {}

  // A host as first registered: its GPUs keep the cluster-wide indices first_gpu .. first_gpu + gpu_count - 1.
  struct Registered {
    std::int64_t id = 0;
    std::int64_t first_gpu = 0;
    std::int64_t gpu_count = 0;
  };
  std::optional<Registered> find(const std::string& name);
  // A registered host comes back: up again, with its rack and last heartbeat as now.
  void mark_up(std::int64_t host_id, const std::string& rack, double now);
  // One GPU as a host declares it; a slot is a list of them.
  struct DeclaredGpu {
    std::int64_t local_index = 0;
    std::string model;
  };
  using DeclaredSlot = std::vector<DeclaredGpu>;
  // A new host, up, with its GPUs numbered after every GPU (and slot) known so far. Returns its first GPU.
  std::int64_t add(const std::string& name, const std::string& rack, const std::vector<DeclaredSlot>& slots,
                   std::int64_t gpu_count, double now);
  void write_heartbeat(const std::string& name, double now);
  std::vector<std::string> up_hosts();
  void mark_down(const std::string& name);

  // The hosts the current placement of a job spans, each with whether it is up.
  std::vector<std::pair<std::string, bool>> hosts_of_job(std::int64_t app, std::int64_t job);
  // Those of them that are up.
  std::vector<std::string> up_hosts_of_job(std::int64_t app, std::int64_t job);
  // Apps holding an active lease on a GPU of the host.
  std::vector<std::int64_t> lease_holders_on(const std::string& host);

  // Jobs (app, job) placed on a GPU of the host that are STARTING, RUNNING or STOPPING.
  std::vector<std::pair<std::int64_t, std::int64_t>> live_jobs_on(const std::string& host);
  // Jobs placed on the host that are RUNNING with no rank exited yet.
  std::vector<std::pair<std::int64_t, std::int64_t>> running_jobs_without_exits_on(const std::string& host);
  // Jobs placed on the host that have been STOPPING since `since` or earlier, with their attempt and reason.
  struct StoppingJob {
    std::int64_t app = 0, job = 0, attempt = 0;
    std::string reason;
  };
  std::vector<StoppingJob> stopping_jobs_on(const std::string& host, double since);

 private:
  Database& db_;
};

}  // namespace themis::store
