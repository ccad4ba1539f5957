#include "policy/arbiter/policies/round_allocation.h"

#include <algorithm>

#include "policy/arbiter/policies/bundle_choice.h"

namespace themis::arbiter::policies {

RoundAllocation::RoundAllocation(const RoundInput& input) : input_(input), free_(input.free_gpus) {
  std::sort(free_.begin(), free_.end());
  for (AppModel* app : input.apps) demand_left_[app->id()] = std::max(0, app->extra_demand());
  for (const Lease& lease : input.leases) held_[lease.app].push_back(lease.gpu);
  for (auto& [id, gpus] : held_) std::sort(gpus.begin(), gpus.end());
}

std::vector<AppModel*> RoundAllocation::wanting() const {
  std::vector<AppModel*> out;
  for (AppModel* app : input_.apps)
    if (demand_left(app) > 0 && step(app) > 0) out.push_back(app);
  return out;
}

int RoundAllocation::usable(const AppModel* app, int gpus) const {
  const int had = static_cast<int>(granted(app).size());
  return std::clamp(app->usable_extra(had + gpus) - had, 0, std::min(gpus, demand_left(app)));
}

int RoundAllocation::step(const AppModel* app) const {
  const int most = std::min(static_cast<int>(free_.size()), demand_left(app));
  for (int n = 1; n <= most; ++n)
    if (usable(app, n) == n) return n;
  return 0;
}

int RoundAllocation::demand_left(const AppModel* app) const {
  auto it = demand_left_.find(app->id());
  return it == demand_left_.end() ? 0 : it->second;
}

const std::vector<GpuIndex>& RoundAllocation::granted(const AppModel* app) const {
  static const std::vector<GpuIndex> none;
  auto it = granted_.find(app->id());
  return it == granted_.end() ? none : it->second;
}

std::vector<GpuIndex> RoundAllocation::held_and_granted(const AppModel* app) const {
  std::vector<GpuIndex> out = granted(app);
  if (auto it = held_.find(app->id()); it != held_.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  std::sort(out.begin(), out.end());
  return out;
}

void RoundAllocation::grant(AppModel* app, std::span<const GpuIndex> gpus) {
  if (gpus.empty()) return;
  const int keep = usable(app, static_cast<int>(gpus.size()));
  if (keep == 0) {
    demand_left_[app->id()] = 0;
    return;
  }
  std::vector<GpuIndex> sorted(gpus.begin(), gpus.begin() + keep);
  std::sort(sorted.begin(), sorted.end());
  remove_gpus(free_, sorted);
  auto& mine = granted_[app->id()];
  mine.insert(mine.end(), sorted.begin(), sorted.end());
  std::sort(mine.begin(), mine.end());
  demand_left_[app->id()] -= static_cast<int>(sorted.size());
}

RoundOutcome RoundAllocation::finish() const {
  RoundOutcome out;
  for (const auto& [app, gpus] : granted_)
    if (!gpus.empty()) out.grants.push_back({app, gpus, GrantKind::kDirect});
  for (GpuIndex g : free_) out.idle.push_back({g, "no active app can use it"});
  return out;
}

}  // namespace themis::arbiter::policies
