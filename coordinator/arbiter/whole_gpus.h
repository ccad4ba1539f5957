#pragma once
// Turning the fractional partial allocation c_i·G_i into whole GPUs (architecture.md §3). The papers
// leave this open; it is kept in this one place and chosen by a setting so the simulator can compare.
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "core/topology.h"

namespace themis::arbiter {

enum class RoundingRule {
  kNearest,  // keep ⌊c·k + ½⌋ of the k GPUs (at least 1 when c > 0), the most local subset
  kLottery,  // keep the whole bundle with probability c, else none
};
std::string_view to_string(RoundingRule rule);
std::optional<RoundingRule> parse_rounding_rule(std::string_view text);  // "nearest" | "lottery"

// How many of k GPUs the nearest rule keeps for payment factor c.
int nearest_kept_count(double c, int k);

// The GPUs of `bundle` (sorted) that the winner keeps; the rest become leftover. The lottery draws
// one rng.uniform(); the nearest rule draws nothing.
std::vector<GpuIndex> kept_gpus(const Cluster& cluster, std::span<const GpuIndex> bundle, double c,
                                RoundingRule rule, Rng& rng);

}  // namespace themis::arbiter
