#include "policy/arbiter/themis_policy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "policy/arbiter/leftover.h"
#include "policy/arbiter/machine_hold.h"
#include "policy/arbiter/packing_problem.h"
#include "policy/arbiter/shape_assignment.h"
#include "policy/arbiter/shape_problem.h"

namespace themis::arbiter {

namespace {

int resolve_solver_threads(int setting) {
  if (setting < 0) throw std::invalid_argument("themis: solver_threads must be >= 0 (0: the machine's cores), got " + std::to_string(setting));
  if (setting > 0) return setting;
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

}  // namespace

ThemisPolicy::ThemisPolicy(ThemisSettings settings)
    : settings_(settings), solver_threads_(resolve_solver_threads(settings.solver_threads)) {
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
  const std::vector<AppModel*> filtered = filtered_apps(input);
  // A reserved offer goes to nobody: the round holds it for the worst app's gang without an auction.
  std::vector<AppId> ids;
  if (settings_.gang_reservation) {
    if (const auto hold = hold_machine_for_worst_gang(input, filtered)) {
      // A machine held for it: the rest of the offer goes to the apps filtered for the rest.
      const RoundInput rest = without(input, hold->gpus);
      if (!rest.free_gpus.empty())
        for (const AppModel* app : filtered_apps(rest)) ids.push_back(app->id());
      return ids;
    }
    if (reserve_for_worst_gang(input, filtered)) return {};
  }
  for (const AppModel* app : filtered) ids.push_back(app->id());
  return ids;
}

std::optional<GangReservation> reserve_for_worst_gang(const RoundInput& input, std::span<AppModel* const> ranked) {
  if (ranked.empty() || input.free_gpus.empty()) return std::nullopt;
  const AppModel& worst = *ranked.front();
  const int offered = static_cast<int>(input.free_gpus.size());
  if (worst.usable_extra(offered) > 0) return std::nullopt;
  // GPUs that are free now or come back when another app's lease ends (not its own: those already count
  // as held, and not those on drained machines, which are not offered again).
  std::vector<Seconds> returns;
  for (const Lease& lease : input.leases)
    if (lease.app != worst.id() && !std::binary_search(input.draining.begin(), input.draining.end(), lease.gpu))
      returns.push_back(lease.expiry);
  const int reachable = offered + static_cast<int>(returns.size());
  int gang = 0;
  for (int n = offered + 1; n <= std::min(reachable, worst.extra_demand()) && gang == 0; ++n)
    if (worst.usable_extra(n) > 0) gang = n;
  if (gang == 0) return std::nullopt;
  std::sort(returns.begin(), returns.end());
  GangReservation reservation;
  reservation.app = worst.id();
  reservation.gang = gang;
  reservation.gang_fits_at = returns[static_cast<std::size_t>(gang - offered - 1)];
  reservation.reason = "reserved for app " + std::to_string(worst.id()) + ", the worst ρ, whose next gang needs " +
                       std::to_string(gang) + " GPUs: " + std::to_string(offered) + " free now, more as leases end";
  return reservation;
}

namespace {

// A reserved round: the offer waits for the gang, lent meanwhile (when `backfill`) to the other apps that
// can use it, on leases that end when the gang fits. The lent GPUs go out as the leftover does (whole
// jobs, random order, the most local set), kind kLeftover.
RoundOutcome reserved_round(const RoundInput& input, const GangReservation& reservation, bool backfill,
                            Seconds lease_duration, Rng& rng) {
  RoundOutcome outcome;
  outcome.reservation = RoundOutcome::Reservation{reservation.app, reservation.reason};
  const double fraction = std::min(1.0, (reservation.gang_fits_at - input.now) / lease_duration);
  if (backfill && fraction >= kMinBackfillFraction) {
    std::vector<LeftoverRecipient> others;
    for (AppModel* app : input.apps)
      if (app->id() != reservation.app && app->extra_demand() > 0)
        others.push_back({app->id(), app->extra_demand(), app->gpus_per_job(), app});
    LeftoverResult lent = distribute_leftover(*input.cluster, input.free_gpus, std::move(others), {}, rng);
    for (Grant& grant : lent.grants) {
      grant.lease_fraction = fraction;
      outcome.grants.push_back(std::move(grant));
    }
    for (IdleGpu& idle : lent.idle) outcome.idle.push_back({idle.gpu, reservation.reason});
    return outcome;
  }
  for (GpuIndex g : input.free_gpus) outcome.idle.push_back({g, reservation.reason});
  return outcome;
}

}  // namespace

RoundOutcome ThemisPolicy::run_round(const RoundInput& input, Rng& rng) {
  if (input.cluster == nullptr) throw std::invalid_argument("themis: RoundInput::cluster is null");
  last_rejections_.clear();
  if (input.free_gpus.empty()) return {};

  const std::vector<AppModel*> filtered = filtered_apps(input);
  if (settings_.gang_reservation) {
    // The machine hold first: for a gang too slow spread over machines it replaces the count reservation.
    if (const auto hold = hold_machine_for_worst_gang(input, filtered)) {
      const RoundInput rest = without(input, hold->gpus);
      RoundOutcome outcome = rest.free_gpus.empty() ? RoundOutcome{} : auction_round(rest, filtered_apps(rest), rng);
      for (GpuIndex g : hold->gpus) outcome.idle.push_back({g, hold->reason});
      outcome.reservation = RoundOutcome::Reservation{hold->app, hold->reason};
      return outcome;
    }
    if (auto reserved = reserve_for_worst_gang(input, filtered))
      return reserved_round(input, *reserved, settings_.gang_backfill, settings_.lease_duration, rng);
  }
  return auction_round(input, filtered, rng);
}

RoundInput ThemisPolicy::without(const RoundInput& input, std::span<const GpuIndex> held) {
  RoundInput rest = input;
  rest.free_gpus.clear();
  std::set_difference(input.free_gpus.begin(), input.free_gpus.end(), held.begin(), held.end(),
                      std::back_inserter(rest.free_gpus));
  return rest;
}

RoundOutcome ThemisPolicy::auction_round(const RoundInput& input, const std::vector<AppModel*>& filtered, Rng& rng) {
  RoundOutcome outcome;
  const Offer offer{input.round, input.free_gpus};
  outcome.auction.offered = offer.gpus;
  std::vector<ExpectedBidder> expected;
  for (AppModel* app : filtered) {
    outcome.auction.bidders.push_back(app->id());
    expected.push_back({app->id(), app->extra_demand()});
    outcome.auction.bids.push_back(app->bid(offer));
  }
  ValidatedBids valid = validate_bids(offer, outcome.auction.bids, expected);
  last_rejections_ = valid.rejections;

  // Rows as shapes (a row's scope, core/bid.h; shape_bids, on by default, or the shape solver): concrete
  // GPUs are picked after the auction. Otherwise every row's GPUs are taken literally.
  const bool shapes = settings_.solver == SolverKind::kShape || settings_.shape_bids;
  ShapeProblem shaped;
  if (shapes) shaped = make_shape_problem(*input.cluster, offer, valid.accepted, settings_.max_rows_per_bidder);
  const PackingProblem problem =
      shapes ? std::move(shaped.packing) : make_packing_problem(offer, valid.accepted, settings_.max_rows_per_bidder);
  const auto solver = make_winner_solver(settings_.solver);
  const PartialAllocation pa =
      partial_allocation(problem, *solver, AuctionLimits{settings_.solver_seconds, settings_.solver_max_nodes, settings_.small_search_cap(),
                                                         solver_threads_});

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

  std::map<AppId, const AppModel*> model_of;
  for (const AppModel* app : input.apps) model_of[app->id()] = app;
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
    const AppModel* app = model_of.at(winner.app);
    winner.kept = kept_gpus(*input.cluster, winner.pf_bundle, pa.c[b], settings_.rounding, rng,
                            [app](int n) { return app->usable_extra(n); });
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
      bidders.push_back({app->id(), app->extra_demand() - kept_count[app->id()], app->gpus_per_job(), app,
                         kept_count[app->id()]});
    else
      non_bidders.push_back({app->id(), app->extra_demand(), app->gpus_per_job(), app});
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
