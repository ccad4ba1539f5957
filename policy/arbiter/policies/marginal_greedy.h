#pragma once
// One step at a time to the app with the highest marginal gain, the shape shared by Optimus (throughput
// scaling) and SLAQ (loss decrease). A step is one GPU, or an app's narrowest waiting gang when its jobs
// are rigid (RoundAllocation::step). `gain(app, granted, next)` values adding the GPUs `next` to what
// the app was granted so far this round; ties go to the lower app id.
#include <functional>
#include <span>

#include "policy/arbiter/policies/round_allocation.h"

namespace themis::arbiter::policies {

using MarginalGain = std::function<double(AppModel& app, std::span<const GpuIndex> granted, std::span<const GpuIndex> next)>;

// `placement_aware`: the candidate GPUs are those best placed next to the app's GPUs; otherwise the
// first free ones.
RoundOutcome marginal_greedy(const RoundInput& input, bool placement_aware, const MarginalGain& gain);

}  // namespace themis::arbiter::policies
