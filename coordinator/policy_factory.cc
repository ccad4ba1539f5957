#include "coordinator/policy_factory.h"

#include "policy/arbiter/policies/registry.h"

namespace themis::coordinator {

std::unique_ptr<arbiter::Policy> make_coordinator_policy(const CoordinatorConfig& config) {
  arbiter::policies::PolicySettings settings;
  settings.filter_f = config.fairness_knob;
  settings.filter = std::string(arbiter::to_string(config.filter));
  settings.gang_reservation = config.gang_reservation;
  settings.gang_backfill = config.gang_backfill;
  settings.rounding = config.rounding;
  settings.solver = config.solver;
  settings.solver_threads = config.solver_threads;
  settings.lease = static_cast<double>(config.lease_duration_ms) / 1000.0;
  settings.solver_seconds = auction_budget_seconds(config);
  return arbiter::policies::make_policy(config.policy, settings);
}

}  // namespace themis::coordinator
