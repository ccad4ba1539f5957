// SLAQ as the Themis paper models it (§6.1, "ideal aggregate model quality"): apps report the loss
// decrease they would achieve with the free GPUs, and GPUs go greedily, highest loss decrease first,
// one GPU at a time by marginal decrease. Placement-agnostic: first-fit.
#include <vector>

#include "policy/arbiter/policies/marginal_greedy.h"
#include "policy/arbiter/policies/registry.h"

namespace themis::arbiter::policies {
namespace {

class Slaq final : public Policy {
 public:
  std::string_view name() const override { return "slaq"; }
  RoundOutcome run_round(const RoundInput& input, Rng& /*rng*/) override {
    return marginal_greedy(input, false, [](AppModel& app, std::span<const GpuIndex> granted, std::span<const GpuIndex> next) {
      std::vector<GpuIndex> with(granted.begin(), granted.end());
      with.insert(with.end(), next.begin(), next.end());
      return app.loss_decrease(with) - app.loss_decrease(granted);
    });
  }
};

}  // namespace

std::unique_ptr<Policy> make_slaq() { return std::make_unique<Slaq>(); }

}  // namespace themis::arbiter::policies
