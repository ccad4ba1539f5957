#include "policy/arbiter/policies/fair_shares.h"

#include <algorithm>
#include <vector>

namespace themis::arbiter::policies {

std::map<AppId, double> water_filled_shares(const RoundInput& input) {
  std::map<AppId, int> held;
  for (const Lease& lease : input.leases) ++held[lease.app];
  std::vector<std::pair<double, AppId>> wants;  // (GPUs it can use, id), smallest first
  for (const AppModel* app : input.apps) wants.push_back({held[app->id()] + std::max(0, app->extra_demand()), app->id()});
  std::sort(wants.begin(), wants.end());
  std::map<AppId, double> share;
  double left = static_cast<double>(input.cluster->size());
  std::size_t remaining = wants.size();
  for (const auto& [want, id] : wants) {
    const double equal = left / static_cast<double>(remaining);
    share[id] = std::min(want, equal);
    left -= share[id];
    --remaining;
  }
  return share;
}

}  // namespace themis::arbiter::policies
