#include "coordinator/admission.h"

#include <cmath>

namespace themis::coordinator {

std::int64_t admission_cap_gpus(const AdmissionConfig& config, std::int64_t cluster_gpus) {
  return static_cast<std::int64_t>(std::floor(config.max_demand_ratio * static_cast<double>(cluster_gpus) + 1e-9));
}

AdmissionPlan plan_admission(const AdmissionConfig& config, const AdmissionInput& input) {
  AdmissionPlan plan;
  if (config.max_demand_ratio <= 0) {
    for (const auto& q : input.queue) plan.admit.push_back(q.app);
    return plan;
  }
  const std::int64_t cap = admission_cap_gpus(config, input.cluster_gpus);
  std::int64_t demand = input.admitted_demand_gpus;
  bool blocked = false;
  for (const auto& q : input.queue) {
    const std::int64_t with = demand + q.demand_gpus;
    const bool nothing_admitted = demand == 0;
    if (!blocked && (with <= cap || nothing_admitted)) {
      plan.admit.push_back(q.app);
      demand = with;
      continue;
    }
    // Waiting apps count as ahead of later ones: admitting an app means admitting those before it.
    blocked = true;
    demand = with;
    plan.wait.push_back({q.app, "queued: admission (demand " + std::to_string(with) + " GPUs would exceed cap " +
                                    std::to_string(cap) + ")"});
  }
  return plan;
}

}  // namespace themis::coordinator
