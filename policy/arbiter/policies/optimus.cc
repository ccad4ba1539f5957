// Optimus as the Themis paper models it (§6.1, "ideal aggregate throughput"): the throughput-scaling
// metric is the ratio of the app's throughput with and without one more GPU; GPUs go one at a time,
// highest scaling first. Throughput is 1/remaining time, so the ratio is
// remaining_time(without) / remaining_time(with). The GPU offered is the best placed one, since
// Optimus' scaling model sees the communication cost of a placement.
#include <cmath>
#include <limits>
#include <vector>

#include "policy/arbiter/policies/marginal_greedy.h"
#include "policy/arbiter/policies/registry.h"

namespace themis::arbiter::policies {
namespace {

class Optimus final : public Policy {
 public:
  std::string_view name() const override { return "optimus"; }
  RoundOutcome run_round(const RoundInput& input, Rng& /*rng*/) override {
    return marginal_greedy(input, true, [](AppModel& app, std::span<const GpuIndex> granted, std::span<const GpuIndex> next) {
      std::vector<GpuIndex> with(granted.begin(), granted.end());
      with.insert(with.end(), next.begin(), next.end());
      const Seconds before = app.remaining_time(granted);
      const Seconds after = app.remaining_time(with);
      if (!std::isfinite(before)) return std::numeric_limits<double>::max();  // nothing to run on yet
      return after > 0 ? before / after : 1.0;
    });
  }
};

}  // namespace

std::unique_ptr<Policy> make_optimus() { return std::make_unique<Optimus>(); }

}  // namespace themis::arbiter::policies
