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
  // Narrowest groups first (that is what makes every demand fit). Within a level, a demand that names
  // more GPUs of its group goes first, so GPUs go to the app that named them (the one running on
  // them), then larger demands (they need the locality more); bid order only after that.
  const auto named_inside = [&](const Pending& p) {
    const auto& group = problem.groups[static_cast<std::size_t>(p.demand.group)].gpus;
    const auto& mine = named[static_cast<std::size_t>(p.bidder)];
    return std::count_if(mine.begin(), mine.end(),
                         [&](GpuIndex g) { return std::binary_search(group.begin(), group.end(), g); });
  };
  std::stable_sort(pending.begin(), pending.end(), [&](const Pending& x, const Pending& y) {
    if (x.level != y.level) return x.level < y.level;
    const auto nx = named_inside(x), ny = named_inside(y);
    if (nx != ny) return nx > ny;
    return x.demand.count > y.demand.count;
  });

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
    for (GpuIndex g : most_local_subset(cluster, rest, need, GroupPreference::kBestFit)) {
      mine.push_back(g);
      taken.insert(g);
    }
  }
  for (auto& gpus : out) std::sort(gpus.begin(), gpus.end());
  return out;
}

}  // namespace themis::arbiter
