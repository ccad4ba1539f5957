#include "policy/arbiter/shape_assignment.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "policy/arbiter/placement.h"

namespace themis::arbiter {

std::vector<std::vector<GpuIndex>> assign_shapes(const Cluster& cluster, const ShapeProblem& problem,
                                                 const PackingChoice& choice,
                                                 std::span<const std::vector<GpuIndex>> named) {
  struct Pending {
    int level, bidder;
    ShapeDemand demand;
  };
  std::vector<Pending> pending;
  for (std::size_t b = 0; b < choice.size(); ++b) {
    if (choice[b] < 0) continue;
    for (const ShapeDemand& d : problem.demands[b][static_cast<std::size_t>(choice[b])])
      pending.push_back({problem.groups[static_cast<std::size_t>(d.group)].level, static_cast<int>(b), d});
  }
  std::stable_sort(pending.begin(), pending.end(), [](const Pending& x, const Pending& y) { return x.level < y.level; });

  std::set<GpuIndex> taken;
  std::vector<std::vector<GpuIndex>> out(choice.size());
  for (const Pending& p : pending) {
    const auto& group = problem.groups[static_cast<std::size_t>(p.demand.group)].gpus;
    auto& mine = out[static_cast<std::size_t>(p.bidder)];
    int need = p.demand.count;
    std::vector<GpuIndex> rest;
    for (GpuIndex g : group) {
      if (taken.contains(g)) continue;
      const auto& first = named[static_cast<std::size_t>(p.bidder)];
      if (need > 0 && std::binary_search(first.begin(), first.end(), g)) {
        mine.push_back(g);
        taken.insert(g);
        --need;
      } else {
        rest.push_back(g);
      }
    }
    if (static_cast<int>(rest.size()) < need)
      throw std::logic_error("shape assignment: a group is asked for more GPUs than it has free");
    for (GpuIndex g : most_local_subset(cluster, rest, need, GroupPreference::kDensest)) {
      mine.push_back(g);
      taken.insert(g);
    }
  }
  for (auto& gpus : out) std::sort(gpus.begin(), gpus.end());
  return out;
}

}  // namespace themis::arbiter
