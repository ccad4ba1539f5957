#include "policy/arbiter/policies/marginal_greedy.h"

#include <utility>
#include <vector>

#include "policy/arbiter/policies/bundle_choice.h"

namespace themis::arbiter::policies {

RoundOutcome marginal_greedy(const RoundInput& input, bool placement_aware, const MarginalGain& gain) {
  RoundAllocation alloc(input);
  while (!alloc.free().empty()) {
    AppModel* pick = nullptr;
    std::vector<GpuIndex> pick_gpus;
    double best = 0;
    for (AppModel* app : alloc.wanting()) {
      const int step = alloc.step(app);
      std::vector<GpuIndex> next = placement_aware
                                       ? best_placed_bundle(*input.cluster, alloc.free(), alloc.held_and_granted(app), step)
                                       : first_fit_bundle(alloc.free(), step);
      const double g = gain(*app, alloc.granted(app), next);
      if (pick == nullptr || g > best) {
        pick = app;
        pick_gpus = std::move(next);
        best = g;
      }
    }
    if (pick == nullptr) break;
    alloc.grant(pick, pick_gpus);
  }
  return alloc.finish();
}

}  // namespace themis::arbiter::policies
