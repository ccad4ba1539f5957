#include "coordinator/admission.h"

#include <cmath>

namespace themis::coordinator {

std::int64_t admission_cap_gpus(const AdmissionConfig& config, std::int64_t cluster_gpus) {
  return static_cast<std::int64_t>(std::floor(config.max_demand_ratio * static_cast<double>(cluster_gpus) + 1e-9));
}

AdmissionPlan plan_admission(const AdmissionConfig& config, const AdmissionInput& input) {
  return plan_admission_after(config, input.cluster_gpus, {input.admitted_demand_gpus, false}, input.queue);
}

AdmissionPlan plan_admission_after(const AdmissionConfig& config, std::int64_t cluster_gpus, AdmissionProgress before,
                                   const std::vector<QueuedApp>& arrivals) {
  AdmissionPlan plan;
  std::int64_t demand = before.demand_gpus;
  bool blocked = before.blocked;
  if (config.max_demand_ratio <= 0) {
    for (const auto& q : arrivals) {
      plan.admit.push_back(q.app);
      demand += q.demand_gpus;
    }
    plan.after = {demand, blocked};
    return plan;
  }
  const std::int64_t cap = admission_cap_gpus(config, cluster_gpus);
  for (const auto& q : arrivals) {
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
  plan.after = {demand, blocked};
  return plan;
}

}  // namespace themis::coordinator
