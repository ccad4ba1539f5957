#include "bidder/contention.h"

#include <algorithm>
#include <cmath>

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

namespace {

// What one other app adds to Σ_j min(r_j, R): all of R when its time is unknown (present throughout, as the past
// average assumes), nothing once it is done.
double shared_time(Seconds own_remaining, Seconds r) {
  if (std::isnan(r)) return own_remaining;
  return r > 0 ? std::min(r, own_remaining) : 0.0;
}

bool known(Seconds own_remaining) { return std::isfinite(own_remaining) && own_remaining > 0; }

}  // namespace

double contention_ahead(Seconds own_remaining, std::span<const Seconds> others_remaining) {
  if (!known(own_remaining)) return 1.0 + static_cast<double>(others_remaining.size());
  double shared = 0;
  for (const Seconds r : others_remaining) shared += shared_time(own_remaining, r);
  return 1.0 + shared / own_remaining;
}

double contention_ahead(std::span<const Seconds> remaining, std::size_t self) {
  const Seconds own_remaining = remaining[self];
  if (!known(own_remaining)) return static_cast<double>(remaining.size());
  double shared = 0;
  for (std::size_t j = 0; j < remaining.size(); ++j)
    if (j != self) shared += shared_time(own_remaining, remaining[j]);
  return 1.0 + shared / own_remaining;
}

double lifetime_contention(double past_average, Seconds elapsed, double ahead, Seconds remaining) {
  if (!(std::isfinite(remaining) && remaining > 0) || !(std::isfinite(ahead) && ahead >= 1)) return past_average;
  const Seconds lived = std::isfinite(elapsed) ? std::max<Seconds>(0, elapsed) : 0;
  return (lived * past_average + remaining * ahead) / (lived + remaining);
}

}  // namespace themis::bidder
