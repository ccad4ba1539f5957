#include "launcher/gpu_assignment.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace themis::launcher {
namespace {

// Level 0 = slot, 1 = machine, 2 = rack, 3 = the whole cluster.
int group_of(const Gpu& gpu, int level) {
  switch (level) {
    case 0: return gpu.slot;
    case 1: return gpu.machine;
    case 2: return gpu.rack;
    default: return 0;
  }
}

// Takes `count` GPUs from `group`, fullest sub-groups (one level down) first, recursively.
std::vector<GpuIndex> take_packed(const Cluster& cluster, const std::vector<GpuIndex>& group, int level, int count) {
  if (level == 0 || static_cast<int>(group.size()) == count) {
    return {group.begin(), group.begin() + count};
  }
  std::map<int, std::vector<GpuIndex>> sub;
  for (GpuIndex g : group) sub[group_of(cluster.gpu(g), level - 1)].push_back(g);
  std::vector<std::vector<GpuIndex>> parts;
  for (auto& [id, gpus] : sub) parts.push_back(std::move(gpus));
  // A sub-group that holds the whole gang alone comes first (best fit among those), then the fullest.
  std::stable_sort(parts.begin(), parts.end(), [&](const auto& a, const auto& b) {
    const bool fit_a = static_cast<int>(a.size()) >= count, fit_b = static_cast<int>(b.size()) >= count;
    if (fit_a != fit_b) return fit_a;
    if (fit_a) return a.size() < b.size();
    return a.size() > b.size();
  });
  std::vector<GpuIndex> picked;
  for (const auto& part : parts) {
    const int want = std::min(count - static_cast<int>(picked.size()), static_cast<int>(part.size()));
    if (want <= 0) break;
    const auto more = take_packed(cluster, part, level - 1, want);
    picked.insert(picked.end(), more.begin(), more.end());
  }
  return picked;
}

}  // namespace

std::vector<GpuIndex> best_placed_subset(const Cluster& cluster, std::span<const GpuIndex> free_gpus, int count) {
  if (count < 1) throw std::invalid_argument("gpu assignment: gang size must be >= 1, got " + std::to_string(count));
  std::set<GpuIndex> distinct;
  for (GpuIndex g : free_gpus) {
    if (g < 0 || g >= cluster.size()) {
      throw std::invalid_argument("gpu assignment: GPU " + std::to_string(g) + " is outside the cluster (0.." +
                                  std::to_string(cluster.size() - 1) + ")");
    }
    distinct.insert(g);
  }
  if (static_cast<int>(distinct.size()) < count) return {};
  for (int level = 0; level <= 3; ++level) {
    std::map<int, std::vector<GpuIndex>> groups;
    for (GpuIndex g : distinct) groups[group_of(cluster.gpu(g), level)].push_back(g);
    const std::vector<GpuIndex>* best = nullptr;
    for (const auto& [id, gpus] : groups) {
      if (static_cast<int>(gpus.size()) >= count && (!best || gpus.size() < best->size())) best = &gpus;
    }
    if (!best) continue;
    auto picked = take_packed(cluster, *best, level, count);
    std::sort(picked.begin(), picked.end());
    return picked;
  }
  return {};
}

std::vector<GangAssignment> assign_gangs(const Cluster& cluster, std::span<const GpuIndex> free_gpus,
                                         std::span<const int> jobs, int gpus_per_job) {
  if (gpus_per_job < 1) {
    throw std::invalid_argument("gpu assignment: gpus_per_job must be >= 1, got " + std::to_string(gpus_per_job));
  }
  std::vector<GpuIndex> pool(free_gpus.begin(), free_gpus.end());
  std::vector<GangAssignment> out;
  for (int job : jobs) {
    auto gang = best_placed_subset(cluster, pool, gpus_per_job);
    if (gang.empty()) break;
    std::erase_if(pool, [&](GpuIndex g) { return std::binary_search(gang.begin(), gang.end(), g); });
    out.push_back({job, std::move(gang)});
  }
  return out;
}

}  // namespace themis::launcher
