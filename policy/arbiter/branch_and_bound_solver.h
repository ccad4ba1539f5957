#pragma once
// Exact winner determination by branch and bound, written for the shape of Themis bids: few rows per
// bidder, each a small set of GPUs.
//
// - Preprocessing: a row is dropped when another row of the same bidder uses a subset of its GPUs for
//   at least the same gain (dominance; never needed by an optimum).
// - Warm start: the caller's hint (the PF packing minus the excluded bidder in the N+1 solves) and a
//   greedy packing, each improved by local search (improve_packing); greedy packings by reduced gain.
// - Phase 1, Lagrangian depth-first search over bidders (each: one of its rows, or none), about a
//   microsecond a node. Bound: the "each GPU at most once" constraints relaxed with per-GPU prices λ
//   from subgradient steps, Σ_{free g} λ_g + Σ_{remaining bidders} max(0, best unblocked gain − λ(row)).
//   Prices of a previous solve of the same problem (the N+1 solves) are reused as a start. Small
//   auctions are proven here; after `lagrangian_nodes` nodes phase 2 takes over.
// - Phase 2, LP search. At each node the LP relaxation (packing_lp.h, CLP's dual simplex from the
//   parent's basis) gives the prices; the node's Lagrangian bound with them equals the LP bound and is
//   what prunes (computed here, valid for any λ >= 0, so LP tolerances never prune a better packing).
//   Rows whose reduced gain shows they cannot beat the incumbent in the subtree are fixed to 0; a greedy
//   by LP value finds packings; the fractional row with the largest min(x, 1 − x)·|GPUs| is branched
//   on, x = 1 first. The Lagrangian phase alone does not prove bidder-library auctions from about 20
//   bidders on: with the root's prices fixed its bound stays above the optimum deep into the search.
// - Limits: nodes of both phases count against max_nodes; the time budget also bounds each LP solve.
//   Then the best packing found and the best root bound (Lagrangian or LP) as the proven bound.
// - Deterministic: no randomness, ties by position; only a time budget makes results machine-dependent.
#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {

class BranchAndBoundSolver final : public WinnerSolver {
 public:
  // Nodes of the Lagrangian depth-first search (about a microsecond each) before the LP search takes
  // over; 0: the LP search alone.
  static constexpr std::int64_t kDefaultLagrangianNodes = 4096;
  explicit BranchAndBoundSolver(std::int64_t lagrangian_nodes = kDefaultLagrangianNodes)
      : lagrangian_nodes_(lagrangian_nodes) {}
  std::string_view name() const override { return "bnb"; }
  PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits& limits,
                        const SolveHints& hints) override;

 private:
  std::int64_t lagrangian_nodes_;
};

}  // namespace themis::arbiter
