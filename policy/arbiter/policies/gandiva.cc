// Gandiva (Xiao et al., OSDI'18) with its time-slicing: when the cluster is oversubscribed, jobs take
// turns (suspend / resume, §3.2 "Time-slicing"), each getting an equal share of time; each job runs on
// the best-placed GPUs it can get (Gandiva's packing for affinity). Here a turn is a round: when leases
// end, the free GPUs go first to the apps that have run least for their size (attained GPU-seconds /
// GPUs they can use: seconds on their full demand), each taking the best-placed bundle of all it can
// use; the apps whose turn has not come stay suspended until the next round. Ties (apps that never
// ran) go to a seeded random draw. Not modelled: Gandiva's migration and its grow-shrink.
#include <algorithm>
#include <vector>

#include "policy/arbiter/policies/bundle_choice.h"
#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/policies/round_allocation.h"

namespace themis::arbiter::policies {
namespace {

class Gandiva final : public Policy {
 public:
  std::string_view name() const override { return "gandiva"; }
  RoundOutcome run_round(const RoundInput& input, Rng& rng) override {
    RoundAllocation alloc(input);
    struct Turn {
      AppModel* app;
      double ran;  // seconds on its full demand so far
      double tie;
    };
    std::vector<Turn> order;
    for (AppModel* app : alloc.wanting()) {
      const double size = static_cast<double>(alloc.held_and_granted(app).size()) + app->extra_demand();
      order.push_back({app, app->attained_service() / std::max(size, 1.0), rng.uniform()});
    }
    std::sort(order.begin(), order.end(),
              [](const Turn& a, const Turn& b) { return a.ran != b.ran ? a.ran < b.ran : a.tie < b.tie; });
    for (const Turn& t : order) {
      const int n = alloc.usable(t.app, static_cast<int>(alloc.free().size()));
      if (n <= 0) continue;
      alloc.grant(t.app, best_placed_bundle(*input.cluster, alloc.free(), alloc.held_and_granted(t.app), n));
    }
    return alloc.finish();
  }
};

}  // namespace

std::unique_ptr<Policy> make_gandiva() { return std::make_unique<Gandiva>(); }

}  // namespace themis::arbiter::policies
