#include "policy/arbiter/partial_allocation.h"

#include <algorithm>
#include <cmath>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/greedy_packing.h"
#include "policy/arbiter/small_search.h"

namespace themis::arbiter {
namespace {

// One solve: the exact small search first (small_search.h), from the better of a greedy packing and
// `known` (a feasible packing without `excluded`, or null); the solver when the search gives up.
PackingSolution solve(const PackingProblem& problem, int excluded, const PackingChoice* known, WinnerSolver& solver,
                      const SolveLimits& limits, const SolveHints& hints, std::int64_t small_search_nodes,
                      PartialAllocation& out) {
  ++out.solves;
  if (small_search_nodes > 0) {
    PackingChoice start = greedy_packing(problem, excluded);
    if (known && packing_value(problem, *known) > packing_value(problem, start)) start = *known;
    if (auto small = small_search(problem, excluded, start, small_search_nodes)) {
      ++out.small_searches;
      return std::move(*small);
    }
  }
  return solver.solve(problem, excluded, limits, hints);
}

}  // namespace

PartialAllocation partial_allocation(const PackingProblem& problem, WinnerSolver& solver,
                                     const AuctionLimits& limits) {
  const Deadline deadline(limits.max_seconds);
  const auto n = problem.bidders.size();
  PartialAllocation out;
  out.c.assign(n, 1.0);

  std::vector<double> prices;
  std::unique_ptr<SolverMemory> memory;
  SolveLimits first{deadline.enabled() ? limits.max_seconds / 2 : 0, limits.max_nodes_per_solve};
  out.pf = solve(problem, -1, nullptr, solver, first, SolveHints{nullptr, &prices, &memory}, limits.small_search_nodes, out);
  out.gap = out.pf.gap();
  out.proven_optimal = out.pf.proven_optimal;
  const double total = out.pf.value;
  out.value_without.assign(n, total);

  std::vector<int> winners;
  for (std::size_t i = 0; i < n; ++i)
    if (out.pf.choice[i] >= 0) winners.push_back(static_cast<int>(i));
  for (std::size_t k = 0; k < winners.size(); ++k) {
    const auto i = static_cast<std::size_t>(winners[k]);
    const double gain_i = problem.bidders[i].rows[static_cast<std::size_t>(out.pf.choice[i])].gain;
    const double others_at_pf = total - gain_i;
    PackingChoice without_i = out.pf.choice;  // the PF packing minus i is feasible without i
    without_i[i] = -1;
    if (deadline.enabled() && deadline.passed()) {
      // Out of time: the best of the PF packing minus i and a greedy packing stands in for W*_{-i}
      // (a lower bound, so c_i is at most overstated). The gap is bounded by the PF solve's bound
      // (W*_{-i} <= W*: leaving a bidder out never helps) or, if lower, each bidder's best row.
      const double greedy = packing_value(problem, greedy_packing(problem, static_cast<int>(i)));
      const double best_without = std::max(greedy, others_at_pf);
      double trivial_bound = 0;
      for (std::size_t j = 0; j < n; ++j)
        if (j != i && !problem.bidders[j].rows.empty()) trivial_bound += problem.bidders[j].rows.front().gain;
      const double bound = std::min(trivial_bound, out.pf.bound);
      if (bound > best_without) out.gap = std::max(out.gap, (bound - best_without) / bound);
      out.value_without[i] = best_without;
      out.c[i] = std::min(1.0, std::exp(others_at_pf - best_without));
      out.proven_optimal = false;
      continue;
    }
    SolveLimits each{0, limits.max_nodes_per_solve};
    if (deadline.enabled())
      each.max_seconds = std::max(1e-6, deadline.remaining() / static_cast<double>(winners.size() - k));
    const PackingSolution solved = solve(problem, static_cast<int>(i), &without_i, solver, each,
                                         SolveHints{&without_i, &prices, &memory}, limits.small_search_nodes, out);
    out.proven_optimal = out.proven_optimal && solved.proven_optimal;
    const double best_without = std::max(solved.value, others_at_pf);
    if (!solved.proven_optimal) {  // W*_{-i} <= W* <= the PF bound, often tighter than the solve's own
      const double bound = std::min(solved.bound, out.pf.bound);
      if (bound > best_without) out.gap = std::max(out.gap, (bound - best_without) / bound);
    }
    out.value_without[i] = best_without;
    out.c[i] = std::min(1.0, std::exp(others_at_pf - best_without));
  }
  return out;
}

}  // namespace themis::arbiter
