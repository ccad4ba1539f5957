#pragma once
// Turning the fractional partial allocation c_i·G_i into whole GPUs (architecture.md §3). The papers
// leave this open; it is kept in this one place and chosen by a setting so the simulator can compare.
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "core/topology.h"

namespace themis::arbiter {

enum class RoundingRule {
  kNearest,  // keep ⌊c·k + ½⌋ of the k GPUs (at least 1 when c > 0), the most local subset; whole gangs only
  kLottery,  // keep the whole bundle with probability c, else none
  // keep the whole bundle for c of the lease: the payment is taken in GPU-time, the gang and its
  // placement stay whole, and the GPUs return to the pool for the next auction when the shorter lease ends
  kTimeShare,
};
std::string_view to_string(RoundingRule rule);
std::optional<RoundingRule> parse_rounding_rule(std::string_view text);  // "nearest" | "lottery" | "time-share"

// Relative tolerance of the nearest rule: c·k is rounded as c·k·(1 + 1e-9), so a half that the log-space
// computation of c leaves a few ulps short (0.75·2 as 1.4999999999999998) still rounds up. Payment
// factors closer than this to a half from below are indistinguishable from it in log space.
inline constexpr double kNearestTolerance = 1e-9;

// How many of k GPUs the nearest rule keeps for payment factor c: ⌊c·k·(1 + kNearestTolerance) + ½⌋,
// at least 1 when c > 0, at most k.
int nearest_kept_count(double c, int k);

// How many of n more GPUs the winner can put to work (AppModel::usable_extra): a rigid gang starts only
// on all of its GPUs. Empty: any count.
using UsableCount = std::function<int(int)>;

// The nearest rule for a winner whose jobs are rigid gangs: of the counts it can put to work, the one
// nearest c·k (ties: the larger, as ⌊x + ½⌋ does), and at least one usable count when c > 0, as the plain
// rule keeps at least one GPU. Keeping 3 of a 4-GPU gang's bundle would leave 3 GPUs that start nothing:
// the payment is then taken as a whole gang or not at all. Equals nearest_kept_count(c, k) when every
// count is usable, and when no count up to k is.
int nearest_kept_count(double c, int k, const UsableCount& usable);

// The GPUs of `bundle` (sorted) that the winner keeps; the rest become leftover. The lottery draws
// one rng.uniform(); the other rules draw nothing. `usable`: see nearest_kept_count.
std::vector<GpuIndex> kept_gpus(const Cluster& cluster, std::span<const GpuIndex> bundle, double c,
                                RoundingRule rule, Rng& rng, const UsableCount& usable = {});

// The share of the lease duration the kept GPUs are leased for: c (at most 1) under time-share, else 1.
double kept_lease_fraction(double c, RoundingRule rule);

}  // namespace themis::arbiter
