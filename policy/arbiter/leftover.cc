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

}  // namespace

LeftoverResult distribute_leftover(const Cluster& cluster, std::vector<GpuIndex> pool,
                                   std::vector<LeftoverRecipient> non_bidders,
                                   std::vector<LeftoverRecipient> bidders, Rng& rng) {
  std::sort(pool.begin(), pool.end());
  LeftoverResult result;
  bool anyone_wanted = false;
  int narrowest_unfit = 0;  // the smallest job width of an app that wanted GPUs but found no whole job's worth
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
      std::vector<GpuIndex> given = most_local_subset(cluster, pool, usable, GroupPreference::kBestFit);
      std::vector<GpuIndex> rest;
      std::set_difference(pool.begin(), pool.end(), given.begin(), given.end(), std::back_inserter(rest));
      pool = std::move(rest);
      result.grants.push_back(Grant{recipient.app, std::move(given), GrantKind::kLeftover});
    }
  }
  std::string reason = "no active app can use more GPUs";
  if (narrowest_unfit > 0) {
    reason = std::to_string(pool.size()) + " left, fewer than one whole job of any app that wants more (the narrowest needs " +
             std::to_string(narrowest_unfit) + ")";
  } else if (anyone_wanted) {
    reason = "every app that wants GPUs got all it can use";
  }
  for (GpuIndex g : pool) result.idle.push_back(IdleGpu{g, reason});
  return result;
}

}  // namespace themis::arbiter
