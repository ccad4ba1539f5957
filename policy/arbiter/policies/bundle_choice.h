#pragma once
// Choosing which free GPUs make up a bundle, shared by the baseline policies and the simulator's app
// scheduler. Pure functions of the cluster and the sets passed in.
#include <span>
#include <vector>

#include "core/ids.h"
#include "core/topology.h"

namespace themis::arbiter::policies {

// The first `count` GPUs of `free` (sorted): what a placement-agnostic scheduler takes.
std::vector<GpuIndex> first_fit_bundle(std::span<const GpuIndex> free, int count);

// `count` GPUs of `free` spanning the narrowest level possible: one slot, else one machine, else one
// rack, else as few machines as possible. Among equal choices it prefers machines (racks) where
// `near` already has GPUs, then the tightest fit (to keep big holes for big jobs), then lower indices.
// Returns a sorted bundle of min(count, |free|) GPUs.
std::vector<GpuIndex> best_placed_bundle(const Cluster& cluster, std::span<const GpuIndex> free,
                                         std::span<const GpuIndex> near, int count);

// Removes `taken` (sorted) from `free` (sorted).
void remove_gpus(std::vector<GpuIndex>& free, std::span<const GpuIndex> taken);

}  // namespace themis::arbiter::policies
