#pragma once
// The leftover (Pseudocode 1 lines 10 and 21): GPUs nobody won plus the winners' hidden payments, given
// at random to the apps that did not take part in the auction (work conservation).
//
// Decisions the paper leaves open (docs/arbiter.md):
// - Granularity: per app, not per GPU. Recipients are visited in a random order (seeded Rng); each
//   gets min(its extra demand, what is left) GPUs in one piece, the most local set the leftover allows,
//   entering the smallest rack/machine/slot that holds its demand so large blocks stay whole.
// - Tiers: first the apps that were not offered the auction; when none of them wants more, the auction's
//   bidders with demand they still have (after what they kept), again in random order. A GPU no app
//   wants is idle, with the reason.
#include <span>
#include <vector>

#include "policy/arbiter/policy.h"

namespace themis::arbiter {

struct LeftoverRecipient {
  AppId app = 0;
  int demand = 0;  // GPUs it can still use
};

struct LeftoverResult {
  std::vector<Grant> grants;  // kind kLeftover, one per app at most
  std::vector<IdleGpu> idle;
};

LeftoverResult distribute_leftover(const Cluster& cluster, std::vector<GpuIndex> pool,
                                   std::vector<LeftoverRecipient> non_bidders,
                                   std::vector<LeftoverRecipient> bidders, Rng& rng);

}  // namespace themis::arbiter
