// Max-min fairness with time-sharing in rounds, as Gavel runs it (its "max_min_fairness" policy is LAS:
// Narayanan et al., OSDI'20, §4.1): every app is entitled to its water-filled share of the cluster's
// GPUs (equal shares, an app wanting less than its share leaves the rest to the others); every round,
// when leases end, the free GPUs go first to the apps that have received the least service for their
// entitlement (attained GPU-seconds / share), each up to its share, then, work-conserving, to the
// same order up to what each can use (an app whose gang is wider than its share takes one gang on its
// turn). An app that has waited has attained less and moves ahead, so over
// rounds everyone gets an equal share of time: the rotation Gavel's priorities (allocation / received)
// produce. Ties go to a seeded random draw, not to the lower id. Placement-agnostic: first fit.
#include <algorithm>
#include <map>
#include <vector>

#include "policy/arbiter/policies/bundle_choice.h"
#include "policy/arbiter/policies/fair_shares.h"
#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/policies/round_allocation.h"

namespace themis::arbiter::policies {
namespace {

class MaxMin final : public Policy {
 public:
  std::string_view name() const override { return "max-min"; }
  RoundOutcome run_round(const RoundInput& input, Rng& rng) override {
    RoundAllocation alloc(input);
    const std::map<AppId, double> share = water_filled_shares(input);
    struct Ranked {
      AppModel* app;
      double served;  // attained GPU-seconds per entitled GPU
      double tie;
    };
    std::vector<Ranked> order;
    for (AppModel* app : alloc.wanting())
      order.push_back({app, app->attained_service() / std::max(share.at(app->id()), 1e-9), rng.uniform()});
    std::sort(order.begin(), order.end(), [](const Ranked& a, const Ranked& b) {
      return a.served != b.served ? a.served < b.served : a.tie < b.tie;
    });
    // Up to its share first, then what is left, in the same order. An app below its share whose
    // narrowest gang is wider than the share takes one gang when its turn comes: over rounds it then
    // runs a fraction share / gang of the time, as Gavel's time fractions give a wide job.
    for (const Ranked& r : order) {
      const int held = static_cast<int>(alloc.held_and_granted(r.app).size());
      const int below_share = static_cast<int>(share.at(r.app->id()) + 1e-9) - held;
      if (below_share <= 0 && held > 0) continue;
      const int want = std::max(below_share, alloc.step(r.app));
      const int n = alloc.usable(r.app, std::min(want, static_cast<int>(alloc.free().size())));
      if (n > 0) alloc.grant(r.app, first_fit_bundle(alloc.free(), n));
    }
    for (const Ranked& r : order) {
      const int n = alloc.usable(r.app, static_cast<int>(alloc.free().size()));
      if (n > 0) alloc.grant(r.app, first_fit_bundle(alloc.free(), n));
    }
    return alloc.finish();
  }
};

}  // namespace

std::unique_ptr<Policy> make_max_min() { return std::make_unique<MaxMin>(); }

}  // namespace themis::arbiter::policies
