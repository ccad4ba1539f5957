#pragma once
// Exact winner determination by depth-first branch and bound over bidders (each bidder: one of its
// rows, or none), written for the shape of Themis bids: few rows per bidder, GPU sets as bitsets.
//
// - Preprocessing: a row is dropped when another row of the same bidder uses a subset of its GPUs for
//   at least the same gain (dominance; never needed by an optimum).
// - Warm start: the caller's hint and a greedy packing, each improved by local search
//   (improve_packing); Lagrangian prices also drive a greedy.
// - Bound: Lagrangian relaxation of the "each GPU at most once" constraints with per-GPU prices λ
//   found by subgradient steps: Σ_{free g} λ_g + Σ_{remaining bidders} max(0, best unblocked
//   gain − λ(row)). Valid for any λ >= 0, so prices from a previous solve of the same problem (the N+1
//   solves of the partial allocation) are reused as they are.
// - Limits: node and time budget; then the best packing found, and the root bound as the proven bound.
#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {

class BranchAndBoundSolver final : public WinnerSolver {
 public:
  std::string_view name() const override { return "bnb"; }
  PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits& limits,
                        const SolveHints& hints) override;
};

}  // namespace themis::arbiter
