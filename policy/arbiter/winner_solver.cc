#include "policy/arbiter/winner_solver.h"

#include "policy/arbiter/branch_and_bound_solver.h"
#include "policy/arbiter/cbc_solver.h"

namespace themis::arbiter {

std::string_view to_string(SolverKind kind) {
  switch (kind) {
    case SolverKind::kBranchAndBound: return "bnb";
    case SolverKind::kCbc: return "cbc";
  }
  return "unknown";
}

std::optional<SolverKind> parse_solver_kind(std::string_view text) {
  if (text == "bnb" || text == "branch-and-bound") return SolverKind::kBranchAndBound;
  if (text == "cbc") return SolverKind::kCbc;
  return std::nullopt;
}

std::unique_ptr<WinnerSolver> make_winner_solver(SolverKind kind) {
  if (kind == SolverKind::kCbc) return std::make_unique<CbcSolver>();
  return std::make_unique<BranchAndBoundSolver>();
}

}  // namespace themis::arbiter
