#pragma once
// Accounting of finished apps for `themisctl history` (like Slurm's sacct): one row per app that ended
// in a period, and per-user totals over it. An app counts in the period its finished_at falls in, with
// all the GPU time its leases held.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "coordinator/store/database.h"

namespace themis::store {

struct HistoryPeriod {
  std::optional<double> since;  // finished_at >= since (unix seconds)
  std::optional<double> until;  // finished_at < until
  std::string user;             // only this owner's apps ("" = everyone's)
};

// COMPLETED, FAILED and CANCELLED apps, newest end first (at most `limit`): app, name, owner, state,
// submitted, finished (ISO 8601 UTC), jct_s (finished − submitted), rho (last ρ), gpu_hours (leased),
// jobs, exit ("code:signal" of the first failed job, "0:0" for COMPLETED, "-" for CANCELLED or none).
nlohmann::json finished_apps(Database& db, const HistoryPeriod& period, int limit = 1000);

// Per owner over the same apps: user, apps, completed, failed, cancelled, gpu_hours, mean_jct_s, mean_rho;
// most GPU-hours first.
nlohmann::json user_totals(Database& db, const HistoryPeriod& period);

}  // namespace themis::store
