#pragma once
// Run-level figures of merit (Themis §6.1): finish-time fairness (max ρ, its CDF, Jain's index,
// fraction of apps with ρ > 1), efficiency (total GPU time), makespan, average JCT, placement score.
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace themis::sim {

struct RunSummary {
  std::string policy;
  std::size_t apps = 0;
  std::size_t finished = 0;
  double max_rho = 0;
  double median_rho = 0;
  double jain_rho = 0;        // (Σρ)² / (n·Σρ²)
  double frac_rho_gt_1 = 0;
  Seconds gpu_time = 0;       // GPU-seconds, all apps
  Seconds makespan = 0;       // last finish − first arrival
  Seconds avg_jct = 0;
  double avg_placement_score = 0;
  double demand_ratio = 0;       // time-averaged GPU demand of active apps / cluster GPUs, while apps arrive
  double peak_demand_ratio = 0;
  Seconds liar_jct = -1;         // sweep --param lie: the lying app's JCT, the others' mean
  Seconds others_avg_jct = -1;
  // sweep --param lie, against the same policy's run at the sweep's first value (the truthful run when it is 0):
  // the share of the truthful apps whose JCT fell by a larger fraction than the liar's, and the median of the
  // truthful apps' |relative JCT change|. A lie moves every app's trajectory; a liar's gain that many truthful
  // apps also see is the perturbation, not something the lie bought.
  double others_gained_more = -1;
  double others_median_abs_change = -1;
  std::vector<double> rho_sorted;  // the ρ CDF: value k is the (k+1)/n quantile
  SimStats stats;
};

RunSummary summarize(const SimResult& result, int cluster_gpus);

}  // namespace themis::sim
