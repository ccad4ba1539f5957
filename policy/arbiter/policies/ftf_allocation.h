#pragma once
// Gavel's finish-time-fairness allocation (Narayanan et al., OSDI'20, §4.2 "Minimize maximum
// finish-time fairness"), on one GPU type: app m runs a fraction x_m of the time on its whole demand
// d_m, and
//
//   ρ_m(x_m) = (elapsed_m + remaining_m / x_m) / isolated_m,
//
// minimise max_m ρ_m subject to Σ_m x_m · d_m ≤ G and 0 < x_m ≤ 1. Gavel hands this to cvxpy (a convex
// program: remaining / x_m is convex). With one GPU type, ρ_m falls as x_m grows, so the optimum is the
// smallest target ρ* whose required fractions x_m(ρ*) = remaining_m / (ρ* · isolated_m − elapsed_m)
// fit in G; it is found by bisection to a relative 1e-9 (no solver needed).
#include <vector>

#include "core/ids.h"

namespace themis::arbiter::policies {

struct FtfApp {
  Seconds elapsed = 0;    // >= 0
  Seconds remaining = 0;  // >= 0; 0: done (x = 0)
  Seconds isolated = 1;   // > 0
  int demand = 1;         // >= 1
};

struct FtfAllocation {
  std::vector<double> fraction;  // x_m, one per app, in [0, 1]
  double max_rho = 0;            // the optimum ρ* (apps with no work left are not counted)
};

// Throws std::invalid_argument on a bad field (named, with the app's index) or gpus < 1.
FtfAllocation finish_time_fair_allocation(const std::vector<FtfApp>& apps, int gpus);

}  // namespace themis::arbiter::policies
