#include "policy/arbiter/policies/marginal_greedy.h"

#include "policy/arbiter/policies/bundle_choice.h"

namespace themis::arbiter::policies {

RoundOutcome marginal_greedy(const RoundInput& input, bool placement_aware, const MarginalGain& gain) {
  RoundAllocation alloc(input);
  while (!alloc.free().empty()) {
    AppModel* pick = nullptr;
    GpuIndex pick_gpu = 0;
    double best = 0;
    for (AppModel* app : alloc.wanting()) {
      const GpuIndex next = placement_aware
                                ? best_placed_bundle(*input.cluster, alloc.free(), alloc.held_and_granted(app), 1)[0]
                                : alloc.free().front();
      const double g = gain(*app, alloc.granted(app), next);
      if (pick == nullptr || g > best) {
        pick = app;
        pick_gpu = next;
        best = g;
      }
    }
    if (pick == nullptr) break;
    const GpuIndex one[] = {pick_gpu};
    alloc.grant(pick, one);
  }
  return alloc.finish();
}

}  // namespace themis::arbiter::policies
