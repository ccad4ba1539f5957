#pragma once
// The SQL of a launcher's job requests (coordinator/launchers.cc, docs/protocols/control.md): what a LaunchJob or
// StopJob checks and writes (the app's leases of GPUs, its job rows and their placements), and what the
// coordinator tells the launcher of its jobs' ranks.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/database.h"

namespace themis::store {

class JobLaunchStore {
 public:
  explicit JobLaunchStore(Database& db) : db_(db) {}

  // The job's stored state and attempt; nullopt when `app` has no job `job`.
  struct JobAttempt {
    std::string state;
    std::int64_t attempt = 0;
    std::string placement_json;  // the current attempt's GPUs
  };
  std::optional<JobAttempt> job_attempt(std::int64_t app, std::int64_t job);

  // True when an active lease of `gpu` to `app` has not expired at `now`.
  bool gpu_leased_to(std::int64_t app, std::int64_t gpu, double now);
  // Lease `id` when it is one of `app`'s leases of `gpu`: how it stands and when it ended. released_at is
  // nullopt when it was never released.
  struct LeaseRecord {
    std::string state;
    double expiry = 0;
    std::optional<double> released_at;
    std::string release_reason;  // "" when none
  };
  std::optional<LeaseRecord> lease_of(std::int64_t id, std::int64_t app, std::int64_t gpu);
  // True when another job of `app` than `job`, STARTING or RUNNING, is placed on `gpu`.
  bool other_job_on_gpu(std::int64_t app, std::int64_t job, std::int64_t gpu);
  // The active lease of `gpu` to `app` now serves `job`.
  void assign_lease_to_job(std::int64_t app, std::int64_t gpu, std::int64_t job);

  // True when the job's attempt `attempt` is STOPPING (the coordinator ordered its stop).
  bool stop_ordered(std::int64_t app, std::int64_t job, std::int64_t attempt);
  // The ranks of the job placed on GPUs of `host`, with the job's attempt (0 and none when it has none there).
  struct RanksOnHost {
    std::int64_t attempt = 0;
    std::vector<std::uint32_t> ranks;
  };
  RanksOnHost ranks_on_host(std::int64_t app, std::int64_t job, const std::string& host);

 private:
  Database& db_;
};

}  // namespace themis::store
