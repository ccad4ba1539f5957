// Apps the registered cluster cannot run (docs/app-spec.md "Apps the cluster cannot run"): refused at
// submit when reject_infeasible is on, else kept waiting "Infeasible" until hosts with enough GPUs register.
#include <spdlog/spdlog.h>

#include "coordinator/admission_feasibility.h"
#include "coordinator/coordinator.h"
#include "coordinator/store/feasibility_store.h"

namespace themis::coordinator {

std::optional<std::string> Coordinator::infeasible_at_submit(int gpus_per_job) {
  return infeasibility(gpus_per_job, store::FeasibilityStore(db_).registered_gpus_per_host());
}

// Inside admit_apps' transaction, before the admission plan: a pending app whose job no registered
// placement holds waits "Infeasible: …" (out of the admission queue and out of rounds); one that fits
// again goes back to the queue undecided. Only PENDING apps are judged: the registered cluster only
// grows (hosts go down, they are not removed), so an app that started was feasible and stays so; while
// down hosts leave the up GPUs short of one of its jobs the round planner leaves it out.
void Coordinator::judge_feasibility(double now) {
  store::FeasibilityStore store(db_);
  const std::vector<int> hosts = store.registered_gpus_per_host();
  if (hosts.empty()) return;  // nothing registered yet: nothing is known, nothing judged
  const int largest = largest_placement(hosts).gpus;
  for (const store::JudgedApp& app : store.apps_to_judge(largest, kInfeasiblePrefix)) {
    const auto why = infeasibility(app.gpus_per_job, hosts);
    const bool was_infeasible = !app.admission_null && is_infeasible_reason(app.admission);
    if (why) {
      const std::string reason = std::string(kInfeasiblePrefix) + *why;
      if (!app.admission_null && app.admission == reason) continue;
      store.set_admission(app.id, reason);
      if (!was_infeasible) {
        event(now, "Infeasible", app.id, std::nullopt, "", std::nullopt,
              *why + "; it takes no GPUs and waits for hosts to register");
        spdlog::warn("app {} is infeasible: {}", app.id, *why);
      }
    } else if (was_infeasible) {
      store.set_admission(app.id, kAdmissionUndecided);
      event(now, "Feasible", app.id, std::nullopt, "", std::nullopt,
            "the registered cluster now holds one of its jobs (" + largest_placement(hosts).described + " GPUs)");
    }
  }
}

}  // namespace themis::coordinator
