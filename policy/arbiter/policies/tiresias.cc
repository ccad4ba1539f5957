// Tiresias (Gu et al., NSDI'19) with its discretised two-dimensional LAS (2D-LAS, §4.2): an app's
// attained service is GPUs × time (GPU-seconds); apps sit in K priority queues by attained service
// (queue k holds those between thresholds k−1 and k), higher queues first, FIFO (arrival, i.e. app
// id) within a queue; each app in that order gets all the GPUs it can use. Preemption happens in rounds
// (when leases end). Starvation: an app that has waited since it last ran for PROMOTE_KNOB times the
// time it has run goes back to the highest queue until it has attained one more threshold's worth
// (Tiresias' promotion, §4.2.1). Placement-agnostic: first fit (Tiresias' consolidation applies to a
// few skewed models only; docs/simulator.md). Settings: TiresiasSettings.
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "policy/arbiter/policies/bundle_choice.h"
#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/policies/round_allocation.h"

namespace themis::arbiter::policies {
namespace {

class Tiresias final : public Policy {
 public:
  explicit Tiresias(TiresiasSettings settings) : settings_(std::move(settings)) {}
  std::string_view name() const override { return "tiresias"; }

  RoundOutcome run_round(const RoundInput& input, Rng& /*rng*/) override {
    std::map<AppId, int> held;
    for (const Lease& lease : input.leases) ++held[lease.app];
    RoundAllocation alloc(input);
    struct Queued {
      AppModel* app;
      int queue;
    };
    std::vector<Queued> order;
    for (AppModel* app : input.apps) {
      History& h = history_[app->id()];
      if (h.seen) {
        const Seconds dt = input.now - h.last;
        if (h.running) {
          h.executed += dt;
          h.waiting = 0;
        } else {
          h.waiting += dt;
        }
      }
      h.seen = true;
      h.last = input.now;
      h.running = held[app->id()] > 0;
      if (settings_.promote_knob > 0 && !h.running && h.executed > 0 && h.waiting >= settings_.promote_knob * h.executed) {
        h.promoted_at = app->attained_service();
        h.waiting = 0;
      }
      if (alloc.demand_left(app) > 0) order.push_back({app, queue_of(app->attained_service(), h)});
    }
    std::stable_sort(order.begin(), order.end(), [](const Queued& a, const Queued& b) { return a.queue < b.queue; });
    for (const Queued& q : order) {
      const int n = alloc.usable(q.app, static_cast<int>(alloc.free().size()));
      if (n > 0) alloc.grant(q.app, first_fit_bundle(alloc.free(), n));
      if (alloc.granted(q.app).size() > 0) history_[q.app->id()].running = true;
    }
    return alloc.finish();
  }

 private:
  struct History {
    bool seen = false;
    bool running = false;    // held GPUs after the last round
    Seconds last = 0;        // time of the last round
    Seconds executed = 0;    // time it has held GPUs
    Seconds waiting = 0;     // time since it last held GPUs
    double promoted_at = -1;  // attained service when last promoted; < 0: never
  };

  int queue_of(double attained, const History& h) const {
    if (h.promoted_at >= 0 && attained - h.promoted_at < settings_.queue_thresholds.front()) return 0;
    int k = 0;
    while (k < static_cast<int>(settings_.queue_thresholds.size()) &&
           attained >= settings_.queue_thresholds[static_cast<std::size_t>(k)])
      ++k;
    return k;
  }

  TiresiasSettings settings_;
  std::map<AppId, History> history_;
};

}  // namespace

std::unique_ptr<Policy> make_tiresias(const TiresiasSettings& settings) { return std::make_unique<Tiresias>(settings); }

}  // namespace themis::arbiter::policies
