#pragma once
// The coordinator's Policy by name: the arbiter's registry when it is built in, otherwise the
// work-conserving fallback (fallback_policy.h).
#include <memory>
#include <string>

#include "coordinator/arbiter/policy.h"

namespace themis::coordinator {

std::unique_ptr<arbiter::Policy> make_coordinator_policy(const std::string& name, double fairness_knob);

}  // namespace themis::coordinator
