#include "coordinator/fallback_policy.h"

#include <algorithm>
#include <map>

namespace themis::coordinator {

arbiter::RoundOutcome FallbackPolicy::run_round(const arbiter::RoundInput& input, Rng& /*rng*/) {
  arbiter::RoundOutcome outcome;
  std::vector<arbiter::AppModel*> apps = input.apps;
  std::stable_sort(apps.begin(), apps.end(),
                   [](const auto* a, const auto* b) { return a->current_rho() > b->current_rho(); });
  std::vector<GpuIndex> free = input.free_gpus;
  for (auto* app : apps) {
    const int want = std::min(app->extra_demand(), static_cast<int>(free.size()));
    if (want <= 0) continue;
    // Most local first: the machine with the most free GPUs.
    std::map<int, std::vector<GpuIndex>> by_machine;
    for (GpuIndex g : free) by_machine[input.cluster->gpu(g).machine].push_back(g);
    std::vector<std::vector<GpuIndex>> groups;
    for (auto& [machine, gpus] : by_machine) groups.push_back(gpus);
    std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    arbiter::Grant grant{app->id(), {}, arbiter::GrantKind::kLeftover};
    for (const auto& group : groups) {
      for (GpuIndex g : group) {
        if (static_cast<int>(grant.gpus.size()) == want) break;
        grant.gpus.push_back(g);
      }
    }
    std::sort(grant.gpus.begin(), grant.gpus.end());
    std::erase_if(free, [&](GpuIndex g) { return std::binary_search(grant.gpus.begin(), grant.gpus.end(), g); });
    outcome.grants.push_back(std::move(grant));
  }
  for (GpuIndex g : free) outcome.idle.push_back({g, "no active app can use it"});
  return outcome;
}

}  // namespace themis::coordinator
