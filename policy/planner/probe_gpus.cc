#include "policy/planner/probe_gpus.h"

#include <vector>

namespace themis::planner {

std::map<AppId, GpuIndex> pick_probe_gpus(std::span<const AppId> waiting, std::span<const GpuIndex> free,
                                          const Cluster& cluster) {
  std::map<int, std::vector<GpuIndex>> by_machine;
  for (GpuIndex g : free) by_machine[cluster.gpu(g).machine].push_back(g);
  std::map<AppId, GpuIndex> picks;
  for (const AppId app : waiting) {
    auto best = by_machine.end();
    for (auto it = by_machine.begin(); it != by_machine.end(); ++it) {
      if (!it->second.empty() && (best == by_machine.end() || it->second.size() < best->second.size())) best = it;
    }
    if (best == by_machine.end()) break;
    picks[app] = best->second.back();
    best->second.pop_back();
  }
  return picks;
}

}  // namespace themis::planner
