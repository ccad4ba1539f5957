#pragma once
// Picking k GPUs out of a set so that they sit as close together as the set allows (the fewest slots,
// machines, racks spanned). Used to choose which GPUs a winner keeps after its hidden payment and
// which leftover GPUs an app receives.
#include <span>
#include <vector>

#include "core/topology.h"

namespace themis::arbiter {

enum class GroupPreference {
  kDensest,  // enter the group (rack, machine, slot) with the most GPUs: keeps a bundle's core
  kBestFit,  // enter the smallest group that still holds k: leaves large blocks whole for others
};

// A subset of `gpus` (sorted, distinct) of size min(k, |gpus|), sorted. Top down: if one rack holds
// k of them, stay in it (and likewise machine, slot); otherwise take whole groups, largest first, and
// complete from the next group the same way.
std::vector<GpuIndex> most_local_subset(const Cluster& cluster, std::span<const GpuIndex> gpus, int k,
                                        GroupPreference preference);

}  // namespace themis::arbiter
