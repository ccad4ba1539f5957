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
// - Whole jobs: an app gets a count it can put to work, the most whole jobs its demand and the leftover
//   allow: a count its model says it can use (AppModel::usable_extra, past the GPUs it won in this round's
//   auction) and a multiple of its job width (gpus_per_job). An app none of whose jobs fits in what is
//   left gets nothing, so GPUs are never granted to an app that cannot start a job on them (an app whose
//   job is wider than the leftover no longer takes it all and leaves it idle). The model matters where an
//   app's jobs differ in width (themis-sim's apps: gangs of several sizes, a phase that doubles them), which
//   one job width cannot say. GPUs nobody can use stay idle, with the reason.
// - Placement: a recipient that can say how well a set is placed for it (`model`, AppModel::placement_score)
//   is not given a set it would run at under kMinLeftoverPlacementScore of the speed the best placed set of
//   that size in the cluster would give it; it gets fewer whole jobs' worth, more locally placed, or nothing. Without a model, or
//   with one that cannot tell (a coordinator app whose launcher reports no slowdowns), every set counts as well placed. Why: an 8-GPU gang that runs 8×
//   slower across machines holds eight GPUs for eight times as long, and the next event may free a machine
//   (docs/arbiter.md, "Leftover").
#include <span>
#include <vector>

#include "policy/arbiter/policy.h"

namespace themis::arbiter {

// Below this placement score (1/slowdown) a leftover set is not given (see above).
inline constexpr double kMinLeftoverPlacementScore = 0.5;

// Whether `gpus` let `app` run at kMinLeftoverPlacementScore of the speed it would have on the best placed set of
// that size anywhere in the cluster, busy or free (AppModel::placement_score): a cluster of one-GPU servers has no
// better set for a gang than a spread one, so waiting would gain it nothing. The leftover's placement rule and the
// machine hold (machine_hold.h) both ask it.
bool placed_well_enough(const Cluster& cluster, const AppModel& app, std::span<const GpuIndex> gpus);

struct LeftoverRecipient {
  AppId app = 0;
  int demand = 0;     // GPUs it can still use
  int job_width = 1;  // GPUs one of its jobs needs; it is given whole jobs only
  const AppModel* model = nullptr;  // says which counts it can use and how well a set is placed for it; null: every set is
  int won = 0;        // GPUs it won in this round's auction (its model counts them as not yet held)
};

struct LeftoverResult {
  std::vector<Grant> grants;  // kind kLeftover, one per app at most
  std::vector<IdleGpu> idle;
};

LeftoverResult distribute_leftover(const Cluster& cluster, std::vector<GpuIndex> pool,
                                   std::vector<LeftoverRecipient> non_bidders,
                                   std::vector<LeftoverRecipient> bidders, Rng& rng);

}  // namespace themis::arbiter
