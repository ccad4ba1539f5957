#pragma once
// The set-ups of the paper's microbenchmarks that are not a generated workload on a preset cluster:
// the shrunk clusters of Fig 14 (contention) and the truth-telling experiment of Fig 18.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/topology.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace themis::sim {

// Keeps every k-th machine of each run of identical machines (k >= 1), so the machine mix, and roughly
// 1/k of the GPUs, remain. Named "<name>/k". Throws std::invalid_argument if k < 1.
ClusterSpec shrink_cluster(const ClusterSpec& spec, int k);

// Fig 18: 64 GPUs, one 8-GPU machine (four slots of two) and 28 2-GPU machines, in one rack.
ClusterSpec truth_telling_cluster();

// Fig 18: 8 identical apps arriving together, each two 8-GPU VGG16 jobs of 4 h serial work at 8 GPUs
// (demand 128 GPUs on 64: 2x contention); the 8-GPU machine is every app's preferred placement.
std::vector<AppSpec> truth_telling_workload();

// Fig 18's liar (sweep --liar): the app named `choice`, else the app of that index, else ("random") one
// drawn with `seed` among the apps with a multi-GPU job (a lie about spread placements changes nothing for
// the others). Throws std::invalid_argument naming the choice when it is none of these.
AppId choose_liar(const std::vector<AppSpec>& apps, const std::string& choice, std::uint64_t seed);

// How a lie compares with the perturbation it causes. Every app's relative JCT change from `first` (app id →
// JCT in the run the sweep started with, the truthful one when its first value is 0): the share of the
// truthful apps whose JCT fell by a larger fraction than the liar's, and the median of the truthful apps'
// |change|. Apps missing from `first` are left out. Both are -1 when no truthful app can be compared.
struct LieEffect {
  double others_gained_more = -1;
  double others_median_abs_change = -1;
};
LieEffect lie_effect(std::span<const AppResult> apps, AppId liar, const std::map<AppId, Seconds>& first);

}  // namespace themis::sim
