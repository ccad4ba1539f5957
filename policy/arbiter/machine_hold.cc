#include "policy/arbiter/machine_hold.h"

#include <algorithm>
#include <limits>

#include "policy/arbiter/leftover.h"
#include "policy/arbiter/placement.h"

namespace themis::arbiter {

namespace {
// Whether `gang` GPUs split over two machines (half on each of the two largest machines that can take half, of
// one rack where a rack has two: the mildest spread) would run `app` at under kMinLeftoverPlacementScore of its
// best speed in this cluster. False where no two machines can take the halves, or where the cluster has no
// better set (every machine smaller than the gang).
bool spread_too_slow(const Cluster& cluster, const AppModel& app, int gang) {
  const int first_half = (gang + 1) / 2;
  std::vector<const Machine*> by_size;
  for (const Machine& m : cluster.machines())
    if (m.gpu_count() >= first_half) by_size.push_back(&m);
  if (by_size.size() < 2) return false;
  std::stable_sort(by_size.begin(), by_size.end(), [](const Machine* a, const Machine* b) { return a->gpu_count() > b->gpu_count(); });
  // The first pair (in that order) on one rack, else the two largest.
  const Machine* a = by_size[0];
  const Machine* b = by_size[1];
  bool one_rack = a->rack == b->rack;
  for (std::size_t i = 0; i < by_size.size() && !one_rack; ++i)
    for (std::size_t j = i + 1; j < by_size.size() && !one_rack; ++j)
      if (by_size[i]->rack == by_size[j]->rack) {
        a = by_size[i];
        b = by_size[j];
        one_rack = true;
      }
  std::vector<GpuIndex> spread;
  for (int i = 0; i < first_half; ++i) spread.push_back(a->first_gpu + i);
  for (int i = 0; i < gang - first_half; ++i) spread.push_back(b->first_gpu + i);
  std::sort(spread.begin(), spread.end());
  return !placed_well_enough(cluster, app, spread);
}
}  // namespace

std::optional<MachineHold> hold_machine_for_worst_gang(const RoundInput& input, std::span<AppModel* const> ranked) {
  if (ranked.empty() || input.free_gpus.empty() || input.cluster == nullptr) return std::nullopt;
  const Cluster& cluster = *input.cluster;
  const AppModel& worst = *ranked.front();
  const int offered = static_cast<int>(input.free_gpus.size());
  int gang = 0;  // the fewest GPUs it can put to work
  for (int n = 1; n <= offered && gang == 0; ++n) gang = worst.usable_extra(n);
  if (gang > 0) {
    if (placed_well_enough(cluster, worst, most_local_subset(cluster, input.free_gpus, gang, GroupPreference::kBestFit)))
      return std::nullopt;
  } else {
    // Its gang is wider than the offer (the count reservation's case). A gang that runs as well spread over
    // machines may take any GPUs as they come back, so the count reservation holds the whole offer; one that
    // would run too slowly spread waits for one machine, and the GPUs elsewhere go to others meanwhile.
    for (int n = offered + 1; n <= worst.extra_demand() && gang == 0; ++n)
      if (worst.usable_extra(n) > 0) gang = n;
    if (gang == 0 || !spread_too_slow(cluster, worst, gang)) return std::nullopt;
  }

  // The machine that first holds a well-placed gang: its free GPUs now, then the other apps' leases there in
  // the order they end (not on draining machines, whose GPUs are not offered again).
  const std::size_t machines = cluster.machines().size();
  std::vector<std::vector<GpuIndex>> gpus_on(machines), free_on(machines);
  std::vector<std::vector<Seconds>> returns_on(machines);
  for (GpuIndex g = 0; g < cluster.size(); ++g) gpus_on[static_cast<std::size_t>(cluster.gpu(g).machine)].push_back(g);
  for (GpuIndex g : input.free_gpus) free_on[static_cast<std::size_t>(cluster.gpu(g).machine)].push_back(g);
  for (const Lease& lease : input.leases)
    if (lease.app != worst.id() && !std::binary_search(input.draining.begin(), input.draining.end(), lease.gpu))
      returns_on[static_cast<std::size_t>(cluster.gpu(lease.gpu).machine)].push_back(lease.expiry);
  std::optional<MachineHold> hold;
  Seconds earliest = std::numeric_limits<Seconds>::infinity();
  for (std::size_t m = 0; m < machines; ++m) {
    std::vector<GpuIndex>& free_here = free_on[m];
    std::vector<Seconds>& returns = returns_on[m];
    const int missing = gang - static_cast<int>(free_here.size());
    if (free_here.empty() || static_cast<int>(gpus_on[m].size()) < gang || missing > static_cast<int>(returns.size()))
      continue;
    if (!placed_well_enough(cluster, worst, most_local_subset(cluster, gpus_on[m], gang, GroupPreference::kBestFit)))
      continue;
    std::sort(returns.begin(), returns.end());
    const Seconds fits_at = missing <= 0 ? input.now : returns[static_cast<std::size_t>(missing - 1)];
    if (!hold || fits_at < earliest || (fits_at == earliest && free_here.size() > hold->gpus.size())) {
      earliest = fits_at;
      hold = MachineHold{worst.id(), gang, static_cast<int>(m), std::move(free_here), ""};
    }
  }
  if (!hold) return std::nullopt;
  hold->reason = "held for app " + std::to_string(hold->app) + ", the worst ρ, whose gang needs " + std::to_string(gang) +
                 " GPUs placed together: " + std::to_string(hold->gpus.size()) + " free on machine " +
                 cluster.machines().at(static_cast<std::size_t>(hold->machine)).name + " now, more as leases end";
  return hold;
}

}  // namespace themis::arbiter
