#include "bidder/slowdown.h"

#include <algorithm>
#include <string>

#include "bidder/input_checks.h"

namespace themis::bidder {
namespace {
constexpr const char* kWhere = "slowdown model";
}

SlowdownModel::SlowdownModel(const SlowdownPriors& priors)
    : prior_{priors.same_slot, priors.same_machine, priors.same_rack, priors.cross_rack} {
  const char* names[] = {"same_slot", "same_machine", "same_rack", "cross_rack"};
  for (std::size_t i = 0; i < prior_.size(); ++i) detail::require_at_least(kWhere, names[i], prior_[i], 1);
}

std::size_t SlowdownModel::index(Locality level) {
  const int i = static_cast<int>(level);
  if (i < 0 || i >= kLocalityLevels) detail::reject(kWhere, "level", "a Locality value", i);
  return static_cast<std::size_t>(i);
}

void SlowdownModel::observe(Locality level, int gpus, Seconds observed_iter_time, Seconds serial_iter_time) {
  const std::size_t i = index(level);
  detail::require_at_least(kWhere, "gpus", gpus, 1);
  detail::require_positive(kWhere, "observed_iter_time", observed_iter_time);
  detail::require_positive(kWhere, "serial_iter_time", serial_iter_time);
  sum_[i] += observed_iter_time * gpus / serial_iter_time;
  ++count_[i];
}

double SlowdownModel::slowdown(Locality level) const {
  const std::size_t i = index(level);
  if (count_[i] == 0) return prior_[i];
  return std::max(1.0, sum_[i] / count_[i]);
}

}  // namespace themis::bidder
