#include "policy/arbiter/leftover.h"

#include <algorithm>

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
  for (auto* tier : {&non_bidders, &bidders}) {
    std::erase_if(*tier, [](const LeftoverRecipient& r) { return r.demand <= 0; });
    if (tier->empty()) continue;
    anyone_wanted = true;
    if (pool.empty()) break;
    shuffle(*tier, rng);
    for (const LeftoverRecipient& recipient : *tier) {
      if (pool.empty()) break;
      std::vector<GpuIndex> given =
          most_local_subset(cluster, pool, recipient.demand, GroupPreference::kBestFit);
      std::vector<GpuIndex> rest;
      std::set_difference(pool.begin(), pool.end(), given.begin(), given.end(), std::back_inserter(rest));
      pool = std::move(rest);
      result.grants.push_back(Grant{recipient.app, std::move(given), GrantKind::kLeftover});
    }
  }
  for (GpuIndex g : pool)
    result.idle.push_back(IdleGpu{g, anyone_wanted ? "every app that wants GPUs got all it can use"
                                                   : "no active app can use more GPUs"});
  return result;
}

}  // namespace themis::arbiter
