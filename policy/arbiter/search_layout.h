#pragma once
// What every shape search of one problem derives from the problem alike (shape_solver.cc): the bidders in the
// search's order with the rows they may take, those rows flattened for the hot loops, the items each position's
// bidders draw from, and the usable capacities' tables. None of it depends on the bidder a solve leaves out (that
// bidder keeps its place and takes nothing), so an auction's N+1 solves build it once and share it through their
// memory: at 200 bidders and 1,024 GPUs building it took 1-10 ms a solve, most of it the usable capacities' tables of
// about 4 MB (docs/performance.md, "Solves that start on time").
#include <memory>
#include <utility>
#include <vector>

#include "policy/arbiter/packing_problem.h"
#include "policy/arbiter/search_rows.h"
#include "policy/arbiter/usable_capacity.h"

namespace themis::arbiter {

struct SearchLayout {
  // A row in the hot loops: its gain and its loads' range in `loads`.
  struct FlatRow {
    double gain;
    int begin, end;
  };
  const PackingProblem* problem = nullptr;  // what it was built from
  std::vector<int> capacity;                // per item: its units
  // Every bidder with a row that fits the capacities, widest best row first, then the most at stake; each bidder's
  // rows by gain, those needing at least what a kept one needs for no more gain left out.
  std::vector<SearchBidder> bidders;
  std::vector<FlatRow> rows;                   // every bidder's rows, bidder after bidder
  std::vector<ItemLoad> loads;
  std::vector<std::pair<int, int>> row_ranges;  // per position: its rows in `rows`
  std::vector<std::vector<int>> items_from;     // per position: the items bidders [position, end) draw from, in order
  UsableCapacity usable;                        // for `bidders` on `capacity`
};

std::shared_ptr<const SearchLayout> make_search_layout(const PackingProblem& problem);

}  // namespace themis::arbiter
