#pragma once
// Used only when the coordinator is built without the arbiter library: hands every free GPU to the
// apps with the highest current ρ first, each up to its extra demand, most local GPUs first. No auction.
#include "coordinator/arbiter/policy.h"

namespace themis::coordinator {

class FallbackPolicy final : public arbiter::Policy {
 public:
  std::string_view name() const override { return "fallback-by-rho"; }
  std::vector<AppId> offer_recipients(const arbiter::RoundInput& /*input*/) const override { return {}; }
  arbiter::RoundOutcome run_round(const arbiter::RoundInput& input, Rng& rng) override;
};

}  // namespace themis::coordinator
