#pragma once
// Which of the app's free granted GPUs each of its jobs runs on. A job is a gang of `gpus_per_job`
// ranks, one per GPU, all started together. For each job in the given order the assignment takes the
// best-placed subset of the free GPUs:
//   - the narrowest group (a slot, then a machine, then a rack, then all free GPUs) with enough free
//     GPUs; among groups of that level the one with the fewest free GPUs (best fit, so larger groups
//     stay whole for the next gang);
//   - inside a wider group, GPUs from its fullest sub-groups first, so the gang spans as few machines
//     and slots as it can.
// Jobs that find too few free GPUs get none. Pure: the cluster and the GPU lists are values.
#include <span>
#include <vector>

#include "core/ids.h"
#include "core/topology.h"

namespace themis::launcher {

struct GangAssignment {
  int job = 0;
  std::vector<GpuIndex> gpus;  // sorted
};

// Throws std::invalid_argument on gpus_per_job < 1 or a free GPU outside the cluster.
std::vector<GangAssignment> assign_gangs(const Cluster& cluster, std::span<const GpuIndex> free_gpus,
                                         std::span<const int> jobs, int gpus_per_job);

// The best-placed subset of `count` GPUs of `free_gpus` (empty if there are fewer).
std::vector<GpuIndex> best_placed_subset(const Cluster& cluster, std::span<const GpuIndex> free_gpus, int count);

}  // namespace themis::launcher
