#pragma once
// Exact winner determination by plain depth-first search, for the auctions that are small: most rounds
// offer a few GPUs to a few bidders (the offer-bounded filter lets only as many bid as can use the offer),
// and there building and solving an integer program costs far more than enumerating. Each bidder, in
// order of its best gain, takes one of its rows that still fits (best gain first) or none; a branch is cut
// when its gain so far plus a bound on the later bidders cannot beat the incumbent by kImprovementTolerance.
// That bound is the smaller of their best rows that still fit, summed, and the best they can do with the
// number of units left (a knapsack over row sizes, tabled per solve). The incumbent starts at `start`, so
// ties keep it, as in the solvers.
//
// When the depth-first search has visited `max_nodes` nodes it hands over to layered_search with a budget of
// `max_nodes` states; when that gives up too it returns nullopt and the caller runs its full solver. What
// it returns is proven optimal; its `nodes` are the depth-first nodes plus the layered states. Works on
// concrete and capacitated (shape) problems alike.
#include <cstdint>
#include <optional>

#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

// `start`: a feasible choice with nothing for `excluded` (-1: nobody excluded).
std::optional<PackingSolution> small_search(const PackingProblem& problem, int excluded, const PackingChoice& start,
                                            std::int64_t max_nodes);

// Exact by layers: bidder after bidder, keeping one state (the best value) per multiset of taken units, so
// that permutations of equivalent bundles among earlier bidders collapse; a state that cannot beat the
// incumbent by the smaller of the later bidders' best rows and the knapsack on its free units is dropped.
// Gives up (nullopt) past `max_states` states, or when the taken counts do not fit in 64 bits.
std::optional<PackingSolution> layered_search(const PackingProblem& problem, int excluded, const PackingChoice& start,
                                              std::int64_t max_states);

}  // namespace themis::arbiter
