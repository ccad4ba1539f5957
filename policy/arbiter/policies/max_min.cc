// Max-min fairness, instantaneous (DRF with one resource): one GPU at a time to the app holding the
// fewest GPUs (held plus granted this round). Placement-agnostic: first-fit. This is the scheme whose
// allocations Themis Figure 5 shows violating sharing incentive.
#include "policy/arbiter/policies/bundle_choice.h"
#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/policies/round_allocation.h"

namespace themis::arbiter::policies {
namespace {

class MaxMin final : public Policy {
 public:
  std::string_view name() const override { return "max-min"; }
  RoundOutcome run_round(const RoundInput& input, Rng& /*rng*/) override {
    RoundAllocation alloc(input);
    while (!alloc.free().empty()) {
      AppModel* pick = nullptr;
      std::size_t fewest = 0;
      for (AppModel* app : alloc.wanting()) {
        const std::size_t holds = alloc.held_and_granted(app).size();
        if (pick == nullptr || holds < fewest) {
          pick = app;
          fewest = holds;
        }
      }
      if (pick == nullptr) break;
      alloc.grant(pick, first_fit_bundle(alloc.free(), 1));
    }
    return alloc.finish();
  }
};

}  // namespace

std::unique_ptr<Policy> make_max_min() { return std::make_unique<MaxMin>(); }

}  // namespace themis::arbiter::policies
