#pragma once
// An upper bound on a packing problem's optimum from its LP relaxation tightened by rounds of Gomory and two-step MIR
// cuts (Cgl), for the PF solves a time budget leaves unproven: their searches report their root's bound, which a
// depth-first search under a budget does not raise, and on the elastic (50, 256) auctions those bounds lay up to 4.4%
// above packings the cuts bring to within 0.2-0.7% (docs/performance.md, "Cut bounds for the PF solves the budget
// stops").
//
// Every bound is computed again from the LP's row prices rather than read from the solver (for any prices of the right
// signs, Σ prices·right-hand sides + Σ the columns' positive reduced gains bounds the maximum), so the solver's
// tolerances can only loosen it. At the same prices the problem without a bidder loses that bidder's terms (its row's
// price, its columns' reduced gains), which bounds it too (bound_without, as RackBound::bound_without does). The bounds
// only report how far a packing may be from the optimum (the auction's gap, whether the PF solve counts as proven); no
// packing is chosen by them.
#include <atomic>
#include <limits>
#include <vector>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

struct CutBound {
  double bound = std::numeric_limits<double>::infinity();  // +inf where the LP was not solved
  std::vector<double> own;  // per bidder: its part of `bound` (empty where none)
  int cuts = 0;             // the cuts added
  static constexpr int kDefaultRounds = 10;

  double bound_without(int bidder) const;
};

// Solves the LP and adds up to `rounds` rounds of cuts while the deadline allows (the rounds stop at one that adds
// none); the bound is the lowest of those the rounds reached. `stop`, where given, ends it early once set: CLP stops at
// its next iteration, and no round starts after it (a round's cut generation runs to its end).
CutBound cut_bound(const PackingProblem& problem, const Deadline& deadline, int rounds = CutBound::kDefaultRounds,
                   const std::atomic<bool>* stop = nullptr);

}  // namespace themis::arbiter
