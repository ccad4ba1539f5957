// Gavel's finish-time fairness (`gavel-ftf`; Narayanan et al., OSDI'20, §4.2 and §5 "round-based
// scheduling"): every round the allocation of ftf_allocation.h (time fractions x_m minimising the
// largest ρ) is recomputed for the active apps, and the rounds realise it as Gavel does: apps are
// served in decreasing priority x_m / (fraction of time it has received so far), each on all the GPUs
// it can use; an app never served yet has infinite priority (ties: larger x, then a seeded random
// draw). A round is a lease here (Gavel's is 6 minutes). Apps that do not report FinishTimeTerms get
// x = 0 and come last. Placement-agnostic, as Gavel on one GPU type: first fit.
#include <algorithm>
#include <limits>
#include <vector>

#include "policy/arbiter/policies/bundle_choice.h"
#include "policy/arbiter/policies/ftf_allocation.h"
#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/policies/round_allocation.h"

namespace themis::arbiter::policies {
namespace {

class GavelFtf final : public Policy {
 public:
  std::string_view name() const override { return "gavel-ftf"; }
  RoundOutcome run_round(const RoundInput& input, Rng& rng) override {
    RoundAllocation alloc(input);
    std::vector<FtfApp> ftf;
    std::vector<AppModel::FinishTimeTerms> terms;
    std::vector<AppModel*> reporting;
    for (AppModel* app : input.apps) {
      const auto t = app->finish_time_terms();
      if (!t || t->isolated <= 0) continue;
      reporting.push_back(app);
      terms.push_back(*t);
      ftf.push_back({t->elapsed, t->remaining, t->isolated, std::max(1, t->demand)});
    }
    const FtfAllocation x = finish_time_fair_allocation(ftf, input.cluster->size());
    struct Ranked {
      AppModel* app;
      double priority;
      double fraction;
      double tie;
    };
    std::vector<Ranked> order;
    for (AppModel* app : alloc.wanting()) {
      Ranked r{app, 0, 0, rng.uniform()};
      const auto it = std::find(reporting.begin(), reporting.end(), app);
      if (it != reporting.end()) {
        const auto m = static_cast<std::size_t>(it - reporting.begin());
        r.fraction = x.fraction[m];
        // Fraction of its time so far on its whole demand, from the GPU-seconds it attained.
        const double received = terms[m].elapsed > 0
                                    ? app->attained_service() / (terms[m].elapsed * std::max(1, terms[m].demand))
                                    : 0.0;
        r.priority = received > 0 ? r.fraction / received : std::numeric_limits<double>::infinity();
      }
      order.push_back(r);
    }
    std::sort(order.begin(), order.end(), [](const Ranked& a, const Ranked& b) {
      if (a.priority != b.priority) return a.priority > b.priority;
      if (a.fraction != b.fraction) return a.fraction > b.fraction;
      return a.tie < b.tie;
    });
    for (const Ranked& r : order) {
      const int n = alloc.usable(r.app, static_cast<int>(alloc.free().size()));
      if (n > 0) alloc.grant(r.app, first_fit_bundle(alloc.free(), n));
    }
    return alloc.finish();
  }
};

}  // namespace

std::unique_ptr<Policy> make_gavel_ftf() { return std::make_unique<GavelFtf>(); }

}  // namespace themis::arbiter::policies
