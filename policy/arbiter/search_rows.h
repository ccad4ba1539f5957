#pragma once
// The shape search's view of a problem's bidders (shape_solver.cc): each in the search's order, with the rows it
// may take, and each row's units per item. The search's collaborators (subproblem_bounds.h, usable_capacity.h)
// read them.
#include <vector>

#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

// A row as the shape search sees it: its gain and the units it takes of each item, in item order.
struct SearchRow {
  int source;  // index into PackingBidder::rows
  double gain;
  std::vector<ItemLoad> loads;
};

// A bidder at its position in the search's order, with the rows it may take.
struct SearchBidder {
  int index;  // into PackingProblem::bidders
  std::vector<SearchRow> rows;
};

}  // namespace themis::arbiter
