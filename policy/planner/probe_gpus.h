#pragma once
// The GPU each new app's first-iteration probe runs on (docs/reliability.md, "Probe").
#include <map>
#include <span>

#include "core/topology.h"

namespace themis::planner {

// One GPU each for `waiting` (in order) out of `free`, from the machines with the fewest free GPUs, so
// that whole free machines stay whole for gangs. Apps beyond the free GPUs get none.
std::map<AppId, GpuIndex> pick_probe_gpus(std::span<const AppId> waiting, std::span<const GpuIndex> free,
                                          const Cluster& cluster);

}  // namespace themis::planner
