#include "policy/arbiter/policies/bundle_choice.h"

#include <algorithm>
#include <map>

namespace themis::arbiter::policies {
namespace {

struct Group {
  int key = 0;
  std::vector<GpuIndex> gpus;
  bool near = false;
};

// Groups `free` by a level key (slot, machine or rack), in first-GPU order.
std::vector<Group> group_by(const Cluster& cluster, std::span<const GpuIndex> free,
                            std::span<const GpuIndex> near, int (*key)(const Gpu&)) {
  std::map<int, Group> groups;
  for (GpuIndex g : free) {
    Group& grp = groups[key(cluster.gpu(g))];
    grp.key = key(cluster.gpu(g));
    grp.gpus.push_back(g);
  }
  for (GpuIndex g : near)
    if (auto it = groups.find(key(cluster.gpu(g))); it != groups.end()) it->second.near = true;
  std::vector<Group> out;
  out.reserve(groups.size());
  for (auto& [k, grp] : groups) out.push_back(std::move(grp));
  return out;
}

// The group holding at least `count` GPUs that is near, then tightest, then first. nullptr if none.
const Group* best_fit(const std::vector<Group>& groups, int count) {
  const Group* best = nullptr;
  for (const Group& g : groups) {
    if (static_cast<int>(g.gpus.size()) < count) continue;
    if (best == nullptr || (g.near && !best->near) ||
        (g.near == best->near && g.gpus.size() < best->gpus.size()))
      best = &g;
  }
  return best;
}

// Takes `count` GPUs from `gpus` filling whole machines first, fullest machines first.
std::vector<GpuIndex> fill_by_machine(const Cluster& cluster, std::span<const GpuIndex> gpus,
                                      std::span<const GpuIndex> near, int count) {
  auto machines = group_by(cluster, gpus, near, [](const Gpu& g) { return g.machine; });
  std::stable_sort(machines.begin(), machines.end(), [](const Group& a, const Group& b) {
    if (a.near != b.near) return a.near;
    return a.gpus.size() > b.gpus.size();
  });
  std::vector<GpuIndex> out;
  for (const Group& m : machines) {
    for (GpuIndex g : m.gpus) {
      if (static_cast<int>(out.size()) == count) break;
      out.push_back(g);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<GpuIndex> first_fit_bundle(std::span<const GpuIndex> free, int count) {
  const auto n = std::min<std::size_t>(free.size(), static_cast<std::size_t>(std::max(count, 0)));
  return {free.begin(), free.begin() + static_cast<std::ptrdiff_t>(n)};
}

std::vector<GpuIndex> best_placed_bundle(const Cluster& cluster, std::span<const GpuIndex> free,
                                         std::span<const GpuIndex> near, int count) {
  count = std::min(count, static_cast<int>(free.size()));
  if (count <= 0) return {};
  auto take = [count](const Group& g) {
    return std::vector<GpuIndex>(g.gpus.begin(), g.gpus.begin() + count);
  };
  const auto slots = group_by(cluster, free, near, [](const Gpu& x) { return x.slot; });
  if (const Group* g = best_fit(slots, count)) return take(*g);
  const auto machines = group_by(cluster, free, near, [](const Gpu& x) { return x.machine; });
  if (const Group* g = best_fit(machines, count)) {
    // Within the machine, fill the fullest slots first so the bundle spans few slots.
    return fill_by_machine(cluster, g->gpus, near, count);
  }
  const auto racks = group_by(cluster, free, near, [](const Gpu& x) { return x.rack; });
  if (const Group* g = best_fit(racks, count)) return fill_by_machine(cluster, g->gpus, near, count);
  return fill_by_machine(cluster, free, near, count);
}

void remove_gpus(std::vector<GpuIndex>& free, std::span<const GpuIndex> taken) {
  std::vector<GpuIndex> out;
  out.reserve(free.size());
  std::set_difference(free.begin(), free.end(), taken.begin(), taken.end(), std::back_inserter(out));
  free = std::move(out);
}

}  // namespace themis::arbiter::policies
