#include "sim/metrics.h"

#include <algorithm>

namespace themis::sim {

RunSummary summarize(const SimResult& result, int cluster_gpus) {
  RunSummary s;
  s.policy = result.policy;
  s.stats = result.stats;
  s.apps = result.apps.size();
  if (result.apps.empty()) return s;
  double sum = 0;
  double sum_sq = 0;
  double jct = 0;
  double placement = 0;
  Seconds first = result.apps.front().arrival;
  Seconds last = first;
  for (const AppResult& a : result.apps) {
    if (a.finished) ++s.finished;
    s.rho_sorted.push_back(a.rho);
    sum += a.rho;
    sum_sq += a.rho * a.rho;
    if (a.rho > 1) s.frac_rho_gt_1 += 1;
    s.gpu_time += a.gpu_time;
    jct += a.jct;
    placement += a.placement_score;
    first = std::min(first, a.arrival);
    last = std::max(last, a.finish);
  }
  const double n = static_cast<double>(result.apps.size());
  std::sort(s.rho_sorted.begin(), s.rho_sorted.end());
  s.max_rho = s.rho_sorted.back();
  s.median_rho = s.rho_sorted[s.rho_sorted.size() / 2];
  s.jain_rho = sum_sq > 0 ? sum * sum / (n * sum_sq) : 1.0;
  s.frac_rho_gt_1 /= n;
  s.makespan = last - first;
  s.avg_jct = jct / n;
  s.avg_placement_score = placement / n;
  const Seconds span = result.stats.arrival_span;
  if (span > 0 && cluster_gpus > 0) s.demand_ratio = result.stats.demand_gpu_seconds / (span * cluster_gpus);
  if (cluster_gpus > 0) s.peak_demand_ratio = static_cast<double>(result.stats.peak_demand) / cluster_gpus;
  return s;
}

}  // namespace themis::sim
