#pragma once
// Exact winner determination for shape problems (shape_problem.h): each bidder picks at most one row,
// every item (a topology group) within its capacity. Also solves concrete problems (unit items).
//
// Depth-first branch and bound over bidders, the widest best row first and ties by gain (each: one of
// its rows that still fits, or none), children by reduced gain. Bound: the capacity constraints relaxed
// with per-item prices λ ≥ 0,
//   Σ_items λ_i·residual_i + Σ_{remaining bidders} max(0, max_{fitting rows} gain − Σ_i λ_i·units_i),
// which leaves each bidder a pick-one-row problem, so with the best λ it is the LP bound. A residual counts
// only as much as the remaining bidders can take of it together (the largest total of their rows' units
// within it: 4 of a machine's 6 free GPUs to gangs of 4 and 8), which tightens that bound and the LP's. λ comes from
// subgradient steps at the root (from the caller's prices when given, as in the N+1 solves), and a few
// more at every node the inherited prices do not prune, so the bound follows the residual capacities (not where the
// rack table below bounds the nodes in the LP's place: there the nodes keep their parent's prices).
// Shapes are what make this bound tight: bundles of equal ρ that differ only by interchangeable GPUs
// are one row, so the relaxation can no longer split a bidder between them.
//
// A few steps at a node fall behind the best λ as the search goes deeper. A solve that reaches
// `lp_from_nodes` nodes, or half of its time budget (the solves without a winner: from their first node where the
// solve with everybody did), solves the LP relaxation itself (packing_lp.h, CLP's
// dual simplex from the basis of the last LP; the N+1 solves start from a copy of the PF solve's) at the
// root, for the bound it reports, and, where that LP closes much of the gap the steps leave, at every node
// the Lagrangian bound does not cut: CLP's item duals are priced by the same bound function, so the LP
// only proposes λ and never decides a cut by its tolerances. Its duals also settle children (a row's reduced gain
// under them) and their descendants (the nearest ancestor's duals are tried before a new LP solve, and stand for
// the node's own where the path since that ancestor took only what its LP solution took whole).
//
// At the same turn a hard solve bounds its problem by racks (rack_decomposition.h: the LP with every integrality inside
// a rack, by column generation). Where the master's solution rounds to a packing that meets that bound, the solve is
// settled at once; otherwise the rounded packing is a start, the search stops as soon as a packing meets the bound,
// and every node is also bounded by it at the decomposition's prices (RackTable); where that bound lies well below the
// LP's, the table takes the place of the LP solves at the nodes. The solves without a winner do the same from their
// first node, starting from the PF solve's patterns, where it was worth it in the PF solve.
//
// Subproblems are remembered across the N+1 solves (their bounds, keyed by the next bidder's position and the
// residual capacities). Items that every bidder still to choose treats alike (swapping them maps each bidder's rows
// onto its own rows of the same gain) give their residuals in one order in the key, so states that differ only by
// which of two such machines was taken are searched once.
//
// Preprocessing drops rows of a bidder that another of its rows dominates (no more units of any item,
// at least the gain). Warm start: the caller's hint and greedy packings. Ties are kept at the first
// packing found: improvements must exceed kImprovementTolerance. At a node or time limit: the best
// packing and the root bound (the lower of the steps' and the LP's). Deterministic without a time budget.
#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {

class ShapeSolver final : public WinnerSolver {
 public:
  // Subgradient steps at each node the inherited prices do not prune (0: the root's prices throughout).
  // Two: more nodes than with six, each cheaper (docs/performance.md, "Two subgradient steps at a node instead of six").
  static constexpr int kDefaultNodeSteps = 2;
  // Nodes of a solve after which it turns to LP bounds (0: never). 1,000 since the nodes' LP is the dense dual simplex
  // cut off at the incumbent; 5,000 before (docs/performance.md, "LP bounds from 1,000 nodes").
  static constexpr std::int64_t kDefaultLpFromNodes = 1000;
  // The share of the gap between the steps' root bound and the best packing the root's LP must close for
  // the nodes to get LP bounds too (-inf: always). Measured in docs/performance.md, "LP bounds at the
  // nodes": on the gang apps at 50 and 200 bidders the root LP mostly closes half of it or more, and LP
  // nodes prove what the steps do not; on the elastic apps at 20 bidders it closes little, and LP nodes
  // only slow the search.
  static constexpr double kDefaultLpWorth = 0.1;
  // `racks`: hard solves also bound their problem by racks (rack_decomposition.h).
  explicit ShapeSolver(int node_steps = kDefaultNodeSteps, std::int64_t lp_from_nodes = kDefaultLpFromNodes,
                       double lp_worth = kDefaultLpWorth, bool racks = true)
      : node_steps_(node_steps), lp_from_nodes_(lp_from_nodes), lp_worth_(lp_worth), racks_(racks) {}
  std::string_view name() const override { return "shape"; }
  bool reentrant() const override { return true; }
  PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits& limits,
                        const SolveHints& hints) override;

 private:
  int node_steps_;
  std::int64_t lp_from_nodes_;
  double lp_worth_;
  bool racks_;
};

}  // namespace themis::arbiter
