#include "coordinator/policy_factory.h"

#include <stdexcept>

#include "coordinator/fallback_policy.h"
#ifdef THEMIS_HAVE_POLICIES
#include "coordinator/arbiter/policies/registry.h"
#endif

namespace themis::coordinator {

std::unique_ptr<arbiter::Policy> make_coordinator_policy(const std::string& name, double fairness_knob) {
  if (name == "fallback") return std::make_unique<FallbackPolicy>();
#ifdef THEMIS_HAVE_POLICIES
  arbiter::policies::PolicySettings settings;
  settings.filter_f = fairness_knob;
  return arbiter::policies::make_policy(name, settings);
#else
  (void)fairness_knob;
  throw std::invalid_argument("coordinator.policy: '" + name +
                              "' is not available: this build has no arbiter library; use \"fallback\"");
#endif
}

}  // namespace themis::coordinator
