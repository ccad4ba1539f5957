#pragma once
// Exact winner determination for shape problems (shape_problem.h): each bidder picks at most one row,
// every item (a topology group) within its capacity. Also solves concrete problems (unit items).
//
// Depth-first branch and bound over bidders (each: one of its rows that still fits, or none), children
// by reduced gain. Bound: the capacity constraints relaxed with per-item prices λ ≥ 0,
//   Σ_items λ_i·residual_i + Σ_{remaining bidders} max(0, max_{fitting rows} gain − Σ_i λ_i·units_i),
// which leaves each bidder a pick-one-row problem, so with the best λ it is the LP bound. λ comes from
// subgradient steps at the root (from the caller's prices when given, as in the N+1 solves), and a few
// more at every node the inherited prices do not prune, so the bound follows the residual capacities.
// Shapes are what make this bound tight: bundles of equal ρ that differ only by interchangeable GPUs
// are one row, so the relaxation can no longer split a bidder between them.
//
// Preprocessing drops rows of a bidder that another of its rows dominates (no more units of any item,
// at least the gain). Warm start: the caller's hint and greedy packings. Ties are kept at the first
// packing found: improvements must exceed kImprovementTolerance. At a node or time limit: the best
// packing and the root bound. Deterministic without a time budget.
#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {

class ShapeSolver final : public WinnerSolver {
 public:
  // Subgradient steps at each node the inherited prices do not prune (0: the root's prices throughout).
  static constexpr int kDefaultNodeSteps = 6;
  explicit ShapeSolver(int node_steps = kDefaultNodeSteps) : node_steps_(node_steps) {}
  std::string_view name() const override { return "shape"; }
  bool reentrant() const override { return true; }
  PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits& limits,
                        const SolveHints& hints) override;

 private:
  int node_steps_;
};

}  // namespace themis::arbiter
