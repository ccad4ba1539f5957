#pragma once
// The SQL of the first-iteration probe (coordinator/probe.cc, docs/reliability.md "Probe"): apps.probe and
// what decides its verdict.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/store/database.h"

namespace themis::store {

class ProbeStore {
 public:
  explicit ProbeStore(Database& db) : db_(db) {}

  enum class Probe { kRunning, kPassed, kFailed };
  void set_probe(std::int64_t app, Probe probe);
  // Apps whose probe is running, each with whether the app itself is still active (PENDING or RUNNING).
  std::vector<std::pair<std::int64_t, bool>> probing_apps();

  // The job of `app` that changed state last among those that ran at least once: its state and why it ended
  // (its failure class, else its reason).
  struct LastAttempt {
    std::int64_t job = 0;
    std::string state;
    std::string why;
  };
  std::optional<LastAttempt> last_attempt(std::int64_t app);
  // Jobs of `app` that completed after running at least once.
  std::int64_t completed_jobs(std::int64_t app);
  // Leases of `app` still active at `now`.
  std::int64_t live_leases(std::int64_t app, double now);

  // The first failed attempt (not a preemption) of `app` since its first lease began, with how many earlier
  // attempts of the same job failed in the same class.
  struct FirstFailure {
    std::int64_t job = 0, attempt = 0;
    std::string failure_class, reason;
    std::int64_t earlier_same_class = 0;
  };
  std::optional<FirstFailure> first_failure_since_first_lease(std::int64_t app);

 private:
  Database& db_;
};

}  // namespace themis::store
