#include "policy/arbiter/whole_gpus.h"

#include <algorithm>
#include <cmath>

#include "policy/arbiter/placement.h"

namespace themis::arbiter {

std::string_view to_string(RoundingRule rule) {
  switch (rule) {
    case RoundingRule::kNearest: return "nearest";
    case RoundingRule::kLottery: return "lottery";
    case RoundingRule::kTimeShare: return "time-share";
  }
  return "unknown";
}

std::optional<RoundingRule> parse_rounding_rule(std::string_view text) {
  if (text == "nearest") return RoundingRule::kNearest;
  if (text == "lottery") return RoundingRule::kLottery;
  if (text == "time-share") return RoundingRule::kTimeShare;
  return std::nullopt;
}

int nearest_kept_count(double c, int k) {
  if (k <= 0 || !(c > 0)) return 0;
  // c arrives as exp(W_{-i}(PF) − W*_{-i}), a difference of sums of logs, so a true 3/4 may be
  // 0.7499999999999999; c·k within a relative kNearestTolerance below a half counts as the half.
  const double scaled = std::min(c, 1.0) * k;
  const auto rounded = static_cast<int>(std::floor(scaled * (1 + kNearestTolerance) + 0.5));
  return std::clamp(rounded, 1, k);
}

int nearest_kept_count(double c, int k, const UsableCount& usable) {
  const int nearest = nearest_kept_count(c, k);
  if (!usable || nearest == 0 || usable(nearest) >= nearest) return nearest;
  const int down = std::clamp(usable(nearest), 0, nearest);
  int up = 0;
  for (int n = nearest + 1; n <= k && up == 0; ++n)
    if (usable(n) >= n) up = n;
  if (up == 0) return down > 0 ? down : nearest;
  if (down == 0) return up;
  const double target = std::min(c, 1.0) * k * (1 + kNearestTolerance);
  return target - down < up - target ? down : up;
}

std::vector<GpuIndex> kept_gpus(const Cluster& cluster, std::span<const GpuIndex> bundle, double c,
                                RoundingRule rule, Rng& rng, const UsableCount& usable) {
  if (rule == RoundingRule::kLottery) {
    if (rng.uniform() < c) return {bundle.begin(), bundle.end()};
    return {};
  }
  if (rule == RoundingRule::kTimeShare) {
    if (!(c > 0)) return {};
    return {bundle.begin(), bundle.end()};
  }
  return most_local_subset(cluster, bundle, nearest_kept_count(c, static_cast<int>(bundle.size()), usable),
                           GroupPreference::kDensest);
}

double kept_lease_fraction(double c, RoundingRule rule) {
  if (rule != RoundingRule::kTimeShare || !(c > 0)) return 1.0;
  return std::min(c, 1.0);
}

}  // namespace themis::arbiter
