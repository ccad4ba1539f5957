// Tiresias as the Themis paper models it (§6.1, "ideal fairness"): apps report their attained GPU
// service and free GPUs go to the least attained service first (LAS). Placement-agnostic: first-fit.
#include <algorithm>

#include "policy/arbiter/policies/bundle_choice.h"
#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/policies/round_allocation.h"

namespace themis::arbiter::policies {
namespace {

class Tiresias final : public Policy {
 public:
  std::string_view name() const override { return "tiresias"; }
  RoundOutcome run_round(const RoundInput& input, Rng& /*rng*/) override {
    RoundAllocation alloc(input);
    auto apps = alloc.wanting();
    std::stable_sort(apps.begin(), apps.end(), [](const AppModel* a, const AppModel* b) {
      return a->attained_service() < b->attained_service();
    });
    for (AppModel* app : apps) alloc.grant(app, first_fit_bundle(alloc.free(), alloc.demand_left(app)));
    return alloc.finish();
  }
};

}  // namespace

std::unique_ptr<Policy> make_tiresias() { return std::make_unique<Tiresias>(); }

}  // namespace themis::arbiter::policies
