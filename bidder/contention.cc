#include "bidder/contention.h"

#include "bidder/input_checks.h"

namespace themis::bidder {
namespace {
constexpr const char* kWhere = "contention average";
}

ContentionAverage::ContentionAverage(Seconds start, int active_apps)
    : start_(start), last_change_(start), current_(active_apps) {
  if (!std::isfinite(start)) detail::reject(kWhere, "start", "finite", start);
  detail::require_at_least(kWhere, "active_apps", active_apps, 1);
}

void ContentionAverage::observe(Seconds t, int active_apps) {
  if (!std::isfinite(t) || t < last_change_)
    detail::reject(kWhere, "t", ">= the last observation (" + detail::format_number(last_change_) + ")", t);
  detail::require_at_least(kWhere, "active_apps", active_apps, 1);
  weighted_sum_ += current_ * (t - last_change_);
  last_change_ = t;
  current_ = active_apps;
}

double ContentionAverage::average(Seconds now) const {
  if (!std::isfinite(now) || now < last_change_)
    detail::reject(kWhere, "now", ">= the last observation (" + detail::format_number(last_change_) + ")", now);
  const Seconds life = now - start_;
  if (life <= 0) return current_;
  return (weighted_sum_ + current_ * (now - last_change_)) / life;
}

}  // namespace themis::bidder
