#include "coordinator/policy_factory.h"

#include "policy/arbiter/policies/registry.h"

namespace themis::coordinator {

std::unique_ptr<arbiter::Policy> make_coordinator_policy(const std::string& name, double fairness_knob,
                                                         arbiter::FilterRule filter) {
  arbiter::policies::PolicySettings settings;
  settings.filter_f = fairness_knob;
  settings.filter = std::string(arbiter::to_string(filter));
  return arbiter::policies::make_policy(name, settings);
}

}  // namespace themis::coordinator
