#pragma once
// The coordinator's Policy by name, from the arbiter's registry (Themis and the baselines); throws
// std::invalid_argument listing the known names for an unknown one.
#include <memory>
#include <string>

#include "policy/arbiter/filter.h"
#include "policy/arbiter/policy.h"

namespace themis::coordinator {

std::unique_ptr<arbiter::Policy> make_coordinator_policy(const std::string& name, double fairness_knob,
                                                         arbiter::FilterRule filter);

}  // namespace themis::coordinator
