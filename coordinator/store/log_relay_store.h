#pragma once
// The SQL of `themisctl logs` (coordinator/requests.cc, on_read_log and on_log_chunk): whose app it is,
// where an attempt of a job ran, and whether that attempt still runs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/topology.h"
#include "coordinator/store/database.h"

namespace themis::store {

class LogRelayStore {
 public:
  explicit LogRelayStore(Database& db) : db_(db) {}

  std::optional<std::string> app_owner(std::int64_t app);

  // The job's latest attempt (0: never started) and its placement (a JSON array of GPUs, [] once it ended).
  struct LatestAttempt {
    std::uint32_t attempt = 0;
    std::string placement_json;
  };
  std::optional<LatestAttempt> latest_attempt(std::int64_t app, std::int64_t job);
  // The GPUs the job's last leases held (those of its latest round), in GPU order.
  std::vector<GpuIndex> last_lease_gpus(std::int64_t app, std::int64_t job);
  // The name of the host of `gpu` ("" when no host has it).
  std::string host_of_gpu(GpuIndex gpu);
  // True unless `attempt` is the job's attempt and it is STARTING, RUNNING or STOPPING (an unknown job has ended).
  bool attempt_ended(std::int64_t app, std::int64_t job, std::uint32_t attempt);

 private:
  Database& db_;
};

}  // namespace themis::store
