// FIFO: apps in arrival order (app ids are given in arrival order) each take what they can use,
// first-fit. The simplest reference point; not one of the paper's baselines.
#include "policy/arbiter/policies/bundle_choice.h"
#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/policies/round_allocation.h"

namespace themis::arbiter::policies {
namespace {

class Fifo final : public Policy {
 public:
  std::string_view name() const override { return "fifo"; }
  RoundOutcome run_round(const RoundInput& input, Rng& /*rng*/) override {
    RoundAllocation alloc(input);
    for (AppModel* app : alloc.wanting()) alloc.grant(app, first_fit_bundle(alloc.free(), alloc.demand_left(app)));
    return alloc.finish();
  }
};

}  // namespace

std::unique_ptr<Policy> make_fifo() { return std::make_unique<Fifo>(); }

}  // namespace themis::arbiter::policies
