#pragma once
// The coordinator's Policy from its configuration (policy name, Themis' f and filter, the lease, the
// auction's wall-clock budget), from the arbiter's registry; throws std::invalid_argument listing the
// known names for an unknown one.
#include <memory>

#include "coordinator/config.h"
#include "policy/arbiter/policy.h"

namespace themis::coordinator {

std::unique_ptr<arbiter::Policy> make_coordinator_policy(const CoordinatorConfig& config);

}  // namespace themis::coordinator
