#pragma once
// One interface, three exact winner-determination solvers: our own branch and bound
// (branch_and_bound_solver.h), CBC (cbc_solver.h) and the shape solver (shape_solver.h, which also
// takes shape problems: shape_problem.h). Both stop at a node or time limit and then
// return the best packing found with a proven upper bound.
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

// Both solvers find every packing better than their incumbent by more than this in Σ gain
// (Σ log(1/ρ)); closer values are ties. CBC's default (cutoff increment 1e-5) would miss real
// improvements: bids a few ρ-ulps of 1e-6 apart are ordinary.
inline constexpr double kImprovementTolerance = 1e-9;

struct SolveLimits {
  double max_seconds = 0;        // <= 0: no time limit
  std::int64_t max_nodes = 0;    // <= 0: no node limit
};

enum class SolverKind { kBranchAndBound, kCbc, kShape };
std::string_view to_string(SolverKind kind);
// "bnb" / "branch-and-bound", "cbc" or "shape"; nullopt otherwise.
std::optional<SolverKind> parse_solver_kind(std::string_view text);
// The names parse_solver_kind accepts, for error messages.
inline constexpr std::string_view kSolverNames = "cbc, shape, bnb";
// The nodes (and layered states) the exact small searches (small_search.h) get before `kind` runs, where the
// settings name none: 2,000 before `shape`, whose own search is cheap; 20,000 before CBC and `bnb`, whose
// every call costs LP solves (measured in docs/performance.md, "The small searches' cap").
std::int64_t default_small_search_nodes(SolverKind kind);

// What a solver keeps of one problem's solves for its next solve of the same problem (each solver its
// own kind; shape_solver.h keeps bounds on subproblems).
class SolverMemory {
 public:
  virtual ~SolverMemory() = default;
  // A copy to start another solve from. It may leave what both hold in a part they share, read-only (a solver's
  // own business: nothing a solve reads changes), so it is not called while a solve uses this memory.
  virtual std::unique_ptr<SolverMemory> clone() const = 0;
};

// Optional help for a solve. Solving the same problem again without one bidder (the N+1 solves of the
// partial allocation) is much cheaper when the previous solve's results are passed along.
struct SolveHints {
  const PackingChoice* warm_start = nullptr;  // a feasible choice with nothing for the excluded bidder
  // Per-item prices for a Lagrangian bound: read as a start when the size matches item_count, and
  // overwritten with the best prices found. Solvers without such a bound ignore them.
  std::vector<double>* item_prices = nullptr;
  // The solver's memory of earlier solves of this same problem (empty before the first): read and
  // extended. Must not be passed with another problem. Solvers that keep nothing leave it alone.
  std::unique_ptr<SolverMemory>* memory = nullptr;
};

class WinnerSolver {
 public:
  virtual ~WinnerSolver() = default;
  virtual std::string_view name() const = 0;
  // Solves `problem` with bidder `excluded` left out (-1: nobody). The result's choice has
  // problem.bidders.size() entries and is always feasible.
  virtual PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits& limits,
                                const SolveHints& hints) = 0;
  // Whether solve() may run on several threads at once (it keeps no state of its own between calls).
  virtual bool reentrant() const { return false; }
};

std::unique_ptr<WinnerSolver> make_winner_solver(SolverKind kind);

}  // namespace themis::arbiter
