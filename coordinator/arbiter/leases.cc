#include "coordinator/arbiter/leases.h"

#include <stdexcept>
#include <string>

namespace themis::arbiter {

std::vector<Lease> leases_from_grants(std::span<const Grant> grants, RoundId round, Seconds now,
                                      Seconds duration) {
  if (!(duration > 0))
    throw std::invalid_argument("lease duration must be > 0 seconds, got " + std::to_string(duration));
  std::vector<Lease> leases;
  for (const Grant& grant : grants)
    for (GpuIndex g : grant.gpus) leases.push_back(Lease{g, grant.app, round, now, now + duration});
  return leases;
}

}  // namespace themis::arbiter
