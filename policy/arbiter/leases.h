#pragma once
// Grants become leases: each granted GPU is held by its app from `now` for `duration`.
#include <span>
#include <vector>

#include "policy/arbiter/policy.h"

namespace themis::arbiter {

inline constexpr Seconds kDefaultLeaseDuration = 600;  // 10 minutes

// When a lease granted at `now` ends: the lease duration times the grant's fraction (below 1 only under
// time-share rounding). The one place a lease's expiry is computed. Throws std::invalid_argument if
// duration <= 0 or the fraction is outside (0, 1].
Seconds lease_expiry(Seconds now, Seconds duration, double lease_fraction = 1.0);

// One Lease per granted GPU, in grant order then GPU order. Throws std::invalid_argument if
// duration <= 0.
std::vector<Lease> leases_from_grants(std::span<const Grant> grants, RoundId round, Seconds now,
                                      Seconds duration = kDefaultLeaseDuration);

}  // namespace themis::arbiter
