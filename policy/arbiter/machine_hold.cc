#include "policy/arbiter/machine_hold.h"

#include <algorithm>
#include <limits>

#include "policy/arbiter/leftover.h"
#include "policy/arbiter/placement.h"

namespace themis::arbiter {

std::optional<MachineHold> hold_machine_for_worst_gang(const RoundInput& input, std::span<AppModel* const> ranked) {
  if (ranked.empty() || input.free_gpus.empty() || input.cluster == nullptr) return std::nullopt;
  const Cluster& cluster = *input.cluster;
  const AppModel& worst = *ranked.front();
  const int offered = static_cast<int>(input.free_gpus.size());
  int gang = 0;  // the fewest GPUs it can put to work
  for (int n = 1; n <= offered && gang == 0; ++n) gang = worst.usable_extra(n);
  if (gang == 0) return std::nullopt;

  std::vector<GpuIndex> every(static_cast<std::size_t>(cluster.size()));
  for (GpuIndex g = 0; g < cluster.size(); ++g) every[static_cast<std::size_t>(g)] = g;
  const double best = worst.placement_score(most_local_subset(cluster, every, gang, GroupPreference::kBestFit));
  const double threshold = kMinLeftoverPlacementScore * best;
  if (worst.placement_score(most_local_subset(cluster, input.free_gpus, gang, GroupPreference::kBestFit)) >= threshold)
    return std::nullopt;

  // The machine that first holds a well-placed gang: its free GPUs now, then the other apps' leases there in
  // the order they end (not on draining machines, whose GPUs are not offered again).
  constexpr Seconds kNever = std::numeric_limits<Seconds>::infinity();
  std::optional<MachineHold> hold;
  Seconds earliest = kNever;
  for (int m = 0; m < static_cast<int>(cluster.machines().size()); ++m) {
    std::vector<GpuIndex> mine;
    for (GpuIndex g = 0; g < cluster.size(); ++g)
      if (cluster.gpu(g).machine == m) mine.push_back(g);
    if (static_cast<int>(mine.size()) < gang) continue;
    if (worst.placement_score(most_local_subset(cluster, mine, gang, GroupPreference::kBestFit)) < threshold) continue;
    std::vector<GpuIndex> free_here;
    for (GpuIndex g : input.free_gpus)
      if (cluster.gpu(g).machine == m) free_here.push_back(g);
    if (free_here.empty()) continue;
    std::vector<Seconds> returns;
    for (const Lease& lease : input.leases)
      if (cluster.gpu(lease.gpu).machine == m && lease.app != worst.id() &&
          !std::binary_search(input.draining.begin(), input.draining.end(), lease.gpu))
        returns.push_back(lease.expiry);
    const int missing = gang - static_cast<int>(free_here.size());
    if (missing > static_cast<int>(returns.size())) continue;
    std::sort(returns.begin(), returns.end());
    const Seconds fits_at = missing <= 0 ? input.now : returns[static_cast<std::size_t>(missing - 1)];
    const bool better = fits_at < earliest || (fits_at == earliest && hold && free_here.size() > hold->gpus.size());
    if (!hold || better) {
      earliest = fits_at;
      hold = MachineHold{worst.id(), gang, m, std::move(free_here), ""};
    }
  }
  if (!hold) return std::nullopt;
  hold->reason = "held for app " + std::to_string(hold->app) + ", the worst ρ, whose gang needs " + std::to_string(gang) +
                 " GPUs placed together: " + std::to_string(hold->gpus.size()) + " free on machine " +
                 cluster.machines().at(static_cast<std::size_t>(hold->machine)).name + " now, more as leases end";
  return hold;
}

}  // namespace themis::arbiter
