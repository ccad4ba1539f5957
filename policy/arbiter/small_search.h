#pragma once
// Exact winner determination by plain depth-first search, for the auctions that are small: most rounds
// offer a few GPUs to a few bidders (the offer-bounded filter lets only as many bid as can use the offer),
// and there building and solving an integer program costs far more than enumerating. Each bidder, in
// order of its best gain, takes one of its rows that still fits (best gain first) or none; a branch is cut
// when its gain so far plus every later bidder's best row cannot beat the incumbent by
// kImprovementTolerance. The incumbent starts at `start`, so ties keep it, as in the solvers.
//
// It gives up (nullopt) once it has visited `max_nodes` nodes, and the caller runs its full solver; what
// it returns is proven optimal. Works on concrete and capacitated (shape) problems alike.
#include <cstdint>
#include <optional>

#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

// `start`: a feasible choice with nothing for `excluded` (-1: nobody excluded).
std::optional<PackingSolution> small_search(const PackingProblem& problem, int excluded, const PackingChoice& start,
                                            std::int64_t max_nodes);

}  // namespace themis::arbiter
