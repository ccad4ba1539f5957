// SRTF (Themis §6.1): apps report their remaining time with an allocation from the free GPUs; the
// shortest remaining time goes first and gets the best-placed bundle it can use (better packing means
// a shorter remaining time, so placement counts only through it).
#include <limits>

#include "policy/arbiter/policies/bundle_choice.h"
#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/policies/round_allocation.h"

namespace themis::arbiter::policies {
namespace {

class Srtf final : public Policy {
 public:
  std::string_view name() const override { return "srtf"; }
  RoundOutcome run_round(const RoundInput& input, Rng& /*rng*/) override {
    RoundAllocation alloc(input);
    while (!alloc.free().empty()) {
      AppModel* pick = nullptr;
      std::vector<GpuIndex> pick_bundle;
      Seconds best = std::numeric_limits<Seconds>::infinity();
      for (AppModel* app : alloc.wanting()) {
        auto bundle = best_placed_bundle(*input.cluster, alloc.free(), alloc.held_and_granted(app),
                                         alloc.demand_left(app));
        std::vector<GpuIndex> extra = alloc.granted(app);
        extra.insert(extra.end(), bundle.begin(), bundle.end());
        const Seconds left = app->remaining_time(extra);
        if (pick == nullptr || left < best) {
          pick = app;
          pick_bundle = std::move(bundle);
          best = left;
        }
      }
      if (pick == nullptr) break;
      alloc.grant(pick, pick_bundle);
    }
    return alloc.finish();
  }
};

}  // namespace

std::unique_ptr<Policy> make_srtf() { return std::make_unique<Srtf>(); }

}  // namespace themis::arbiter::policies
