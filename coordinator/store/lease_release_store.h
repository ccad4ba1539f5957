#pragma once
// Leases the coordinator lets go of outside a round: a job's when it ends, an app's, a lost host's, a GPU a launcher
// gives back, and the count of those reaching their expiry (which makes their GPUs available to the next round).
#include <cstdint>
#include <string>

#include "coordinator/store/database.h"

namespace themis::store {

class LeaseReleaseStore {
 public:
  explicit LeaseReleaseStore(Database& db) : db_(db) {}

  // The job's active leases become released at `now` for `reason`.
  void release_job(std::int64_t app, std::int64_t job, double now, const std::string& reason);
  // Every active lease of the app becomes released at `now` for `reason` (it was cancelled or finished).
  void release_app(std::int64_t app, double now, const std::string& reason);
  // The app's active lease on `gpu` becomes released at `now` for `reason`, unless one of the app's jobs is
  // placed there and not over (STARTING, RUNNING, STOPPING). True when a lease was released.
  bool release_unused_gpu(std::int64_t app, std::int64_t gpu, double now, const std::string& reason);
  // Every active lease on a GPU of the host becomes released at `now` for `reason`.
  void release_host(const std::string& host, double now, const std::string& reason);
  // Active leases whose expiry is at or before `now`.
  std::int64_t expiring(double now);

 private:
  Database& db_;
};

}  // namespace themis::store
