#include "policy/arbiter/cbc_solver.h"

#include <CbcModel.hpp>
#include <CoinMessageHandler.hpp>
#include <OsiClpSolverInterface.hpp>
#include <algorithm>
#include <cmath>

#include "policy/arbiter/coin_matrix.h"
#include "policy/arbiter/greedy_packing.h"

namespace themis::arbiter {

PackingSolution CbcSolver::solve(const PackingProblem& problem, int excluded, const SolveLimits& limits,
                                 const SolveHints& hints) {
  PackingSolution solution;
  solution.choice.assign(problem.bidders.size(), -1);

  const auto kept = [&](int b, int r) {
    return b != excluded && problem.bidders[static_cast<std::size_t>(b)].rows[static_cast<std::size_t>(r)].gain > 0;
  };
  OsiClpSolverInterface lp;
  lp.messageHandler()->setLogLevel(0);
  const std::vector<PackingColumn> columns = load_packing_lp(lp, problem, kept);

  PackingChoice start = greedy_packing(problem, excluded);
  if (hints.warm_start != nullptr && packing_feasible(problem, *hints.warm_start, excluded) &&
      packing_value(problem, *hints.warm_start) > packing_value(problem, start))
    start = *hints.warm_start;
  const double start_value = packing_value(problem, start);
  if (columns.empty()) {
    solution.proven_optimal = true;
    return solution;
  }
  const auto n = columns.size();

  CbcModel model(lp);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.solver()->messageHandler()->setLogLevel(0);
  // The default increment (1e-5) prunes every node that cannot beat the incumbent by that much, so a
  // packing better than the warm start by less is never found.
  model.setDblParam(CbcModel::CbcCutoffIncrement, kImprovementTolerance);
  if (limits.max_seconds > 0) {
    // CBC counts CPU seconds unless told otherwise; a starved process then overruns a wall-clock budget
    // by as much as it was starved (19 s for a 10 s budget under load, docs/performance.md).
    model.setUseElapsedTime(true);
    model.setMaximumSeconds(limits.max_seconds);
  }
  if (limits.max_nodes > 0) model.setMaximumNodes(static_cast<int>(std::min<std::int64_t>(limits.max_nodes, 1 << 30)));
  if (start_value > 0) {
    std::vector<double> values(n, 0.0);
    for (std::size_t c = 0; c < n; ++c)
      if (start[static_cast<std::size_t>(columns[c].bidder)] == columns[c].row) values[c] = 1.0;
    model.setBestSolution(values.data(), static_cast<int>(n), -start_value, true);
  }
  model.branchAndBound();

  PackingChoice found(problem.bidders.size(), -1);
  if (const double* values = model.bestSolution(); values != nullptr)
    for (std::size_t c = 0; c < n; ++c)
      if (values[c] > 0.5) found[static_cast<std::size_t>(columns[c].bidder)] = columns[c].row;
  if (!packing_feasible(problem, found, excluded) || packing_value(problem, found) < start_value) found = start;

  solution.choice = std::move(found);
  solution.value = packing_value(problem, solution.choice);
  solution.proven_optimal = model.isProvenOptimal();
  solution.nodes = model.getNodeCount();
  const double bound = -model.getBestPossibleObjValue();
  if (solution.proven_optimal) {
    solution.bound = solution.value;
  } else if (std::isfinite(bound)) {
    solution.bound = std::max(solution.value, bound);
  } else {  // no bound from CBC: every bidder's best row is one
    double trivial = 0;
    for (std::size_t b = 0; b < problem.bidders.size(); ++b) {
      if (static_cast<int>(b) == excluded) continue;
      double best = 0;
      for (const auto& row : problem.bidders[b].rows) best = std::max(best, row.gain);
      trivial += best;
    }
    solution.bound = std::max(solution.value, trivial);
  }
  return solution;
}

}  // namespace themis::arbiter
