#pragma once
// Starts for an auction's solves without a winner from the packings its other solves without a winner ended with
// (docs/arbiter.md, "Partial allocation"). On the gang auctions at (50, 256) the optima of the solves without the
// different winners share a shape the PF packing lacks (one bidder on a wider row, the bidders around it moved), which
// each solve found again deep in its search. A packing P_j without winner j, less bidder i, with j back on its best row
// that fits, is a packing without i: the best of those by that value (counted without refilling the others, so that
// scanning a hundred of them costs less than one local search) is refilled and improved, and taken where it beats the
// solve's own start.
#include <optional>
#include <span>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

struct OtherSolve {
  int excluded = -1;                     // the winner it was without
  const PackingChoice* choice = nullptr;  // the packing it ended with (nothing for `excluded`)
};

// A feasible choice without `excluded` worth more than `floor` + kImprovementTolerance, made from one of `others` as
// above, or nothing. Its local search stops at `deadline` (improve_packing).
std::optional<PackingChoice> start_from_other_solves(const PackingProblem& problem, int excluded,
                                                     std::span<const OtherSolve> others, double floor,
                                                     const Deadline& deadline = Deadline(0));

}  // namespace themis::arbiter
