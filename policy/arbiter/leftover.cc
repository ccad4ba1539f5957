#include "policy/arbiter/leftover.h"

#include <algorithm>
#include <string>

#include "policy/arbiter/placement.h"

namespace themis::arbiter {

namespace {

void shuffle(std::vector<LeftoverRecipient>& recipients, Rng& rng) {
  for (std::size_t i = recipients.size(); i > 1; --i)
    std::swap(recipients[i - 1], recipients[static_cast<std::size_t>(rng.below(i))]);
}

// Whether `gpus` let the recipient run at kMinLeftoverPlacementScore of the speed it would have on the best
// placed set of that size anywhere in the cluster, busy or free: a cluster of one-GPU servers has no better
// set for a gang than a spread one, so waiting would gain it nothing.
bool placed_well_enough(const Cluster& cluster, const LeftoverRecipient& recipient, const std::vector<GpuIndex>& gpus) {
  if (!recipient.model) return true;
  const double score = recipient.model->placement_score(gpus);
  if (score >= kMinLeftoverPlacementScore) return true;
  std::vector<GpuIndex> every(static_cast<std::size_t>(cluster.size()));
  for (GpuIndex g = 0; g < cluster.size(); ++g) every[static_cast<std::size_t>(g)] = g;
  const auto best = most_local_subset(cluster, every, static_cast<int>(gpus.size()), GroupPreference::kBestFit);
  return score >= kMinLeftoverPlacementScore * recipient.model->placement_score(best);
}

}  // namespace

LeftoverResult distribute_leftover(const Cluster& cluster, std::vector<GpuIndex> pool,
                                   std::vector<LeftoverRecipient> non_bidders,
                                   std::vector<LeftoverRecipient> bidders, Rng& rng) {
  std::sort(pool.begin(), pool.end());
  LeftoverResult result;
  bool anyone_wanted = false;
  int narrowest_unfit = 0;  // the smallest job width of an app that wanted GPUs but found no whole job's worth
  int placed_too_slow = 0;  // apps that found whole jobs' worth, each placed too slow for them
  for (auto* tier : {&non_bidders, &bidders}) {
    std::erase_if(*tier, [](const LeftoverRecipient& r) { return r.demand <= 0; });
    if (tier->empty()) continue;
    anyone_wanted = true;
    if (pool.empty()) break;
    shuffle(*tier, rng);
    for (const LeftoverRecipient& recipient : *tier) {
      if (pool.empty()) break;
      const int width = std::max(1, recipient.job_width);
      const int usable = std::min(recipient.demand, static_cast<int>(pool.size())) / width * width;
      if (usable == 0) {
        narrowest_unfit = narrowest_unfit == 0 ? width : std::min(narrowest_unfit, width);
        continue;
      }
      std::vector<GpuIndex> given;
      for (int count = usable; count >= width; count -= width) {
        std::vector<GpuIndex> candidate = most_local_subset(cluster, pool, count, GroupPreference::kBestFit);
        if (placed_well_enough(cluster, recipient, candidate)) {
          given = std::move(candidate);
          break;
        }
      }
      if (given.empty()) {
        ++placed_too_slow;
        continue;
      }
      std::vector<GpuIndex> rest;
      std::set_difference(pool.begin(), pool.end(), given.begin(), given.end(), std::back_inserter(rest));
      pool = std::move(rest);
      result.grants.push_back(Grant{recipient.app, std::move(given), GrantKind::kLeftover});
    }
  }
  std::string reason = "no active app can use more GPUs";
  if (placed_too_slow > 0) {
    reason = std::to_string(pool.size()) + " left, placed so that the " + std::to_string(placed_too_slow) +
             " app(s) that want them would run at under " + std::to_string(static_cast<int>(kMinLeftoverPlacementScore * 100)) +
             "% of their speed";
  } else if (narrowest_unfit > 0) {
    reason = std::to_string(pool.size()) + " left, fewer than one whole job of any app that wants more (the narrowest needs " +
             std::to_string(narrowest_unfit) + ")";
  } else if (anyone_wanted) {
    reason = "every app that wants GPUs got all it can use";
  }
  for (GpuIndex g : pool) result.idle.push_back(IdleGpu{g, reason});
  return result;
}

}  // namespace themis::arbiter
