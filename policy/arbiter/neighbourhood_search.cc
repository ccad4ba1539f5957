#include "policy/arbiter/neighbourhood_search.h"

#include <algorithm>

#include "policy/arbiter/shape_solver.h"
#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {

PackingChoice neighbourhood_search(const PackingProblem& problem, int excluded, PackingChoice choice,
                                   const Deadline& deadline, const NeighbourhoodLimits& limits) {
  const auto items = static_cast<std::size_t>(problem.item_count);
  if (problem.item_rack.size() != items || deadline.passed() || !packing_feasible(problem, choice, excluded))
    return choice;
  int racks = 0;
  for (int rack : problem.item_rack) racks = std::max(racks, rack + 1);
  if (racks < 2) return choice;
  const auto n = problem.bidders.size();
  const auto gain_of = [&](std::size_t b) {
    return choice[b] < 0 ? 0.0 : problem.bidders[b].rows[static_cast<std::size_t>(choice[b])].gain;
  };
  // The neighbourhoods' own searches: exact within their node cap, without the rack decomposition (a neighbourhood
  // spans two racks at most).
  ShapeSolver solver(ShapeSolver::kDefaultNodeSteps, ShapeSolver::kDefaultLpFromNodes, ShapeSolver::kDefaultLpWorth,
                     /*racks=*/false);
  std::vector<int> capacity(items);
  std::vector<std::size_t> freed;
  std::vector<std::pair<double, std::size_t>> idle;  // bidders holding nothing: their best row within the pair
  std::vector<std::vector<int>> origin;  // per freed bidder: its rows in the neighbourhood's problem -> its own
  PackingProblem hood;
  PackingChoice start;
  std::vector<int> units(items, 0);
  for (int pass = 0; pass < limits.max_passes; ++pass) {
    bool improved = false;
    // Pairs of racks by their distance in index, the nearest first: one pass pairs every rack with each other,
    // and a deadline that stops it early has still visited every rack.
    for (int distance = 1; distance < racks; ++distance) {
      for (int r1 = 0; r1 + distance < racks; ++r1) {
        if (deadline.passed()) return choice;
        const int r2 = r1 + distance;
        const auto in_hood = [&](int item) {
          const int rack = problem.item_rack[static_cast<std::size_t>(item)];
          return rack < 0 || rack == r1 || rack == r2;
        };
        for (std::size_t i = 0; i < items; ++i) capacity[i] = problem.capacity(static_cast<int>(i));
        freed.clear();
        idle.clear();
        double freed_value = 0;
        for (std::size_t b = 0; b < n; ++b) {
          if (static_cast<int>(b) == excluded) continue;
          const int row = choice[b];
          if (row < 0) {
            // A bidder holding nothing may join where one of its rows lies within the neighbourhood (limits.max_idle).
            double best = 0;
            for (const PackingRow& r : problem.bidders[b].rows)
              if (r.gain > best && std::all_of(r.items.begin(), r.items.end(), in_hood)) best = r.gain;
            if (best > 0) idle.push_back({best, b});
            continue;
          }
          const std::vector<int>& row_items = problem.bidders[b].rows[static_cast<std::size_t>(row)].items;
          if (std::any_of(row_items.begin(), row_items.end(), in_hood)) {
            freed.push_back(b);
            freed_value += gain_of(b);
          } else {
            for (int item : row_items) --capacity[static_cast<std::size_t>(item)];
          }
        }
        const auto kept = std::min(idle.size(), static_cast<std::size_t>(std::max(0, limits.max_idle)));
        const auto better = [](const auto& x, const auto& y) { return x.first > y.first || (x.first == y.first && x.second < y.second); };
        std::partial_sort(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(kept), idle.end(), better);
        for (std::size_t k = 0; k < kept; ++k) freed.push_back(idle[k].second);
        // The freed bidders' rows that fit what the others leave, each alone.
        hood.item_count = problem.item_count;
        hood.item_capacity = capacity;
        hood.item_rack.clear();
        hood.bidders.resize(freed.size());
        origin.resize(freed.size());
        start.assign(freed.size(), -1);
        for (std::size_t k = 0; k < freed.size(); ++k) {
          const PackingBidder& bidder = problem.bidders[freed[k]];
          hood.bidders[k].app = bidder.app;
          hood.bidders[k].rows.clear();
          origin[k].clear();
          for (std::size_t r = 0; r < bidder.rows.size(); ++r) {
            const PackingRow& row = bidder.rows[r];
            bool fits = true;
            for (int item : row.items) fits = ++units[static_cast<std::size_t>(item)] <= capacity[static_cast<std::size_t>(item)] && fits;
            for (int item : row.items) --units[static_cast<std::size_t>(item)];
            if (!fits) continue;
            if (static_cast<int>(r) == choice[freed[k]]) start[k] = static_cast<int>(hood.bidders[k].rows.size());
            hood.bidders[k].rows.push_back(row);
            origin[k].push_back(static_cast<int>(r));
          }
        }
        const PackingSolution found =
            solver.solve(hood, -1, SolveLimits{deadline.budget_left(), limits.max_nodes}, SolveHints{&start, nullptr, nullptr});
        if (!(found.value > freed_value + kImprovementTolerance)) continue;
        for (std::size_t k = 0; k < freed.size(); ++k) {
          const int row = found.choice[k];
          choice[freed[k]] = row < 0 ? -1 : origin[k][static_cast<std::size_t>(row)];
        }
        improved = true;
      }
    }
    if (!improved) break;
  }
  return choice;
}

}  // namespace themis::arbiter
