#include "policy/planner/probe_gpus.h"

#include <vector>

namespace themis::planner {

std::map<AppId, GpuIndex> pick_probe_gpus(std::span<const ProbeRequest> waiting, std::span<const GpuIndex> free,
                                          const Cluster& cluster) {
  std::map<int, std::vector<GpuIndex>> by_machine;
  for (GpuIndex g : free) by_machine[cluster.gpu(g).machine].push_back(g);
  std::map<AppId, GpuIndex> picks;
  for (const ProbeRequest& request : waiting) {
    // Ordered by (whether the machine holds the gang, fewest free GPUs): the first machine that holds it wins.
    auto best = by_machine.end();
    const auto holds = [&](const std::vector<GpuIndex>& gpus) { return static_cast<int>(gpus.size()) >= request.gang; };
    for (auto it = by_machine.begin(); it != by_machine.end(); ++it) {
      if (it->second.empty()) continue;
      if (best == by_machine.end() || (holds(it->second) && !holds(best->second)) ||
          (holds(it->second) == holds(best->second) && it->second.size() < best->second.size()))
        best = it;
    }
    if (best == by_machine.end()) break;
    picks[request.app] = best->second.back();
    best->second.pop_back();
  }
  return picks;
}

}  // namespace themis::planner
