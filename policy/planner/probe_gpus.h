#pragma once
// The GPU each new app's first-iteration probe runs on (docs/reliability.md, "Probe").
#include <map>
#include <span>

#include "core/topology.h"

namespace themis::planner {

struct ProbeRequest {
  AppId app = 0;
  int gang = 1;  // the app's GPUs per job: its gang grows around the probe's GPU once the probe passes
};

// One GPU each for `waiting` (in order) out of `free`. From the machine with the fewest free GPUs that still
// holds the app's whole gang, so that the gang can start on one machine around its probe GPU without taking
// a machine another gang needs more; when no machine holds it, from the machine with the fewest free GPUs, so
// that whole free machines stay whole for gangs. Apps beyond the free GPUs get none.
std::map<AppId, GpuIndex> pick_probe_gpus(std::span<const ProbeRequest> waiting, std::span<const GpuIndex> free,
                                          const Cluster& cluster);

}  // namespace themis::planner
