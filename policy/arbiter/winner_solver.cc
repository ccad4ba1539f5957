#include "policy/arbiter/winner_solver.h"

#include "policy/arbiter/branch_and_bound_solver.h"
#include "policy/arbiter/cbc_solver.h"
#include "policy/arbiter/shape_solver.h"

namespace themis::arbiter {

std::string_view to_string(SolverKind kind) {
  switch (kind) {
    case SolverKind::kBranchAndBound: return "bnb";
    case SolverKind::kCbc: return "cbc";
    case SolverKind::kShape: return "shape";
  }
  return "unknown";
}

std::optional<SolverKind> parse_solver_kind(std::string_view text) {
  if (text == "bnb" || text == "branch-and-bound") return SolverKind::kBranchAndBound;
  if (text == "cbc") return SolverKind::kCbc;
  if (text == "shape") return SolverKind::kShape;
  return std::nullopt;
}

std::int64_t default_small_search_nodes(SolverKind kind) { return kind == SolverKind::kShape ? 2000 : 20000; }

std::unique_ptr<WinnerSolver> make_winner_solver(SolverKind kind) {
  if (kind == SolverKind::kCbc) return std::make_unique<CbcSolver>();
  if (kind == SolverKind::kShape) return std::make_unique<ShapeSolver>();
  return std::make_unique<BranchAndBoundSolver>();
}

}  // namespace themis::arbiter
