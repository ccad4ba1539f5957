#pragma once
// The SQL behind themisctl's read-only queries (coordinator/requests.cc, on_query): apps, nodes, leases,
// rounds, show and explain. Lists come back as rows of JSON objects, one member per column, each value
// typed as stored (integer, real, text or null), which is what the QueryReply document carries.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/database.h"

namespace themis::store {

class QueryStore {
 public:
  explicit QueryStore(Database& db) : db_(db) {}

  // `themisctl apps`: every row of apps_rho with the app's probe, by app.
  nlohmann::json apps_with_probe();
  nlohmann::json gpu_utilisation();       // `themisctl nodes`
  nlohmann::json active_leases();         // `themisctl leases`, by GPU
  nlohmann::json recent_rounds();         // `themisctl rounds`

  // `themisctl show` and `explain` of one app: its apps_rho row (none: no such app), its jobs, its last 100
  // failed attempts and its last 50 events (newest first).
  nlohmann::json app_row(std::int64_t app);
  nlohmann::json jobs_of_app(std::int64_t app);
  nlohmann::json failures_of_app(std::int64_t app);
  nlohmann::json events_of_app(std::int64_t app);
  // The log tails its jobs stored (what another user may not read).
  std::vector<std::string> log_tails_of_app(std::int64_t app);

  // `themisctl explain` only: the app's bids in its last 10 rounds with its ρ rank in each, the active apps by
  // ρ, the GPUs free now (up, not drained, unleased) and the next lease expiry (ISO 8601 UTC; none: no lease).
  nlohmann::json bids_of_app(std::int64_t app);
  nlohmann::json active_apps_by_rho();
  std::int64_t free_gpus();
  std::optional<std::string> next_lease_expiry();

 private:
  Database& db_;
};

}  // namespace themis::store
