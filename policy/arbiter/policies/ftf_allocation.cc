#include "policy/arbiter/policies/ftf_allocation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace themis::arbiter::policies {
namespace {

void check(bool ok, std::size_t m, const char* field) {
  if (!ok) throw std::invalid_argument("ftf allocation: apps[" + std::to_string(m) + "]." + field + " out of range");
}

// The fraction app `a` needs to finish at ρ ≤ target; > 1 when even running all the time is not enough.
double needed(const FtfApp& a, double target) {
  if (a.remaining <= 0) return 0;
  const double slack = target * a.isolated - a.elapsed;
  return slack > 0 ? a.remaining / slack : 2.0;
}

double load(const std::vector<FtfApp>& apps, double target) {
  double used = 0;
  for (const FtfApp& a : apps) used += needed(a, target) * a.demand;
  return used;
}

}  // namespace

FtfAllocation finish_time_fair_allocation(const std::vector<FtfApp>& apps, int gpus) {
  if (gpus < 1) throw std::invalid_argument("ftf allocation: gpus must be >= 1, got " + std::to_string(gpus));
  // The lowest possible ρ*: every app running all the time.
  double lo = 0;
  for (std::size_t m = 0; m < apps.size(); ++m) {
    const FtfApp& a = apps[m];
    check(std::isfinite(a.elapsed) && a.elapsed >= 0, m, "elapsed");
    check(std::isfinite(a.remaining) && a.remaining >= 0, m, "remaining");
    check(std::isfinite(a.isolated) && a.isolated > 0, m, "isolated");
    check(a.demand >= 1, m, "demand");
    if (a.remaining > 0) lo = std::max(lo, (a.elapsed + a.remaining) / a.isolated);
  }
  FtfAllocation out;
  out.fraction.assign(apps.size(), 0);
  if (lo == 0) return out;
  double target = lo;
  if (load(apps, lo) > gpus) {
    double hi = lo * 2;
    while (load(apps, hi) > gpus) hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; ++i) {
      const double mid = (lo + hi) / 2;
      (load(apps, mid) > gpus ? lo : hi) = mid;
    }
    target = hi;
  }
  out.max_rho = target;
  for (std::size_t m = 0; m < apps.size(); ++m) out.fraction[m] = std::min(1.0, needed(apps[m], target));
  return out;
}

}  // namespace themis::arbiter::policies
