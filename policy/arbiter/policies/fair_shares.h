#pragma once
// Water-filled shares of the cluster's GPUs: every active app is entitled to an equal part, an app
// that can use less (what it holds plus its extra demand) gets only that, and what it leaves is split
// again among the others. Max-min fairness' entitlement (Gavel's max_min_fairness, DRF with one resource).
#include <map>

#include "policy/arbiter/policy.h"

namespace themis::arbiter::policies {

// Share per app id (fractional GPUs) over the cluster's GPUs, free and leased; every app in input.apps.
std::map<AppId, double> water_filled_shares(const RoundInput& input);

}  // namespace themis::arbiter::policies
