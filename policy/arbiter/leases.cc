#include "policy/arbiter/leases.h"

#include <stdexcept>
#include <string>

namespace themis::arbiter {

Seconds lease_expiry(Seconds now, Seconds duration, double lease_fraction) {
  if (!(duration > 0))
    throw std::invalid_argument("lease duration must be > 0 seconds, got " + std::to_string(duration));
  if (!(lease_fraction > 0 && lease_fraction <= 1))
    throw std::invalid_argument("lease fraction must be in (0, 1], got " + std::to_string(lease_fraction));
  return now + duration * lease_fraction;
}

std::vector<Lease> leases_from_grants(std::span<const Grant> grants, RoundId round, Seconds now,
                                      Seconds duration) {
  lease_expiry(now, duration);  // the duration is checked even when nothing is granted
  std::vector<Lease> leases;
  for (const Grant& grant : grants) {
    try {
      const Seconds expiry = lease_expiry(now, duration, grant.lease_fraction);
      for (GpuIndex g : grant.gpus) leases.push_back(Lease{g, grant.app, round, now, expiry});
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("grant to app " + std::to_string(grant.app) + ": " + e.what());
    }
  }
  return leases;
}

}  // namespace themis::arbiter
