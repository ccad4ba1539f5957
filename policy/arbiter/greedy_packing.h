#pragma once
// A quick feasible packing to start exact searches from: rows taken in descending order of a few
// scores (gain, gain per GPU, gain per √GPU), each if its bidder is free and its GPUs are unused; the
// best of these orders wins. Cheap (a few sorts): also the stand-in when an auction's time is spent.
#include <array>
#include <span>
#include <vector>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

PackingChoice greedy_packing(const PackingProblem& problem, int excluded);

// A bidder's row, one step of an order in which rows are taken.
struct RowPick {
  int bidder;
  int row;
};
// The rows of `order` taken in turn, each where its bidder (not `excluded`) has none yet and it fits the capacities
// the rows taken before it left; `value` is their gains summed in that order. The greedy packings, the roundings of
// the rack master's solutions and of the root LP's are made so.
struct OrderedPacking {
  PackingChoice choice;
  double value = 0;
};
OrderedPacking pack_in_order(const PackingProblem& problem, int excluded, std::span<const RowPick> order);

// greedy_packing's orders of the rows, sorted once: packing(excluded) is greedy_packing(problem, excluded) without the
// sorts, for the stand-ins of the many solves without a winner an auction's budget may leave no time for.
class GreedyOrders {
 public:
  explicit GreedyOrders(const PackingProblem& problem);  // `problem` must outlive it
  PackingChoice packing(int excluded) const;

 private:
  const PackingProblem* problem_;
  std::array<std::vector<RowPick>, 3> orders_;
};

// Local search on a feasible choice (nothing for `excluded`): repeatedly moves a bidder to a better
// row, evicting the bidders whose GPUs it needs when that pays after they re-pick their best rows that
// still fit. Returns a feasible choice worth at least as much as `choice`; at most 4 passes, each
// O(rows · GPUs per row) plus the evictions. On a capacitated problem (shapes), where a unit has no one
// holder, the row's bidder evicts from each item it lacks the holders with the least gain until the row
// fits, with upgrade_packing before and after the passes. Stops between bidders once `deadline` has passed (at 200
// bidders the passes take 0.6-2 ms, the share of a solve without a winner near the end of a budget).
PackingChoice improve_packing(const PackingProblem& problem, int excluded, PackingChoice choice,
                              const Deadline& deadline = Deadline(0));

// Local search on a feasible choice of a capacitated or unit problem (nothing for `excluded`): each bidder in turn,
// those holding nothing too, moves to its best row that fits the capacities left once its own row is released, where
// that gains more than kImprovementTolerance; until no bidder moves (at most 32 passes). Returns a feasible choice worth
// at least as much as `choice` (`choice` itself where it is not feasible).
PackingChoice upgrade_packing(const PackingProblem& problem, int excluded, PackingChoice choice);

// Of `rows`, the one with the most gain above `floor` + `margin` (each later one must beat the best so far by
// `margin` too) that fits `left`, the units of each item not taken (restored before it returns); -1: none.
int best_row_that_fits(std::span<const PackingRow> rows, std::vector<int>& left, double floor, double margin);

}  // namespace themis::arbiter
