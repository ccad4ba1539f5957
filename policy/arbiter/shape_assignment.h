#pragma once
// Concrete GPUs for the shapes that won an auction (shape_problem.h). Demands are served from the
// narrowest groups up (single GPUs, then slots, machines, racks, the whole offer): a demand of group v
// takes free GPUs of v, and since v's capacity covers every demand inside v, each finds enough. Within
// a demand, the GPUs the bidder named in its row come first (a renewal names the GPUs its job runs
// on, so it does not migrate), then the most local set of the rest (placement.h).
#include <span>
#include <vector>

#include "core/topology.h"
#include "policy/arbiter/shape_problem.h"

namespace themis::arbiter {

// Per bidder, its GPUs (sorted; empty where choice is -1). `named[b]` are the GPUs bidder b's chosen
// row names. Throws std::logic_error if the choice exceeds a group's capacity.
std::vector<std::vector<GpuIndex>> assign_shapes(const Cluster& cluster, const ShapeProblem& problem,
                                                 const PackingChoice& choice,
                                                 std::span<const std::vector<GpuIndex>> named);

}  // namespace themis::arbiter
