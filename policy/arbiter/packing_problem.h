#pragma once
// Winner determination as weighted set packing: each bidder picks at most one row, chosen rows are
// pairwise disjoint, maximise the total gain. With gain = log(ρ_no_new / ρ_row) this is
// argmax ∏ 1/ρ_i over bidders (a loser keeps ρ_no_new, gain 0).
//
// Items are positions in the offer (0 .. item_count − 1), not cluster GPU indices, so the sets stay
// dense. Only rows with gain > 0 are kept: a row that does not improve on "nothing" can never be
// needed by an optimum.
#include <cstdint>
#include <span>
#include <vector>

#include "core/bid.h"

namespace themis::arbiter {

struct PackingRow {
  int source_row = 0;       // index into the bid's rows
  double gain = 0;          // log(ρ_no_new / ρ_row) > 0
  std::vector<int> items;   // sorted offer positions; in a capacitated problem an item may repeat
                            // (one entry per unit the row uses)
};

struct PackingBidder {
  AppId app = 0;
  std::vector<PackingRow> rows;
};

struct PackingProblem {
  int item_count = 0;
  std::vector<PackingBidder> bidders;
  // Units of each item; empty: every item is one GPU, used by at most one row (the concrete problem).
  // Shape problems (shape_problem.h) make items topology groups with their offered GPU counts.
  std::vector<int> item_capacity;
  // Per item: the rack it lies in (0 .. racks − 1), -1 above the racks (shape problems, shape_problem.h); empty
  // when unknown. Only the rack decomposition reads it (rack_decomposition.h).
  std::vector<int> item_rack;
  bool capacitated() const { return !item_capacity.empty(); }
  int capacity(int item) const {
    return item_capacity.empty() ? 1 : item_capacity[static_cast<std::size_t>(item)];
  }
};

// A choice per bidder: a row index into PackingBidder::rows, or -1 for none.
using PackingChoice = std::vector<int>;

struct PackingSolution {
  PackingChoice choice;
  double value = 0;            // Σ gain of the chosen rows, summed in bidder order (packing_value)
  double bound = 0;            // proven upper bound on the optimum (== value when optimal)
  bool proven_optimal = false;
  std::int64_t nodes = 0;      // search nodes explored (solver-specific)
  // Per bidder, where the solver has them (empty: none): an upper bound on the optimum without that bidder as well,
  // at most `bound`. Leaving a bidder out drops its dual's share of the bound, so these can be tighter than `bound`
  // for the solves without a winner that a time budget skips or stops (partial_allocation.h).
  std::vector<double> bound_without;
  // Relative optimality gap (bound − value) / bound, 0 when proven optimal or the bound is 0.
  double gap() const;
};

// Builds the problem from validated bids over `offer`; rows of each bid beyond `max_rows` (taken in
// descending gain, ties by position in the bid) are left out.
PackingProblem make_packing_problem(const Offer& offer, std::span<const Bid> bids, int max_rows);

// Σ gain of `choice`; choice[excluded] must be -1 when excluded >= 0.
double packing_value(const PackingProblem& problem, const PackingChoice& choice);
// The Lagrangian bound of `problem` without `excluded` (-1: none) at item prices λ (negative ones read as 0),
// an upper bound on its optimum whatever the prices: Σ_items λ·capacity + Σ_{bidders but excluded}
// max(0, max_row gain − Σ_{its units} λ). +inf when the prices do not fit the problem.
double lagrangian_bound(const PackingProblem& problem, int excluded, const std::vector<double>& prices);
// lagrangian_bound(problem, i, prices) for every bidder i, in one pass over the rows: the bound with everybody less
// i's term (+inf each where the prices do not fit the problem).
std::vector<double> lagrangian_bounds_without(const PackingProblem& problem, const std::vector<double>& prices);
// A row's units of one item.
struct ItemLoad {
  int item;
  int units;
};
// A row's items with their units, in item order (PackingRow::items lists an item once per unit).
std::vector<ItemLoad> item_loads(const PackingRow& row);
// The same, appended to `out` (many rows' loads in one array).
void append_item_loads(const PackingRow& row, std::vector<ItemLoad>& out);

// Whether `choice` picks valid rows, within every item's capacity (pairwise disjoint when unit), and nothing for `excluded` (-1: none excluded).
bool packing_feasible(const PackingProblem& problem, const PackingChoice& choice, int excluded = -1);

}  // namespace themis::arbiter
