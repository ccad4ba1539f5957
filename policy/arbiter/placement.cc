#include "policy/arbiter/placement.h"

#include <algorithm>
#include <map>

namespace themis::arbiter {

namespace {

// Level 2: rack, 1: machine, 0: slot.
int group_key(const Cluster& cluster, GpuIndex g, int level) {
  const Gpu& gpu = cluster.gpu(g);
  return level == 2 ? gpu.rack : level == 1 ? gpu.machine : gpu.slot;
}

void pick(const Cluster& cluster, std::vector<GpuIndex> gpus, int k, int level, GroupPreference preference,
          std::vector<GpuIndex>& out) {
  if (k <= 0) return;
  if (static_cast<int>(gpus.size()) <= k) {
    out.insert(out.end(), gpus.begin(), gpus.end());
    return;
  }
  if (level < 0) {
    out.insert(out.end(), gpus.begin(), gpus.begin() + k);
    return;
  }
  std::map<int, std::vector<GpuIndex>> by_key;
  for (GpuIndex g : gpus) by_key[group_key(cluster, g, level)].push_back(g);
  std::vector<std::vector<GpuIndex>> groups;
  for (auto& [key, members] : by_key) groups.push_back(std::move(members));
  // Largest first; equal sizes keep topology order (map order), so the choice is deterministic.
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.size() > b.size(); });
  const auto fits = [&](const std::vector<GpuIndex>& g) { return static_cast<int>(g.size()) >= k; };
  if (fits(groups.front())) {
    std::size_t chosen = 0;
    if (preference == GroupPreference::kBestFit)
      for (std::size_t i = 0; i < groups.size() && fits(groups[i]); ++i) chosen = i;
    pick(cluster, groups[chosen], k, level - 1, preference, out);
    return;
  }
  int left = k;
  for (auto& group : groups) {
    if (left == 0) break;
    const int take = std::min(left, static_cast<int>(group.size()));
    pick(cluster, group, take, level - 1, preference, out);
    left -= take;
  }
}

}  // namespace

std::vector<GpuIndex> most_local_subset(const Cluster& cluster, std::span<const GpuIndex> gpus, int k,
                                        GroupPreference preference) {
  std::vector<GpuIndex> out;
  pick(cluster, std::vector<GpuIndex>(gpus.begin(), gpus.end()), k, 2, preference, out);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace themis::arbiter
