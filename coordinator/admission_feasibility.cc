#include "coordinator/admission_feasibility.h"

#include <algorithm>
#include <numeric>

namespace themis::coordinator {

namespace {
std::string plural(int n, const std::string& one) { return std::to_string(n) + " " + one + (n == 1 ? "" : "s"); }
}  // namespace

LargestPlacement largest_placement(const std::vector<int>& gpus_per_host) {
  LargestPlacement p;
  p.gpus = std::accumulate(gpus_per_host.begin(), gpus_per_host.end(), 0);
  const int hosts = static_cast<int>(gpus_per_host.size());
  const bool uniform = std::all_of(gpus_per_host.begin(), gpus_per_host.end(), [&](int g) { return g == gpus_per_host.front(); });
  p.described = std::to_string(p.gpus) + " (" + plural(hosts, "host");
  if (hosts == 0) {
    p.described += ")";
  } else if (uniform) {
    p.described += " x " + plural(gpus_per_host.front(), "GPU") + ")";
  } else {
    std::string sum;
    for (int g : gpus_per_host) sum += (sum.empty() ? "" : " + ") + std::to_string(g);
    p.described += ": " + sum + " GPUs)";
  }
  return p;
}

std::optional<std::string> infeasibility(int gpus_per_job, const std::vector<int>& gpus_per_host) {
  if (gpus_per_host.empty()) return std::nullopt;
  const LargestPlacement largest = largest_placement(gpus_per_host);
  if (gpus_per_job <= largest.gpus) return std::nullopt;
  return "job needs " + plural(gpus_per_job, "GPU") + "; the largest the registered cluster can give one job is " +
         largest.described;
}

bool is_infeasible_reason(const std::string& admission) { return admission.rfind(kInfeasiblePrefix, 0) == 0; }

}  // namespace themis::coordinator
