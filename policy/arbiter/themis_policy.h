#pragma once
// The Themis policy (NSDI'20 §3.3): filter → offer → bids → validation → partial-allocation auction →
// whole GPUs → leftover. Every free GPU of the round ends granted or idle with a reason. One step the
// paper does not have: an offer too small for the worst app's gang is held for it, and where the offer is
// large enough but holds no set placed well enough for that gang, one machine's free GPUs are held
// (machine_hold.h; docs/arbiter.md, "Gang reservation").
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "policy/arbiter/bid_validation.h"
#include "policy/arbiter/filter.h"
#include "policy/arbiter/leases.h"
#include "policy/arbiter/partial_allocation.h"
#include "policy/arbiter/policy.h"
#include "policy/arbiter/whole_gpus.h"
#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {

struct ThemisSettings {
  FilterFraction f{4, 5};                             // 0.8: at most the worst 20% of apps bid
  // kFixed: the paper's worst 20%; kOfferBounded: of those, only as many as can use the offer
  // (filter.h). The library keeps the paper's literal rule; themis-sim and the coordinator both default to
  // kOfferBounded (their `--filter` / `filter` setting; docs/evaluation.md measured it).
  FilterRule filter_rule = FilterRule::kFixed;
  RoundingRule rounding = RoundingRule::kTimeShare;
  SolverKind solver = SolverKind::kShape;              // measured best: docs/arbiter.md, "Solvers"
  // The default bounds a solve by search nodes, not time, so the policy reads no clock and a round's
  // outcome depends on its input alone. A wall-clock budget (all N+1 solves of one auction) is opt-in
  // for callers that accept machine-dependent outcomes; <= 0: none.
  double solver_seconds = 0;
  std::int64_t solver_max_nodes = 200000;             // per solve; <= 0: no limit
  // Each solve first tries plain depth-first search (small_search.h) up to this many nodes, exact when it
  // finishes, and runs `solver` only when it does not; <= 0: always `solver` (docs/performance.md).
  // Unset: default_small_search_nodes(solver).
  std::optional<std::int64_t> small_search_nodes;
  std::int64_t small_search_cap() const { return small_search_nodes.value_or(default_small_search_nodes(solver)); }
  // The solves without each winner run on up to this many threads (a reentrant solver, after a PF solve the
  // small searches did not settle); the outcome is the same for every count. 0: the machine's cores, at most 8.
  int solver_threads = 0;
  int max_rows_per_bidder = 64;                       // best rows by gain; the rest are ignored
  // Rows as shapes (shape_problem.h) for every solver, not only `shape`: interchangeable bundles are one
  // row, concrete GPUs are chosen after the auction (docs/arbiter.md, "Shapes"; measured in
  // docs/performance.md, "Shapes by default"). false: every row's GPUs literally.
  bool shape_bids = true;
  Seconds lease_duration = kDefaultLeaseDuration;
  // When the worst-ranked app's narrowest waiting gang is wider than the offer, the offered GPUs wait
  // for it (idle) instead of going to narrower apps, until leases ending add up to its gang
  // (docs/arbiter.md, "Gang reservation"). Off: the paper's round, where such a gang can wait forever.
  bool gang_reservation = true;
  // While an offer is reserved, other apps that can use its GPUs get them on leases that end when the
  // reserved gang can start (the leases it waits for have ended), so no GPU idles that another app can use
  // (docs/arbiter.md, "Backfill"). Not below kMinBackfillFraction of a lease. Off by default: measured, it
  // helps one trace and hurts another as much (docs/evaluation.md, "Backfill").
  bool gang_backfill = false;
};

// A backfill lease shorter than this share of a lease is not worth starting a job for.
inline constexpr double kMinBackfillFraction = 0.25;

// The worst-ranked app's gang that the offer is held for.
struct GangReservation {
  AppId app = 0;
  int gang = 0;             // GPUs its next gang needs
  Seconds gang_fits_at = 0;  // when enough of the other apps' leases have ended for it
  std::string reason;
};

// The reservation when the offer is held for the worst-ranked app's gang (`ranked`: the filtered apps,
// worst first), or nothing when it is not: the worst app can put some of the offer to work, or no GPUs
// that are free or will be freed by other apps' leases add up to a gang it can use.
std::optional<GangReservation> reserve_for_worst_gang(const RoundInput& input, std::span<AppModel* const> ranked);

class ThemisPolicy final : public Policy {
 public:
  explicit ThemisPolicy(ThemisSettings settings = {});
  std::string_view name() const override { return "themis"; }
  const ThemisSettings& settings() const { return settings_; }

  // The filtered apps, worst current ρ first.
  std::vector<AppId> offer_recipients(const RoundInput& input) const override;
  RoundOutcome run_round(const RoundInput& input, Rng& rng) override;

  // What the last run_round dropped from the bids, and why (for logs and `themisctl explain`).
  const std::vector<BidRejection>& last_rejections() const { return last_rejections_; }
  // Leases for a round's grants, held from input.now for settings().lease_duration.
  std::vector<Lease> leases(const RoundOutcome& outcome, const RoundInput& input) const;

 private:
  std::vector<AppModel*> filtered_apps(const RoundInput& input) const;
  // The auction over input.free_gpus among `filtered` (worst first), then whole GPUs and the leftover.
  RoundOutcome auction_round(const RoundInput& input, const std::vector<AppModel*>& filtered, Rng& rng);
  // `input` with `held` (sorted) taken out of its free GPUs.
  static RoundInput without(const RoundInput& input, std::span<const GpuIndex> held);
  ThemisSettings settings_;
  int solver_threads_;  // settings_.solver_threads, 0 resolved to the machine's cores once
  std::vector<BidRejection> last_rejections_;
};

}  // namespace themis::arbiter
