#pragma once
// The partial-allocation mechanism (Themis §3.3.1, Pseudocode 1 lines 6–8) on a packing problem:
// the proportional-fair optimum with every bidder, then for each winner i the optimum without i, and
//   c_i = ∏_{j≠i} 1/ρ_j(PF) / ∏_{j≠i} 1/ρ_j(PF without i) = exp(W_{-i}(PF) − W*_{-i}),
// computed in log space, where W_{-i}(PF) = W* − gain_i is the others' gain at the PF optimum.
// A bidder that wins nothing has c = 1 and pays nothing; a lone bidder has c = 1.
#include <vector>

#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {

struct AuctionLimits {
  double max_seconds = 0;               // for all N+1 solves together; <= 0: none
  std::int64_t max_nodes_per_solve = 0;  // <= 0: none
  // Each solve first tries small_search (small_search.h) up to this many nodes and calls the solver only
  // when it gives up; where it gave up on the PF solve, the solves without a winner go to the solver at once.
  // <= 0: the solver alone.
  std::int64_t small_search_nodes = 0;
  // The solves without each winner run on up to this many threads when the solver is reentrant, from the
  // point where the solves so far (the PF solve's, then those finished one by one) searched at least
  // `threads_from_nodes` nodes (for fewer, starting threads costs more than it saves); the outcome is the same
  // for any count (each solve starts from the PF solve's state; a start taken from a packing another solve ended
  // with, other_solves_start.h, moves its node count, not its optimum, and none is taken under a node cap).
  int threads = 1;
  std::int64_t threads_from_nodes = 500;
  // The solves without a winner are first checked for whether any packing without it can beat the PF packing less
  // it (displacement.h) where the PF solve searched at least this many nodes. On CLP the check cost about 1 ms an
  // auction and 0.2-0.4 ms a solve on the gang auctions at (50, 256), and the gang auctions at (20, 64), whose PF
  // solves search fewer, were slower with it than their searches alone (docs/performance.md, "Solves without a winner
  // that nothing can improve"); on the dense LP it costs less, and their PF solves stay under this count all the same
  // ("The displacement checks on the dense LP"). Negative: never.
  std::int64_t displacement_from_nodes = 500;
  // The solves without a winner that are to search start from the PF packing less the winner improved by the local
  // search with evictions (improve_packing) where the PF solve searched at least this many nodes or was left
  // unproven; for fewer (the gang auctions at (20, 64)) the searches cost less than that search (docs/performance.md,
  // "Improved starts for the searches"). Negative: wherever the small searches did not settle the PF solve.
  std::int64_t improved_starts_from_nodes = 500;
};

struct PartialAllocation {
  PackingSolution pf;             // the PF optimum with all bidders
  std::vector<double> c;          // per bidder, in (0, 1]
  std::vector<double> value_without;  // per bidder: W*_{-i} (W* for bidders that won nothing)
  double gap = 0;                 // the largest relative gap over all solves (0: all proven optimal)
  bool proven_optimal = true;     // every solve ran and proved its optimum (W* and every W*_{-i} exact)
  int solves = 0;
  int small_searches = 0;         // of the solves, those small_search finished
  int settled_without_search = 0; // of the solves without a winner, those the displacement check settled
  int threads = 1;                // the threads the solves without a winner ran on
  std::int64_t nodes = 0;         // over every solve, the nodes of the search that settled it
};

// Time budget: half for the PF solve, the rest shared evenly by the winners' solves. Winners whose
// turn comes after the budget is spent get W*_{-i} from a greedy packing (no solver call) and the gap
// says so. Rows of each bidder must be sorted by descending gain (make_packing_problem does this).
PartialAllocation partial_allocation(const PackingProblem& problem, WinnerSolver& solver,
                                     const AuctionLimits& limits);

}  // namespace themis::arbiter
