#pragma once
// A large-neighbourhood search on a packing of a problem with racks (PackingProblem::item_rack): for each pair of
// racks in turn, the bidders whose rows touch either rack (or an item above the racks), and those holding nothing
// that have a row within them (the few with the best such rows), are freed, the others keep their rows, and the freed
// bidders' best packing within what the others leave is found by an exact search (ShapeSolver) under a node cap; a
// better one replaces theirs. Passes over the pairs repeat while one improves, until the deadline. Without one it can take long: at 200 bidders and 64
// racks, 13-51 s on a loaded machine (partial_allocation runs it only under a time budget).
//
// It is for the packings a depth-first search leaves where a time budget stops it: that search revisits only its
// last bidders' choices, so on the elastic (50, 256) auctions it ends about where it started, while re-solving a
// neighbourhood changes choices anywhere (docs/performance.md, "A neighbourhood search on the unproven PF packing").
#include <cstdint>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

struct NeighbourhoodLimits {
  std::int64_t max_nodes = 20000;  // per neighbourhood's search
  int max_passes = 4;              // over every pair of racks
  // Bidders holding nothing freed per neighbourhood, those with the best row within it first: at 200 bidders about a
  // hundred hold nothing and have a row in any two racks, and all of them made each neighbourhood's search as large as
  // the problem (one neighbourhood in the PF solve's share of a 2 s budget; with 8, 60-120).
  int max_idle = 8;
};

// Returns a feasible choice (nothing for `excluded`) worth at least `choice`; `choice` itself where it is not
// feasible, where the problem has fewer than two racks, or where the deadline has passed.
PackingChoice neighbourhood_search(const PackingProblem& problem, int excluded, PackingChoice choice,
                                   const Deadline& deadline, const NeighbourhoodLimits& limits = {});

}  // namespace themis::arbiter
