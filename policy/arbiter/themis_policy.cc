#include "policy/arbiter/themis_policy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "policy/arbiter/leftover.h"
#include "policy/arbiter/packing_problem.h"
#include "policy/arbiter/shape_assignment.h"
#include "policy/arbiter/shape_problem.h"

namespace themis::arbiter {

ThemisPolicy::ThemisPolicy(ThemisSettings settings) : settings_(settings) {
  if (settings_.max_rows_per_bidder < 1)
    throw std::invalid_argument("themis: max_rows_per_bidder must be >= 1, got " +
                                std::to_string(settings_.max_rows_per_bidder));
  if (!(settings_.lease_duration > 0))
    throw std::invalid_argument("themis: lease_duration must be > 0 seconds");
}

std::vector<AppModel*> ThemisPolicy::filtered_apps(const RoundInput& input) const {
  return filter_apps(input.apps, settings_.f, settings_.filter_rule, static_cast<int>(input.free_gpus.size()));
}

std::vector<AppId> ThemisPolicy::offer_recipients(const RoundInput& input) const {
  std::vector<AppId> ids;
  for (const AppModel* app : filtered_apps(input)) ids.push_back(app->id());
  return ids;
}

RoundOutcome ThemisPolicy::run_round(const RoundInput& input, Rng& rng) {
  if (input.cluster == nullptr) throw std::invalid_argument("themis: RoundInput::cluster is null");
  RoundOutcome outcome;
  last_rejections_.clear();
  if (input.free_gpus.empty()) return outcome;

  const std::vector<AppModel*> filtered = filtered_apps(input);
  const Offer offer{input.round, input.free_gpus};
  std::vector<ExpectedBidder> expected;
  for (AppModel* app : filtered) {
    outcome.auction.bidders.push_back(app->id());
    expected.push_back({app->id(), app->extra_demand()});
    outcome.auction.bids.push_back(app->bid(offer));
  }
  ValidatedBids valid = validate_bids(offer, outcome.auction.bids, expected);
  last_rejections_ = valid.rejections;

  // The shape solver reads rows as shapes (a row's scope, core/bid.h) and picks concrete GPUs after
  // the auction; the others take every row's GPUs literally.
  const bool shapes = settings_.solver == SolverKind::kShape;
  ShapeProblem shaped;
  if (shapes) shaped = make_shape_problem(*input.cluster, offer, valid.accepted, settings_.max_rows_per_bidder);
  const PackingProblem problem =
      shapes ? std::move(shaped.packing) : make_packing_problem(offer, valid.accepted, settings_.max_rows_per_bidder);
  const auto solver = make_winner_solver(settings_.solver);
  const PartialAllocation pa =
      partial_allocation(problem, *solver, AuctionLimits{settings_.solver_seconds, settings_.solver_max_nodes});

  double objective = 0;
  for (const Bid& bid : valid.accepted) objective -= std::log(bid.rho_no_new);
  outcome.auction.objective = objective + pa.pf.value;
  outcome.auction.gap = pa.gap;

  std::vector<std::vector<GpuIndex>> bundles(problem.bidders.size());
  for (std::size_t b = 0; b < problem.bidders.size(); ++b)
    if (pa.pf.choice[b] >= 0)
      bundles[b] = valid.accepted[b]
                       .rows[static_cast<std::size_t>(
                           problem.bidders[b].rows[static_cast<std::size_t>(pa.pf.choice[b])].source_row)]
                       .gpus;
  if (shapes) bundles = assign_shapes(*input.cluster, shaped, pa.pf.choice, bundles);

  std::vector<GpuIndex> pool = input.free_gpus;  // shrinks to the leftover
  std::map<AppId, int> kept_count;
  for (std::size_t b = 0; b < problem.bidders.size(); ++b) {
    if (pa.pf.choice[b] < 0) continue;
    const PackingRow& packed = problem.bidders[b].rows[static_cast<std::size_t>(pa.pf.choice[b])];
    const BidRow& row = valid.accepted[b].rows[static_cast<std::size_t>(packed.source_row)];
    AuctionRecord::Winner winner;
    winner.app = problem.bidders[b].app;
    winner.pf_bundle = bundles[b];
    winner.rho = row.rho;
    winner.c = pa.c[b];
    winner.kept = kept_gpus(*input.cluster, winner.pf_bundle, pa.c[b], settings_.rounding, rng);
    if (!winner.kept.empty()) {
      outcome.grants.push_back(
          Grant{winner.app, winner.kept, GrantKind::kAuction, kept_lease_fraction(pa.c[b], settings_.rounding)});
      std::vector<GpuIndex> rest;
      std::set_difference(pool.begin(), pool.end(), winner.kept.begin(), winner.kept.end(),
                          std::back_inserter(rest));
      pool = std::move(rest);
    }
    kept_count[winner.app] = static_cast<int>(winner.kept.size());
    outcome.auction.winners.push_back(std::move(winner));
  }

  // An app that saw the offer but bid nothing usable (no launcher, a late or malformed bid) did not
  // take part in the auction, so it shares the leftover with the apps that were not offered
  // (architecture.md §2 step 5); otherwise a launcher-less app with the worst ρ would starve.
  std::set<AppId> took_part;
  for (const Bid& bid : valid.accepted)
    if (!bid.rows.empty()) took_part.insert(bid.app);
  std::vector<LeftoverRecipient> non_bidders, bidders;
  for (AppModel* app : input.apps) {
    if (took_part.contains(app->id()))
      bidders.push_back({app->id(), app->extra_demand() - kept_count[app->id()], app->gpus_per_job()});
    else
      non_bidders.push_back({app->id(), app->extra_demand(), app->gpus_per_job()});
  }
  LeftoverResult leftover = distribute_leftover(*input.cluster, std::move(pool), std::move(non_bidders),
                                                std::move(bidders), rng);
  for (Grant& grant : leftover.grants) outcome.grants.push_back(std::move(grant));
  outcome.idle = std::move(leftover.idle);
  if (input.apps.empty())
    for (IdleGpu& idle : outcome.idle) idle.reason = "no active app";
  return outcome;
}

std::vector<Lease> ThemisPolicy::leases(const RoundOutcome& outcome, const RoundInput& input) const {
  return leases_from_grants(outcome.grants, input.round, input.now, settings_.lease_duration);
}

}  // namespace themis::arbiter
