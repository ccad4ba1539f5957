#pragma once
// Two small SVG figures for `themis-sim compare --plot DIR`, written without a plotting library:
// the ρ CDF per policy (Themis Figs 9–10) and total GPU time per policy (Figs 11–12).
#include <string>
#include <vector>

#include "sim/metrics.h"

namespace themis::sim {

std::string rho_cdf_svg(const std::vector<RunSummary>& summaries);
std::string gpu_time_svg(const std::vector<RunSummary>& summaries);

}  // namespace themis::sim
