// SRSF (Themis §6.1): shortest remaining service first, one GPU at a time, with accurate knowledge of
// the remaining service. Placement-agnostic: first-fit.
#include <limits>

#include "policy/arbiter/policies/bundle_choice.h"
#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/policies/round_allocation.h"

namespace themis::arbiter::policies {
namespace {

class Srsf final : public Policy {
 public:
  std::string_view name() const override { return "srsf"; }
  RoundOutcome run_round(const RoundInput& input, Rng& /*rng*/) override {
    RoundAllocation alloc(input);
    while (!alloc.free().empty()) {
      AppModel* pick = nullptr;
      Seconds best = std::numeric_limits<Seconds>::infinity();
      for (AppModel* app : alloc.wanting()) {
        const Seconds left = app->remaining_service();
        if (pick == nullptr || left < best) {
          pick = app;
          best = left;
        }
      }
      if (pick == nullptr) break;
      alloc.grant(pick, first_fit_bundle(alloc.free(), alloc.step(pick)));
    }
    return alloc.finish();
  }
};

}  // namespace

std::unique_ptr<Policy> make_srsf() { return std::make_unique<Srsf>(); }

}  // namespace themis::arbiter::policies
