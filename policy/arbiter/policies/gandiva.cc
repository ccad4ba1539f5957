// Gandiva as the Themis paper models it (§6.1, "ideal efficiency"): on every resource-available event
// all apps report placement preferences and GPUs go greedily, highest preference first. Each step
// gives one app the best-placed bundle it can use from what is still free; the app whose bundle scores
// highest (1/S, ties: the larger bundle, then the lower id) wins the step. Time-slicing and packing
// are not modelled, as in the paper.
#include "policy/arbiter/policies/bundle_choice.h"
#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/policies/round_allocation.h"

namespace themis::arbiter::policies {
namespace {

class Gandiva final : public Policy {
 public:
  std::string_view name() const override { return "gandiva"; }
  RoundOutcome run_round(const RoundInput& input, Rng& /*rng*/) override {
    RoundAllocation alloc(input);
    while (!alloc.free().empty()) {
      AppModel* pick = nullptr;
      std::vector<GpuIndex> pick_bundle;
      double best = -1;
      for (AppModel* app : alloc.wanting()) {
        auto bundle = best_placed_bundle(*input.cluster, alloc.free(), alloc.held_and_granted(app),
                                         alloc.demand_left(app));
        const double score = app->placement_score(bundle);
        if (pick == nullptr || score > best || (score == best && bundle.size() > pick_bundle.size())) {
          pick = app;
          pick_bundle = std::move(bundle);
          best = score;
        }
      }
      if (pick == nullptr) break;
      alloc.grant(pick, pick_bundle);
    }
    return alloc.finish();
  }
};

}  // namespace

std::unique_ptr<Policy> make_gandiva() { return std::make_unique<Gandiva>(); }

}  // namespace themis::arbiter::policies
