#include "policy/arbiter/leases.h"

#include <stdexcept>
#include <string>

namespace themis::arbiter {

std::vector<Lease> leases_from_grants(std::span<const Grant> grants, RoundId round, Seconds now,
                                      Seconds duration) {
  if (!(duration > 0))
    throw std::invalid_argument("lease duration must be > 0 seconds, got " + std::to_string(duration));
  std::vector<Lease> leases;
  for (const Grant& grant : grants) {
    if (!(grant.lease_fraction > 0 && grant.lease_fraction <= 1))
      throw std::invalid_argument("grant to app " + std::to_string(grant.app) + ": lease fraction must be in (0, 1], got " +
                                  std::to_string(grant.lease_fraction));
    for (GpuIndex g : grant.gpus) leases.push_back(Lease{g, grant.app, round, now, now + duration * grant.lease_fraction});
  }
  return leases;
}

}  // namespace themis::arbiter
