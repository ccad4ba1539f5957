#pragma once
// The machine hold: gang reservation by placement. The worst-ranked app's gang fits the offer by count, but
// every set of the offer would run it at under half the speed of the best placed set the cluster has
// (kMinLeftoverPlacementScore, AppModel::placement_score): say an 8-GPU gang 4x slower across machines among
// free GPUs scattered over machines that one-GPU jobs keep busy. Its bid then prices every row worse than
// waiting, the count reservation (reserve_for_worst_gang) does not start, and without a hold the free GPUs
// of the machine nearest to holding its gang go to others round after round. The hold keeps that machine's
// free GPUs idle for it; the rest of the offer is auctioned as usual (docs/arbiter.md, "Gang reservation").
// An app model that scores every set 1 (a coordinator app whose launcher reports no slowdowns) never starts one.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "policy/arbiter/policy.h"

namespace themis::arbiter {

struct MachineHold {
  AppId app = 0;
  int gang = 0;                 // GPUs its gang needs
  int machine = 0;              // index into Cluster::machines()
  std::vector<GpuIndex> gpus;   // sorted: the offer's GPUs on that machine, held idle this round
  std::string reason;
};

// `ranked`: the filtered apps, worst first. Nothing when the offer holds a set placed well enough for its gang,
// when its gang is wider than the offer and runs well enough split over two machines (the count reservation's
// case: any GPUs will do), or when no machine that could hold its gang well has a free GPU now.
std::optional<MachineHold> hold_machine_for_worst_gang(const RoundInput& input, std::span<AppModel* const> ranked);

}  // namespace themis::arbiter
