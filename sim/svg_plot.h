#pragma once
// Small SVG figures for `themis-sim compare/sweep --plot DIR`, written without a plotting library:
// the ρ CDF per policy (Themis Figs 9–10) and total GPU time per policy (Figs 11–12).
#include <string>
#include <vector>

#include "sim/metrics.h"

namespace themis::sim {

// A plot axis: linear from 0 with ticks at round steps (1, 2 or 5 × 10^k), or, when the positive values
// span more than 10×, logarithmic between the decades around them (ticks at 1, 2, 5 × 10^k).
struct Axis {
  double lo = 0;
  double hi = 1;
  bool log = false;
  std::vector<double> ticks;
  double fraction(double v) const;  // 0 at lo, 1 at hi
};
Axis make_axis(const std::vector<double>& values);

std::string rho_cdf_svg(const std::vector<RunSummary>& summaries);
std::string gpu_time_svg(const std::vector<RunSummary>& summaries);
std::string max_rho_svg(const std::vector<RunSummary>& summaries);
std::string bar_svg(const std::string& title, const std::string& ylabel, const std::vector<std::string>& names,
                    const std::vector<double>& values);

// One line per series over the sweep's x values (Themis Figs 14-19).
struct Series {
  std::string name;
  std::vector<double> values;
};
std::string line_svg(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                     const std::vector<double>& xs, const std::vector<Series>& series);

}  // namespace themis::sim
